// The relay baseline (baseline_relay.cpp): hand-worked times on one switch, the properties of
// its schedules (every member gets every chunk once, verified, never below the bound, the same
// every run), Reduce as its reversal, process groups, where it does not apply, and that the
// portfolio keeps it for a fat-tree's Broadcast.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "../src/bounds/rooted_relay_bound.h"
#include "tacos/algorithm/verify.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/synthesis/request.h"
#include "tacos/topology/generators.h"
#include "test_printers.h"

namespace tacos {
namespace {

Topology make(const std::string& spec, const std::string& bandwidth = "50") {
  return generate_topology(spec, parse_link_params(bandwidth, "0.5us"));
}

Algorithm relay(const Topology& topology, const Collective& collective,
                LinkModel model = LinkModel::kTacos) {
  Algorithm algorithm = synthesize_baseline(Baseline::kRelay, topology, collective, model);
  const VerifyResult check = verify_algorithm(algorithm, topology, model);
  EXPECT_TRUE(check.ok) << topology.name() << ": " << check.error;
  EXPECT_EQ(check.collective_time, algorithm.collective_time);
  return algorithm;
}

Collective broadcast(const Topology& topology, int k, std::vector<NpuId> members = {},
                     NpuId root = 0) {
  return Collective::make(CollectiveKind::kBroadcast, topology.npus(), 64 << 20, k,
                          std::move(members), root);
}

// switch:4, 64 MiB in one chunk: a message holds the sender's port and then the receiver's for
// 0.5 + 1250 us each. The root sends to NPU 1 at 0 and to NPU 2 at 1250.5 (each arrives two
// port times later); at 2501 the root's port is free again and NPU 1 has the chunk: the root,
// first at that instant, sends to NPU 3, which has it at 5002 us = 4 port times.
TEST(Relay, OneChunkOnFourNpusWorkedByHand) {
  const Topology star = make("switch:4");
  const Algorithm a = relay(star, broadcast(star, 1));
  EXPECT_EQ(format_micros(a.collective_time), "5002");
  ASSERT_EQ(a.transfers().size(), 3u);
  std::set<std::tuple<DeviceId, DeviceId, Time>> sends;
  for (const Transfer& t : a.transfers()) sends.insert({t.src, t.dst, t.start});
  const Time port = 1250500000;  // ps
  EXPECT_EQ(sends, (std::set<std::tuple<DeviceId, DeviceId, Time>>{
                       {0, 1, 0}, {0, 2, port}, {0, 3, 2 * port}}));
}

// Two chunks, port time 625.5 us (= t): c0 to NPU 1 at 0 and c1 to NPU 2 at t, as before. At 2t
// c0 is the rarer (tie, lower index); the root gives it to NPU 3 (it holds nothing: NPU 2 holds
// c1 on its way) and NPU 1 to NPU 2, whose switch port is free by the time the message gets
// there (3t). At 3t the root gives c1 to NPU 1 and NPU 2 gives it to NPU 3: all arrive at 5t,
// where one chunk of 64 MiB took 4 port times of twice the length.
TEST(Relay, TwoChunksWorkedByHand) {
  const Topology star = make("switch:4");
  const Algorithm a = relay(star, broadcast(star, 2));
  EXPECT_EQ(format_micros(a.collective_time), "3127.5");
  EXPECT_EQ(a.transfers().size(), 6u);
}

// Every member but the root receives every chunk exactly once.
void expect_each_chunk_once(const Algorithm& a, const Collective& c) {
  std::set<std::pair<DeviceId, ChunkId>> received;
  for (const Transfer& t : a.transfers())
    for (ChunkId chunk : a.chunks(t)) EXPECT_TRUE(received.insert({t.dst, chunk}).second);
  EXPECT_EQ(received.size(), static_cast<std::size_t>(c.num_members() - 1) * c.num_chunks());
}

std::vector<std::tuple<DeviceId, DeviceId, Time, Time, ChunkId>> listing(const Algorithm& a) {
  std::vector<std::tuple<DeviceId, DeviceId, Time, Time, ChunkId>> rows;
  for (const Transfer& t : a.transfers())
    rows.emplace_back(t.src, t.dst, t.start, t.end, a.chunks(t)[0]);
  return rows;
}

TEST(Relay, SchedulesAreVerifiedNeverBelowTheBoundAndTheSameEveryRun) {
  struct Case {
    std::string spec, bandwidth;
    int k;
  };
  for (const Case& s : {Case{"switch:16", "50", 128}, Case{"switch:8", "50", 1},
                        Case{"fattree:8x4x2", "50,200", 64}, Case{"fattree:8x4x2", "50", 16}}) {
    const Topology topology = make(s.spec, s.bandwidth);
    const Collective c = broadcast(topology, s.k);
    const Algorithm a = relay(topology, c);
    expect_each_chunk_once(a, c);
    const LowerBound bound = compute_lower_bound(topology, c);
    EXPECT_GE(to_micros(a.collective_time),
              std::max(bound.lower_bound_us, bound.store_and_forward_bound_us))
        << s.spec;
    const Algorithm again = relay(topology, c);
    EXPECT_EQ(listing(again), listing(a)) << s.spec;
    EXPECT_EQ(again.collective_time, a.collective_time) << s.spec;
  }
}

// switch:16 at K = 128 (its best K): 1396.125 us, 1.117 x the bound, where dbt's best is 1.158.
// A message there is 0.5 + 9.766 us per port: 136 port times, 128 of them the root's sends.
TEST(Relay, OnOneSwitchItBeatsTheDoubleBinaryTree) {
  const Topology star = make("switch:16");
  const Collective c = broadcast(star, 128);
  const Algorithm a = relay(star, c);
  EXPECT_EQ(format_micros(a.collective_time), "1396.125");
  const Algorithm dbt = synthesize_baseline(Baseline::kDbt, star, c, LinkModel::kTacos);
  EXPECT_LT(a.collective_time, dbt.collective_time);
  // Under the astra model too (latency does not hold the port there).
  EXPECT_LT(relay(star, c, LinkModel::kAstra).collective_time,
            synthesize_baseline(Baseline::kDbt, star, c, LinkModel::kAstra).collective_time);
}

TEST(Relay, ReduceIsTheReversalAndGroupsRelayAmongThemselves) {
  const Topology fabric = make("fattree:8x4x2", "50,200");
  const Collective reduce =
      Collective::make(CollectiveKind::kReduce, fabric.npus(), 64 << 20, 32, {}, 5);
  const Algorithm r = relay(fabric, reduce);
  for (const Transfer& t : r.transfers()) EXPECT_TRUE(t.reduce);
  // Each member but the root sends each chunk's partial sum once.
  std::set<std::pair<DeviceId, ChunkId>> sent;
  for (const Transfer& t : r.transfers())
    for (ChunkId chunk : r.chunks(t)) EXPECT_TRUE(sent.insert({t.src, chunk}).second);
  EXPECT_EQ(sent.size(), 31u * 32);

  // A process group: only its members send or receive, the root among them.
  const std::vector<NpuId> group{0, 1, 2, 9, 17, 18, 20, 30};
  const Collective c = broadcast(fabric, 16, group, 9);
  const Algorithm a = relay(fabric, c);
  expect_each_chunk_once(a, c);
  const std::set<NpuId> members(group.begin(), group.end());
  for (const Transfer& t : a.transfers()) {
    EXPECT_TRUE(members.count(t.src)) << t.src;
    EXPECT_TRUE(members.count(t.dst)) << t.dst;
  }
}

TEST(Relay, WhereItDoesNotApplyItSaysWhy) {
  auto why = [](const std::string& spec, CollectiveKind kind) {
    const Topology t = make(spec);
    return baseline_inapplicable(Baseline::kRelay, t, Collective::make(kind, t.npus(), 1 << 20, 1))
        .value_or("applies");
  };
  EXPECT_EQ(why("switch:8", CollectiveKind::kBroadcast), "applies");
  EXPECT_EQ(why("switch:8", CollectiveKind::kAllGather),
            "relay is defined for broadcast and reduce, not all-gather");
  EXPECT_EQ(why("torus2d:4x4", CollectiveKind::kBroadcast),
            "relay needs NPUs on switches (such as switch:16, fattree:8x4x2 or dgx-h100:4)");
  // A process group whose NPU 20 (GPU 4 of node 2) has no member on its rail elsewhere.
  const Topology dgx = generate_topology("dgx-h100:4", LinkParams{});
  EXPECT_EQ(baseline_inapplicable(Baseline::kRelay, dgx,
                                  Collective::make(CollectiveKind::kBroadcast, 32, 1 << 20, 1,
                                                   {0, 1, 2, 3, 8, 9, 10, 11, 20}))
                .value_or("applies"),
            "relay: NPU 20 cannot be reached from the root 0 through switches and members");
}

// Messages of `a` by the chunks they carry ([c]: messages of c chunks); none carries more than
// `most`.
std::vector<std::size_t> messages_by_chunks(const Algorithm& a, int most) {
  std::vector<std::size_t> count(static_cast<std::size_t>(most) + 1, 0);
  for (const Transfer& t : a.transfers()) {
    EXPECT_LE(t.num_chunks, most);
    if (t.num_chunks <= most) ++count[static_cast<std::size_t>(t.num_chunks)];
  }
  return count;
}

// relay's Broadcast of 64 MiB from GPU 0 on a pod at K, which sends every chunk to every GPU
// once and ends at `time_us` (as format_micros prints it).
Algorithm pod_broadcast(const Topology& pod, int k, const std::string& time_us) {
  const Collective c = broadcast(pod, k);
  Algorithm a = relay(pod, c);
  expect_each_chunk_once(a, c);
  EXPECT_EQ(format_micros(a.collective_time), time_us);
  return a;
}

// On DGX pods a GPU has two ports, its NVSwitch's and its NIC's: a NIC sends a chunk only into
// a node that has none of it, and the node spreads it over its NVSwitch; after a port's first
// two messages a message carries up to two chunks. dgx-h100:16, 64 MiB, K = 512: that plan
// takes 234.39 us; with the root's node's last 4 chunks per NIC out one at a time, the fastest
// of the tail plans, 232.22 us: 1.244 x the store-and-forward bound of 186.65 us (the greedy
// 1.473 x the switches' argument; the target is 1.25, docs/quality.md).
TEST(Relay, OnADgxPodEveryChunkEntersEachNodeOnce) {
  const Topology pod = generate_topology("dgx-h100:16", LinkParams{});
  const Collective c = broadcast(pod, 512);
  const Algorithm a = pod_broadcast(pod, 512, "232.217041");
  std::set<std::pair<int, ChunkId>> entered;  // (node, chunk) over a NIC
  std::set<ChunkId> left_root;                // chunks out of node 0
  std::vector<int> first_out;  // per message taking a chunk out of node 0 first: its chunks
  std::vector<const Transfer*> by_start;
  for (const Transfer& t : a.transfers()) by_start.push_back(&t);
  std::stable_sort(by_start.begin(), by_start.end(),
                   [](const Transfer* x, const Transfer* y) { return x->start < y->start; });
  for (const Transfer* t : by_start) {
    if (t->src / 8 == t->dst / 8) continue;
    bool first = false;
    for (ChunkId chunk : a.chunks(*t)) {
      EXPECT_TRUE(entered.insert({t->dst / 8, chunk}).second);
      if (t->src / 8 == 0 && left_root.insert(chunk).second) first = true;
    }
    if (first) first_out.push_back(t->num_chunks);
  }
  EXPECT_EQ(entered.size(), 15u * 512);
  EXPECT_EQ(left_root.size(), 512u);
  EXPECT_GT(messages_by_chunks(a, 2)[2], a.transfers().size() / 2);
  // The last 32 chunks (4 per NIC) leave the root's node one per message, the rest in pairs.
  ASSERT_GE(first_out.size(), 30u);
  EXPECT_EQ(std::count(first_out.end() - 30, first_out.end(), 1), 30);
  EXPECT_GT(std::count(first_out.begin(), first_out.end(), 2), 200);
  const LowerBound bound = compute_lower_bound(pod, c);
  EXPECT_NEAR(bound.store_and_forward_bound_us, 186.647093, 1e-6);
  EXPECT_LE(to_micros(a.collective_time), 1.25 * bound.store_and_forward_bound_us);
  // Reduce, its reversal, is verified too (relay() checks): every GPU but the root sends each
  // chunk's partial sum once.
  const Algorithm r =
      relay(pod, Collective::make(CollectiveKind::kReduce, pod.npus(), 64 << 20, 64, {}, 19));
  std::size_t sent = 0;
  for (const Transfer& t : r.transfers()) sent += static_cast<std::size_t>(t.num_chunks);
  EXPECT_EQ(sent, 127u * 64);
}

// On DGX pods relay also builds a plan whose messages grow: a port's first 3 messages carry one
// chunk, the next 3 two, the rest up to three; the faster plan is kept (pairs where both tie).
// dgx-a100:32, 64 MiB, K = 1024: pairs 425.66 us, growing 421.95 us, where most messages
// carry three chunks, and the fastest of the tail plans its budget allows 420.536806 us;
// dgx-h100:16 keeps its pairs (above: growing is 240.73 us there). Against
// the store-and-forward bound: the root node's 8 NICs and another node's, each carrying 8 MiB
// at 25 GB/s (X = 312.5 us, 1 us per message: X + 2 phi(X) / X = 346.84 us), the two
// messages of the node relaying most chunks and the NVSwitch hop before 7 of the 8 NICs each
// side (rooted_relay_bound.cpp): 355.021456 us, 1.185 x (the switch argument alone gave
// 337.966810 us, 1.2485).
TEST(Relay, OnADgxPodBatchesGrowWhereThatIsFaster) {
  const Topology pod = generate_topology("dgx-a100:32", LinkParams{});
  const Collective c = broadcast(pod, 1024);
  const Algorithm a = pod_broadcast(pod, 1024, "420.536806");
  const LowerBound bound = compute_lower_bound(pod, c);
  EXPECT_GT(bound.store_and_forward_bound_us,
            312.5 + 2 * bounds_detail::least_message_cost(312.5, 1) / 312.5 + 7);
  EXPECT_NEAR(bound.store_and_forward_bound_us, 355.021456, 1e-5);
  EXPECT_LE(to_micros(a.collective_time), 1.25 * bound.store_and_forward_bound_us);
  EXPECT_GT(messages_by_chunks(a, 3)[3], a.transfers().size() / 2);
}

// A Reduce is the reversal of a Broadcast plan, whose time does not follow the plan's: its tail
// plans are built and timed as reversals, and the fastest kept. dgx-h100:4, 64 MiB, K = 512:
// the pairs plan reversed takes 245.70 us, the fastest reversal 241.37 (its Broadcast plan is
// not the fastest Broadcast: 224.87 us there).
TEST(Relay, OnADgxPodReduceKeepsTheFastestReversal) {
  const Topology pod = generate_topology("dgx-h100:4", LinkParams{});
  const Algorithm r =
      relay(pod, Collective::make(CollectiveKind::kReduce, pod.npus(), 64 << 20, 512, {}, 0));
  EXPECT_EQ(format_micros(r.collective_time), "241.37205");
  EXPECT_EQ(format_micros(relay(pod, broadcast(pod, 512)).collective_time), "224.865911");
}

// The at-scale case it was made for: fattree:32x16x32 (512 hosts) Broadcast of 64 MiB at
// K = 256: 1550.25 us, 1.240 x the bound of 1250 us (the target 1.25), where dbt's best is
// 1673.66 us (K = 512) and the greedy's 1814.85 (docs/quality.md).
TEST(Relay, FatTreeOf512HostsWithinAQuarterOfTheBound) {
  const Topology fabric = make("fattree:32x16x32");
  const Algorithm a = relay(fabric, broadcast(fabric, 256));
  EXPECT_EQ(format_micros(a.collective_time), "1550.250144");
  EXPECT_LE(to_micros(a.collective_time), 1.25 * 1250);
  const Algorithm dbt =
      synthesize_baseline(Baseline::kDbt, fabric, broadcast(fabric, 512), LinkModel::kTacos);
  EXPECT_EQ(format_micros(dbt.collective_time), "1673.660583");
}

}  // namespace
}  // namespace tacos
