// The port engine (src/simulation/port_engine.h) on hand-worked cases: one switch with three
// NPUs, links of 10 ps latency and a bandwidth at which one byte takes one picosecond, so a
// 100-byte hop takes 110 ps (the link busy for 110 ps under the tacos model, 100 ps under astra).
#include "../src/simulation/port_engine.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "tacos/topology/topology.h"

namespace tacos {
namespace {

using detail::PortEngine;

// 10^12 / 2^30 GB/s: 10^12 bytes per second, one byte per picosecond (exact in a double).
constexpr double kBytePerPs = 244140625.0 / 262144.0;
constexpr Time kLatency = 10;
constexpr Bytes kBytes = 100;

// NPUs 0, 1, 2 and switch 3, a port each way; `down2` is the bandwidth of 3 -> 2.
Topology star(double down2 = kBytePerPs) {
  std::vector<Link> links;
  for (DeviceId n = 0; n < 3; ++n) {
    links.push_back({n, 3, kBytePerPs, kLatency});
    links.push_back({3, n, n == 2 ? down2 : kBytePerPs, kLatency});
  }
  return Topology(3, 1, std::move(links), "star");
}

// Recorder's event kind that readies message `id`.
constexpr std::uint32_t kReady = PortEngine::kFirstCallerKind + 5;

// Records what the engine reports.
struct Recorder final : PortEngine::Client {
  std::vector<std::pair<std::uint32_t, Time>> starts, arrivals;
  std::vector<std::uint32_t> events;
  void started(PortEngine&, std::uint32_t msg, Time now) override { starts.push_back({msg, now}); }
  void arrived(PortEngine&, std::uint32_t msg, Time now) override {
    arrivals.push_back({msg, now});
  }
  void event(PortEngine& engine, std::uint32_t kind, std::uint32_t id, Time now) override {
    events.push_back(id);
    if (kind == kReady) engine.ready(id, now);
  }
};

// The route NPU a -> switch -> NPU b.
struct Routes {
  explicit Routes(const Topology& topology) {
    for (DeviceId a = 0; a < 3; ++a)
      for (DeviceId b = 0; b < 3; ++b)
        if (a != b) links[a][b] = {topology.find_link(a, 3), topology.find_link(3, b)};
  }
  std::span<const LinkId> operator()(DeviceId a, DeviceId b) const { return links[a][b]; }
  std::vector<LinkId> links[3][3];
};

PortEngine::Options options(LinkModel model) {
  PortEngine::Options o;
  o.model = model;
  o.clock = "test";
  return o;
}

TEST(PortEngine, SwitchPortServesByArrivalThenSourceStoreAndForward) {
  const Topology topology = star();
  const Routes route(topology);
  for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra}) {
    Recorder client;
    PortEngine engine(topology, options(model), 2, client);
    // Message 0 comes from NPU 1, message 1 from NPU 0: both reach the switch at 110 ps and
    // the port 3 -> 2 serves NPU 0's first, whatever the message numbers.
    engine.set_message(0, route(1, 2), kBytes, 0);
    engine.set_message(1, route(0, 2), kBytes, 0);
    engine.send(0, 0);
    engine.send(1, 0);
    engine.run();
    EXPECT_EQ(engine.start(0), 0);
    EXPECT_EQ(engine.start(1), 0);
    // Store-and-forward: the first leaves the switch at 110 and arrives at 220; the port is free
    // at 220 (tacos: busy for latency + bytes) or 210 (astra: busy for the bytes only).
    EXPECT_EQ(engine.end(1), 220);
    EXPECT_EQ(engine.end(0), model == LinkModel::kTacos ? 330 : 320);
    EXPECT_EQ(engine.hops(), 4);
    const LinkId down = topology.find_link(3, 2);
    EXPECT_EQ(engine.link_busy_ps()[down], model == LinkModel::kTacos ? 220 : 200);
    ASSERT_EQ(client.arrivals.size(), 2u);
    EXPECT_EQ(client.arrivals[0].first, 1u);
  }
}

TEST(PortEngine, NpuPortIsAFifoInSendOrder) {
  const Topology topology = star();
  const Routes route(topology);
  for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra}) {
    Recorder client;
    PortEngine engine(topology, options(model), 2, client);
    engine.set_message(0, route(0, 2), kBytes, 0);
    engine.set_message(1, route(0, 1), kBytes, 0);
    engine.send(0, 0);
    engine.send(1, 0);  // waits for 0 -> 3 although NPU 1 sorts first at the switch
    engine.run();
    const Time second = model == LinkModel::kTacos ? 110 : 100;
    EXPECT_EQ(engine.start(0), 0);
    EXPECT_EQ(engine.end(0), 220);
    EXPECT_EQ(engine.start(1), second);
    EXPECT_EQ(engine.end(1), second + 220);
    ASSERT_EQ(client.starts.size(), 2u);
    EXPECT_EQ(client.starts[1], std::make_pair(1u, second));
  }
}

TEST(PortEngine, QueuedHeadWaitsUntilReady) {
  const Topology topology = star();
  const Routes route(topology);
  Recorder client;
  PortEngine engine(topology, options(LinkModel::kTacos), 2, client);
  engine.set_message(0, route(0, 1), kBytes, 0);
  engine.set_message(1, route(0, 2), kBytes, 0);
  // The simulator's queues: the order is fixed in advance and the head blocks the link.
  engine.enqueue(0, false);
  engine.enqueue(1, true);
  for (LinkId l = 0; l < topology.num_links(); ++l) engine.try_start(l, 0);
  engine.post(50, kReady, 0);
  engine.run();
  EXPECT_EQ(engine.start(0), 50);
  EXPECT_EQ(engine.end(0), 270);
  EXPECT_EQ(engine.start(1), 160);
  EXPECT_EQ(engine.end(1), 380);
}

TEST(PortEngine, ReducingSwitchMessageJoinsThePortQueueWhenReady) {
  const Topology topology = star();
  const Routes route(topology);
  const std::vector<LinkId> from_switch{topology.find_link(3, 2)};
  Recorder client;
  PortEngine engine(topology, options(LinkModel::kTacos), 2, client);
  engine.set_message(0, route(0, 2), kBytes, 0);
  engine.set_message(1, from_switch, kBytes, 0);  // the switch's own message, never enqueued
  engine.send(0, 0);
  engine.post(110, kReady, 1);  // ready as message 0 reaches the switch
  engine.run();
  // Both wait for 3 -> 2 at 110 ps; the relayed message from NPU 0 sorts before the switch's.
  EXPECT_EQ(engine.end(0), 220);
  EXPECT_EQ(engine.start(1), 220);
  EXPECT_EQ(engine.end(1), 330);
  EXPECT_EQ(engine.started(), 2u);
}

TEST(PortEngine, MulticastCrossesTheEntryLinkOnceAndFansOutAtTheSwitch) {
  const Topology topology = star();
  const Routes route(topology);
  Recorder client;
  PortEngine engine(topology, options(LinkModel::kTacos), 3, client);
  engine.set_message(0, route(0, 1), kBytes, 0);
  engine.set_message(1, route(0, 2), kBytes, 0);
  engine.set_message(2, route(1, 2), kBytes, 0);
  engine.add_member(0, 1);
  engine.send(0, 0);  // the group: 0 -> {1, 2}
  engine.send(2, 0);
  engine.run();
  EXPECT_EQ(engine.started(), 3u);
  EXPECT_EQ(engine.start(1), 0);
  EXPECT_EQ(engine.end(0), 220);
  // At the switch at 110 the copy to NPU 2 meets message 2 (from NPU 1): source 0 goes first.
  EXPECT_EQ(engine.end(1), 220);
  EXPECT_EQ(engine.end(2), 330);
  EXPECT_EQ(engine.link_busy_ps()[topology.find_link(0, 3)], 110);
  EXPECT_EQ(engine.hops(), 5);          // 0 -> 3 once, 3 -> 1, 3 -> 2 twice, 1 -> 3
  ASSERT_EQ(client.starts.size(), 2u);  // the leader stands for its group
}

TEST(PortEngine, CongestionUnawareTakesTheWholeRouteWithoutQueueing) {
  const Topology topology = star(kBytePerPs / 2);  // 3 -> 2 at half the bandwidth
  const Routes route(topology);
  PortEngine::Options o = options(LinkModel::kAstra);
  o.congestion = false;
  Recorder client;
  PortEngine engine(topology, std::move(o), 3, client);
  engine.set_message(0, route(0, 2), kBytes, 0);
  engine.set_message(1, route(1, 2), kBytes, 0);
  engine.set_message(2, route(0, 1), kBytes, 0);
  for (std::uint32_t m = 0; m < 3; ++m) engine.send(m, 0);
  engine.run();
  // Both latencies, the bytes once at the narrowest hop (200 ps at half bandwidth); no message
  // waits for another on 3 -> 2 or 0 -> 3.
  EXPECT_EQ(engine.end(0), 220);
  EXPECT_EQ(engine.end(1), 220);
  EXPECT_EQ(engine.end(2), 120);
  EXPECT_EQ(engine.hops(), 6);
}

TEST(PortEngine, EventsAtOneInstantByPriorityThenIdOrPostingOrder) {
  const Topology topology = star();
  constexpr std::uint32_t kMine = PortEngine::kFirstCallerKind;
  for (bool by_id : {false, true}) {
    PortEngine::Options o = options(LinkModel::kTacos);
    o.priority.assign(PortEngine::kFirstCallerKind + 2, 0);
    o.priority[kMine] = 1;
    o.ties_by_id = by_id;
    Recorder client;
    PortEngine engine(topology, std::move(o), 0, client);
    engine.post(5, kMine, 7);
    engine.post(5, kMine, 3);
    engine.post(5, kMine + 1, 9);  // priority 0: first
    engine.post(4, kMine, 8);
    engine.run();
    EXPECT_EQ(client.events, by_id ? std::vector<std::uint32_t>({8, 9, 3, 7})
                                   : std::vector<std::uint32_t>({8, 9, 7, 3}));
  }
}

TEST(PortEngine, StartAtEventWaitsForEarlierPriorities) {
  const Topology topology = star();
  const Routes route(topology);
  constexpr std::uint32_t kMine = PortEngine::kFirstCallerKind;
  PortEngine::Options o = options(LinkModel::kTacos);
  o.priority = {0, 1, 3, 4, 4, 3, 2};  // the MSCCL replay's: its steps (2) before starts (3)
  o.start_at_event = true;
  struct Client final : PortEngine::Client {
    Time seen = 0;
    void started(PortEngine&, std::uint32_t, Time) override {}
    void arrived(PortEngine&, std::uint32_t, Time) override {}
    void event(PortEngine& engine, std::uint32_t, std::uint32_t, Time) override {
      seen = engine.start(0);
    }
  } client;
  PortEngine engine(topology, std::move(o), 1, client);
  engine.set_message(0, route(0, 1), kBytes, 0);
  engine.send(0, 0);
  engine.post(0, kMine, 0);
  engine.run();
  EXPECT_EQ(client.seen, -1);  // the step at 0 ran before the message started at 0
  EXPECT_EQ(engine.start(0), 0);
  EXPECT_EQ(engine.end(0), 220);
}

}  // namespace
}  // namespace tacos
