// simulate: hand-worked times per link model, latency once per message, reductions wait for
// their partial sums, deadlocks, and the key property: an as-early-as-possible schedule is
// reproduced exactly.
#include "tacos/simulation/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/algorithm/verify.h"
#include "tacos/collective/collective.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/topology/topology.h"

namespace tacos {
namespace {

constexpr Time kLat = 500000;
constexpr Time kSer = 4882813;       // 262144 B at 50 GB/s
constexpr Time kLink = kLat + kSer;  // 5382813
constexpr Time kSer2 = 2441407;      // 131072 B at 50 GB/s
constexpr Time kLink2 = kLat + kSer2;

Topology uniring(int n, double gbps = 50, Time latency = kLat) {
  std::vector<Link> links;
  for (int i = 0; i < n; ++i) links.push_back(Link{i, (i + 1) % n, gbps, latency});
  return Topology(n, 0, links);
}

Algorithm ring_all_gather() {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  for (int s = 0; s < 3; ++s)
    for (int i = 0; i < 4; ++i)
      a.add_transfer(i, (i + 1) % 4, s * kLink, (s + 1) * kLink, (i - s + 4) % 4);
  return a;
}

// K = 2: message m (0..5) on link i -> i+1 carries piece m % 2 of NPU i - m / 2.
Algorithm ring_k2(LinkModel model) {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 2));
  for (int m = 0; m < 6; ++m)
    for (int i = 0; i < 4; ++i) {
      const Time start = model == LinkModel::kTacos ? m * kLink2 : m * kSer2;
      a.add_transfer(i, (i + 1) % 4, start, start + kLink2, ((i - m / 2 + 4) % 4) * 2 + m % 2);
    }
  return a;
}

void expect_reproduces(const Algorithm& a, const SimulationResult& r) {
  ASSERT_EQ(r.start.size(), a.transfers().size());
  Time last = 0;
  for (std::size_t i = 0; i < a.transfers().size(); ++i) {
    EXPECT_EQ(r.start[i], a.transfers()[i].start) << "transfer " << i;
    EXPECT_EQ(r.end[i], a.transfers()[i].end) << "transfer " << i;
    last = std::max(last, a.transfers()[i].end);
  }
  EXPECT_EQ(r.collective_time, last);
}

TEST(Simulator, RingAllGatherBothModels) {
  const Algorithm a = ring_all_gather();
  const SimulationResult tacos = simulate(a, uniring(4), LinkModel::kTacos);
  EXPECT_EQ(tacos.collective_time, 3 * kLink);
  expect_reproduces(a, tacos);
  EXPECT_EQ(tacos.link_busy_ps, std::vector<Time>(4, 3 * kLink));
  // With K = 1 every step waits for the previous arrival: same times, less link occupancy.
  const SimulationResult astra = simulate(a, uniring(4), LinkModel::kAstra);
  EXPECT_EQ(astra.collective_time, 3 * kLink);
  expect_reproduces(a, astra);
  EXPECT_EQ(astra.link_busy_ps, std::vector<Time>(4, 3 * kSer));
}

TEST(Simulator, AstraPipelinesMessages) {
  // Under tacos each of the 6 messages on a link occupies it for latency + serialization; under
  // astra the next one starts after the serialization (the piece it carries arrived by then).
  const SimulationResult tacos =
      simulate(ring_k2(LinkModel::kTacos), uniring(4), LinkModel::kTacos);
  EXPECT_EQ(tacos.collective_time, 6 * kLink2);
  EXPECT_EQ(tacos.collective_time, 17648442);
  expect_reproduces(ring_k2(LinkModel::kTacos), tacos);
  const SimulationResult astra =
      simulate(ring_k2(LinkModel::kTacos), uniring(4), LinkModel::kAstra);
  EXPECT_EQ(astra.collective_time, 6 * kSer2 + kLat);
  EXPECT_EQ(astra.collective_time, 15148442);
  expect_reproduces(ring_k2(LinkModel::kAstra), astra);
  EXPECT_EQ(astra.link_busy_ps, std::vector<Time>(4, 6 * kSer2));
}

TEST(Simulator, MultiChunkMessagePaysLatencyOnce) {
  // Gather to NPU 3 along the ring: 0 -> 1 carries chunk 0, 1 -> 2 chunks {0, 1},
  // 2 -> 3 chunks {0, 1, 2}; recorded times are all 0 (ignored).
  Algorithm a(Collective::make(CollectiveKind::kGather, 4, 1 << 20, 1, {}, 3));
  const std::vector<ChunkId> two = {0, 1}, three = {0, 1, 2};
  a.add_transfer(0, 1, 0, 0, 0);
  a.add_transfer(1, 2, 0, 0, two);
  a.add_transfer(2, 3, 0, 0, three);
  const SimulationResult r = simulate(a, uniring(4), LinkModel::kTacos);
  EXPECT_EQ(r.start, (std::vector<Time>{0, 5382813, 15648438}));
  EXPECT_EQ(r.end, (std::vector<Time>{5382813, 15648438, 30796876}));  // + 0.5us + 9765625,
  EXPECT_EQ(r.collective_time, 30796876);                              // + 0.5us + 14648438
}

TEST(Simulator, IgnoresRecordedTimesButKeepsLinkOrder) {
  // Recorded times all zero: the order on each link is then the index order, which is the
  // ring's step order, so the schedule comes out as before.
  Algorithm zero(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  for (int s = 0; s < 3; ++s)
    for (int i = 0; i < 4; ++i) zero.add_transfer(i, (i + 1) % 4, 0, 0, (i - s + 4) % 4);
  const SimulationResult r = simulate(zero, uniring(4), LinkModel::kTacos);
  expect_reproduces(ring_all_gather(), r);

  // On one link, recorded start order beats index order: transfer 1 (start 0) goes first.
  Algorithm b(Collective::make(CollectiveKind::kBroadcast, 4, 262144, 2, {}, 0));
  b.add_transfer(0, 1, 100, 200, 1);
  b.add_transfer(0, 1, 0, 100, 0);
  const SimulationResult rb = simulate(b, uniring(4), LinkModel::kTacos);
  EXPECT_EQ(rb.start, (std::vector<Time>{kLink2, 0}));  // Broadcast chunk = 262144 / 2 B
  EXPECT_EQ(rb.end, (std::vector<Time>{2 * kLink2, kLink2}));
}

TEST(Simulator, SourcesHoldTheirChunksFromTheStart) {
  // Copy collective: a (useless) copy of chunk 0 back to its source NPU 0 does not delay NPU 0's
  // later send of chunk 0, which leaves as soon as link 0 -> 1 is free.
  Algorithm a = ring_all_gather();
  a.add_transfer(3, 0, 3 * kLink, 4 * kLink, 0);
  a.add_transfer(0, 1, 4 * kLink, 5 * kLink, 0);
  const SimulationResult r = simulate(a, uniring(4), LinkModel::kTacos);
  EXPECT_EQ(r.start[13], 3 * kLink);
  EXPECT_EQ(r.collective_time, 4 * kLink);
}

TEST(Simulator, EmptyAlgorithm) {
  const Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  const SimulationResult r = simulate(a, uniring(4), LinkModel::kTacos);
  EXPECT_EQ(r.collective_time, 0);
  EXPECT_EQ(r.link_busy_ps, std::vector<Time>(4, 0));
  EXPECT_TRUE(r.start.empty());
}

TEST(Simulator, DeadlockThroughLinkOrder) {
  // 0 <-> 1. Link 0 -> 1 runs A (chunk 1) before B (chunk 0); link 1 -> 0 runs C (chunk 0)
  // before D (chunk 1). A needs chunk 1 at NPU 0 (from D, behind C); C needs chunk 0 at NPU 1
  // (from B, behind A).
  const Topology topo(2, 0, {Link{0, 1, 50, kLat}, Link{1, 0, 50, kLat}});
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 2, 1 << 20, 1));
  a.add_transfer(0, 1, 0, 1, 1);  // A
  a.add_transfer(0, 1, 1, 2, 0);  // B
  a.add_transfer(1, 0, 0, 1, 0);  // C
  a.add_transfer(1, 0, 1, 2, 1);  // D
  try {
    simulate(a, topo, LinkModel::kTacos);
    FAIL() << "expected a deadlock";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "simulate: transfer 0 (0 -> 1, chunk 1) never starts: it waits for chunk 1 at NPU "
              "0, but the transfers that deliver it (e.g. transfer 3 (1 -> 0, chunk 1)) never run "
              "(deadlock: a dependency cycle through the per-link order of recorded starts) (4 of "
              "4 transfers never start)");
  }
}

TEST(Simulator, ChunkNeverDelivered) {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  a.add_transfer(0, 1, 0, kLink, 0);
  a.add_transfer(1, 2, kLink, 2 * kLink, 3);
  try {
    simulate(a, uniring(4), LinkModel::kTacos);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "simulate: transfer 1 (1 -> 2, chunk 3) never starts: chunk 3 is not at NPU 1 at "
              "the start and no transfer delivers it there (1 of 2 transfers never start)");
  }
}

TEST(Simulator, BadTransfersThrow) {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  a.add_transfer(0, 2, 0, kLink, 0);
  EXPECT_THROW(simulate(a, uniring(4), LinkModel::kTacos), Error);
  Algorithm b(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  b.add_transfer(0, 1, 0, kLink, 9);
  EXPECT_THROW(simulate(b, uniring(4), LinkModel::kTacos), Error);
  EXPECT_THROW(simulate(ring_all_gather(), uniring(5), LinkModel::kTacos), Error);
}

TEST(Simulator, ReduceWaitsForEveryRecordedPartialSum) {
  // Reduce to NPU 0 along the line 3 -> 2 -> 1 -> 0: each NPU sends its partial sum only after
  // the partial sums recorded to reach it before its send have arrived.
  const Topology topo(
      4, 0,
      {Link{3, 2, 50, kLat}, Link{2, 1, 50, kLat}, Link{1, 0, 50, kLat}, Link{3, 1, 50, 3 * kLat}});
  Algorithm a(Collective::make(CollectiveKind::kReduce, 4, 262144, 1, {}, 0));
  a.add_transfer(3, 2, 0, kLink, 0, true);
  a.add_transfer(2, 1, kLink, 2 * kLink, 0, true);
  a.add_transfer(1, 0, 2 * kLink, 3 * kLink, 0, true);
  const SimulationResult r = simulate(a, topo, LinkModel::kTacos);
  expect_reproduces(a, r);
  // With a slower 2 -> 1 the send from 1 waits for it.
  const Topology slow(
      4, 0,
      {Link{3, 2, 50, kLat}, Link{2, 1, 50, 2 * kLat}, Link{1, 0, 50, kLat}, Link{3, 1, 50, kLat}});
  const SimulationResult rs = simulate(a, slow, LinkModel::kTacos);
  EXPECT_EQ(rs.start[2], 2 * kLink + kLat);
  EXPECT_EQ(rs.collective_time, 3 * kLink + kLat);
  // As copies, NPU 1 forwards the copy recorded to reach it first: it waits for that too.
  Algorithm copies(Collective::make(CollectiveKind::kReduce, 4, 262144, 1, {}, 0));
  copies.add_transfer(3, 2, 0, kLink, 0);
  copies.add_transfer(2, 1, kLink, 2 * kLink, 0);
  copies.add_transfer(1, 0, 2 * kLink, 3 * kLink, 0);
  EXPECT_EQ(simulate(copies, slow, LinkModel::kTacos).start[2], 2 * kLink + kLat);

  // A reduce transfer recorded to arrive after the send does not hold it back.
  Algorithm late(Collective::make(CollectiveKind::kReduce, 4, 262144, 1, {}, 0));
  late.add_transfer(3, 1, 0, 10 * kLink, 0, true);  // recorded end after 1's send
  late.add_transfer(1, 0, 0, kLink, 0, true);
  EXPECT_EQ(simulate(late, topo, LinkModel::kTacos).start[1], 0);
}

TEST(Simulator, DeadlockWaitingForPartialSums) {
  // Z needs W's partial sum (recorded end 0 <= Z's start), W waits behind V on link 2 -> 1, V
  // needs R's partial sum of chunk 1 and R needs Z's of chunk 0. (W's recorded end before its
  // start is what makes the cycle possible.)
  const Topology topo(3, 0, {Link{1, 0, 50, kLat}, Link{0, 2, 50, kLat}, Link{2, 1, 50, kLat}});
  Algorithm a(Collective::make(CollectiveKind::kReduce, 3, 1 << 20, 2, {}, 0));
  const std::vector<ChunkId> both = {0, 1};
  a.add_transfer(1, 0, 0, 1, 0, true);     // Z
  a.add_transfer(0, 2, 1, 2, both, true);  // R
  a.add_transfer(2, 1, 2, 3, 1, true);     // V
  a.add_transfer(2, 1, 5, 0, 0, true);     // W
  try {
    simulate(a, topo, LinkModel::kTacos);
    FAIL() << "expected a deadlock";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "simulate: transfer 0 (1 -> 0, chunk 0) never starts: it waits for the partial sum "
              "of chunk 0 recorded to reach NPU 1 before it (1), but transfer 3 (2 -> 1, chunk 0) "
              "never runs (deadlock: a dependency cycle through the per-link order of recorded "
              "starts) (4 of 4 transfers never start)");
  }
}

TEST(Simulator, AllReduceCopyAfterReductionWaits) {
  // All-Reduce on 0 <-> 1 with K = 1: chunk 0 is reduced at NPU 1, then copied back to 0;
  // chunk 1 is reduced at 0, then copied to 1. A copy leaves only once the reduction is done.
  const Topology topo(2, 0, {Link{0, 1, 50, kLat}, Link{1, 0, 50, kLat}});
  Algorithm a(Collective::make(CollectiveKind::kAllReduce, 2, 1 << 20, 1));
  const Time t = kLat + serialization_time(524288, 50);
  a.add_transfer(0, 1, 0, t, 0, true);
  a.add_transfer(1, 0, 0, t, 1, true);
  a.add_transfer(1, 0, t, 2 * t, 0);
  a.add_transfer(0, 1, t, 2 * t, 1);
  expect_reproduces(a, simulate(a, topo, LinkModel::kTacos));
  const SimulationResult astra = simulate(a, topo, LinkModel::kAstra);
  expect_reproduces(a, astra);  // the copies wait for the reductions, not for the link
}

TEST(Simulator, AllReduceForwardWaitsForTheFinishedCopy) {
  // All-Reduce on the line 0 <-> 1 <-> 2; chunk 0 is reduced towards NPU 0 (2 -> 1 -> 0), then
  // copied back out (0 -> 1 -> 2). NPU 1 forwards the finished chunk 0 to 2 only after it came
  // back from 0, not as soon as its own partial sum is complete.
  const Topology topo(
      3, 0,
      {Link{0, 1, 50, kLat}, Link{1, 0, 50, kLat}, Link{1, 2, 50, kLat}, Link{2, 1, 50, kLat}});
  Algorithm a(Collective::make(CollectiveKind::kAllReduce, 3, 3 * 262144, 1));
  a.add_transfer(2, 1, 0, kLink, 0, true);
  a.add_transfer(1, 0, kLink, 2 * kLink, 0, true);
  a.add_transfer(0, 1, 2 * kLink, 3 * kLink, 0);
  a.add_transfer(1, 2, 3 * kLink, 4 * kLink, 0);
  for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra})
    expect_reproduces(a, simulate(a, topo, model));
}

// Random topologies and collectives: flood chunks over random links, each (device, chunk)
// delivered once, with times as early as possible under the model; the simulator must give the
// recorded times back exactly and the verifier must accept the schedule.
TEST(Simulator, AsEarlyAsPossibleIsReproduced) {
  std::mt19937_64 rng(7);
  const double bandwidths[] = {25, 50, 100, 37.5, 12.5};
  const CollectiveKind kinds[] = {CollectiveKind::kAllGather, CollectiveKind::kBroadcast,
                                  CollectiveKind::kAllToAll, CollectiveKind::kScatter,
                                  CollectiveKind::kGather};
  for (int trial = 0; trial < 40; ++trial) {
    const LinkModel model = trial % 2 ? LinkModel::kAstra : LinkModel::kTacos;
    const int n = 3 + static_cast<int>(rng() % 8);
    std::vector<Link> links;
    auto add = [&](int u, int v) {
      for (const Link& l : links)
        if (l.src == u && l.dst == v) return;
      links.push_back(Link{u, v, bandwidths[rng() % 5], static_cast<Time>(rng() % 3'000'000)});
    };
    for (int i = 0; i < n; ++i) add(i, (i + 1) % n);  // strongly connected
    for (int e = 0; e < n; ++e) {
      const int u = static_cast<int>(rng() % n), v = static_cast<int>(rng() % n);
      if (u != v) add(u, v);
    }
    const Topology topo(n, 0, links);
    const CollectiveKind kind = kinds[trial % 5];
    const Collective collective =
        Collective::make(kind, n, Bytes{1} << 22, 1 + static_cast<int>(rng() % 3), {},
                         static_cast<NpuId>(rng() % n));
    Algorithm a(collective);
    a.link_model = model;
    const int chunks = collective.num_chunks();
    constexpr Time kNone = -1;
    std::vector<Time> arrival(static_cast<std::size_t>(n) * chunks, kNone);  // small test
    for (ChunkId c = 0; c < chunks; ++c)
      for (NpuId s : collective.sources(c)) arrival[s * chunks + c] = 0;
    std::vector<Time> link_free(topo.num_links(), 0);
    int missing = 0;
    for (Time x : arrival) missing += x == kNone;
    while (missing > 0) {
      const LinkId l = static_cast<LinkId>(rng() % topo.num_links());
      const Link& link = topo.link(l);
      std::vector<ChunkId> carry;
      Time ready = link_free[l];
      for (ChunkId c = 0; c < chunks && carry.size() < 3; ++c) {
        const Time at = arrival[link.src * chunks + c];
        if (at != kNone && arrival[link.dst * chunks + c] == kNone && rng() % 2) {
          carry.push_back(c);
          ready = std::max(ready, at);
        }
      }
      if (carry.empty()) continue;
      const Bytes bytes = static_cast<Bytes>(carry.size()) * collective.chunk_bytes();
      const Time ser = serialization_time(bytes, link.bandwidth_gbps);
      const Time end = ready + link.latency_ps + ser;
      link_free[l] = ready + link_busy_time(model, link.latency_ps, ser);
      for (ChunkId c : carry) {
        arrival[link.dst * chunks + c] = end;
        --missing;
      }
      a.add_transfer(link.src, link.dst, ready, end, carry);
    }
    const VerifyResult v = verify_algorithm(a, topo, model);
    EXPECT_TRUE(v.ok) << v.error;
    const SimulationResult r = simulate(a, topo, model);
    expect_reproduces(a, r);
    EXPECT_EQ(r.collective_time, v.collective_time);
    // Index order does not matter: the same schedule sorted by start, and shuffled.
    Algorithm sorted = a;
    sorted.sort_by_start();
    expect_reproduces(sorted, simulate(sorted, topo, model));
    std::vector<std::size_t> order(a.transfers().size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    Algorithm shuffled(collective);
    for (std::size_t i : order) {
      const Transfer& t = a.transfers()[i];
      shuffled.add_transfer(t.src, t.dst, t.start, t.end, a.chunks(t), t.reduce);
    }
    expect_reproduces(shuffled, simulate(shuffled, topo, model));
    EXPECT_TRUE(verify_algorithm(shuffled, topo, model).ok);
  }
}

TEST(Simulator, LargeRingMatchesRecorded) {
  const int n = 512;
  const Topology topo = uniring(n);
  Algorithm a(Collective::make(CollectiveKind::kAllGather, n, Bytes{1} << 30, 1));
  const Time t = topo.transfer_time(0, a.collective().chunk_bytes());
  a.reserve(static_cast<std::size_t>(n) * (n - 1));
  for (int s = 0; s < n - 1; ++s)
    for (int i = 0; i < n; ++i) a.add_transfer(i, (i + 1) % n, s * t, (s + 1) * t, (i - s + n) % n);
  const SimulationResult r = simulate(a, topo, LinkModel::kTacos);
  EXPECT_EQ(r.collective_time, (n - 1) * t);
  expect_reproduces(a, r);
}

}  // namespace
}  // namespace tacos
