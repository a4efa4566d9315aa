// The node-direct baseline (baseline_node_direct.cpp): every NIC sends and receives the same
// share in few messages, every collective verifies on DGX pods, the reasons it does not apply,
// and its quality on a 64-node pod.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../src/synthesis/node_direct_groups.h"
#include "tacos/algorithm/verify.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/topology/generators.h"
#include "tacos/topology/switch_routes.h"
#include "test_printers.h"

namespace tacos {
namespace {

Topology make(const std::string& spec) { return generate_topology(spec, LinkParams{}); }

// `with_groups` false: behind spines the rounds alone (node-direct without its leaf-group
// relay), as these tests measured them.
Algorithm node_direct(const Topology& topology, CollectiveKind kind, int k,
                      bool with_groups = true) {
  const Collective collective = Collective::make(kind, topology.npus(), 64 << 20, k);
  Algorithm algorithm =
      with_groups
          ? synthesize_baseline(Baseline::kNodeDirect, topology, collective, LinkModel::kTacos)
          : detail::node_direct_baseline(switch_route_view(topology), topology, collective,
                                         LinkModel::kTacos, /*with_groups=*/false);
  const VerifyResult check = verify_algorithm(algorithm, topology, LinkModel::kTacos);
  EXPECT_TRUE(check.ok) << topology.name() << " " << to_string(kind) << " K=" << k << ": "
                        << check.error;
  EXPECT_EQ(check.collective_time, algorithm.collective_time);
  return algorithm;
}

// The switch of an NPU's fastest link: its node's NVSwitch.
DeviceId node_switch(const Topology& topology, NpuId npu) {
  DeviceId best = -1;
  double fastest = 0;
  for (LinkId l : topology.out_links(npu))
    if (topology.link(l).bandwidth_gbps > fastest) {
      fastest = topology.link(l).bandwidth_gbps;
      best = topology.link(l).dst;
    }
  return best;
}

// dgx-h100:16, K = 1: 16 nodes of 8 GPUs. Each node's block (8 shards) goes to the 15 others as
// 15 x 8 slots cut into 8 runs of 15, one per rail: every NIC sends 15 shards, in at most
// ceil(15 / 8) + 1 = 3 messages (a run meets at most 3 blocks), and takes in 15.
TEST(NodeDirect, EveryNicSendsAndReceivesTheSameShareInFewMessages) {
  const Topology pod = make("dgx-h100:16");
  const Algorithm ag = node_direct(pod, CollectiveKind::kAllGather, 1);
  std::map<DeviceId, int> sent_chunks, sent_messages, received_chunks;
  // Transfers run NPU to NPU (a switch route each); across nodes is over the NICs.
  for (const Transfer& t : ag.transfers()) {
    if (node_switch(pod, t.src) == node_switch(pod, t.dst)) continue;
    sent_chunks[t.src] += t.num_chunks;
    ++sent_messages[t.src];
    received_chunks[t.dst] += t.num_chunks;
  }
  ASSERT_EQ(sent_chunks.size(), 128u);
  ASSERT_EQ(received_chunks.size(), 128u);
  for (const auto& [gpu, chunks] : sent_chunks) {
    EXPECT_EQ(chunks, 15) << "GPU " << gpu;
    EXPECT_LE(sent_messages[gpu], 3) << "GPU " << gpu;
  }
  for (const auto& [gpu, chunks] : received_chunks) EXPECT_EQ(chunks, 15) << "GPU " << gpu;
}

TEST(NodeDirect, EveryCollectiveVerifiesOnPods) {
  for (const std::string spec : {"dgx-a100:2", "dgx-h100:3", "dgx-h100:4", "dgx-h100:12"})
    for (const CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                                      CollectiveKind::kAllReduce, CollectiveKind::kAllToAll})
      for (const int k : {1, 3}) node_direct(make(spec), kind, k);
}

TEST(NodeDirect, SaysWhyItDoesNotApply) {
  auto reason = [](const std::string& spec, std::vector<NpuId> members = {}) {
    const Topology topology = make(spec);
    const Collective c =
        Collective::make(CollectiveKind::kAllGather, topology.npus(), 1 << 20, 1, members);
    return baseline_inapplicable(Baseline::kNodeDirect, topology, c).value_or("applies");
  };
  EXPECT_EQ(reason("dgx-h100:2"), "applies");
  EXPECT_EQ(reason("torus2d:4x4"),
            "node-direct needs nodes on switches (a DGX or NVL pod such as dgx-h100:4)");
  EXPECT_EQ(reason("switch:8"),
            "node-direct needs two or more nodes: NPUs whose fastest link goes to one switch");
  EXPECT_EQ(reason("dgx-h100:2", {0, 1, 8}),
            "node-direct needs every NPU of the topology in the collective");
  EXPECT_THROW(synthesize_baseline(Baseline::kNodeDirect, make("dgx-h100:2"),
                                   Collective::make(CollectiveKind::kBroadcast, 16, 1 << 20, 1),
                                   LinkModel::kTacos),
               Error);
}

// dgx-h100:64 All-Gather, 64 MiB, K = 2: 196.43 us, 1.097 x the store-and-forward bound
// (179.05 us); the TACOS greedy reaches 1.257 x there (docs/quality.md, quality at scale). It was
// 200.61 us (1.120) with every GPU gathering to and handing on to its node's GPUs in the same
// order (all starting on the node's first GPU) and each NIC's messages in the layout's order (a
// partial block after whole ones made the leaf's port wait for it: docs/quality.md, "Measured
// choices").
TEST(NodeDirect, NearTheBoundOnA64NodePod) {
  const Topology pod = make("dgx-h100:64");
  const Algorithm ag = node_direct(pod, CollectiveKind::kAllGather, 2);
  EXPECT_NEAR(to_micros(ag.collective_time), 196.432953, 1e-5);
  EXPECT_LT(to_micros(ag.collective_time), 1.10 * 179.044972);
  // Reduce-Scatter is that All-Gather run backwards in time on the transposed pod, so it is no
  // slower (re-timing starts nothing later). Reversing only the steps gave 212.32 us: every
  // partial sum was ready at time 0 and the first blocks across the NICs waited behind later
  // ones. All-Reduce is the two one after the other (the steps alone: 1.200 x its bound).
  const Algorithm rs = node_direct(pod, CollectiveKind::kReduceScatter, 2);
  EXPECT_LE(rs.collective_time, ag.collective_time);
  EXPECT_LT(to_micros(rs.collective_time), 1.10 * 179.044972);
  const Algorithm ar = node_direct(pod, CollectiveKind::kAllReduce, 2);
  EXPECT_LE(ar.collective_time, rs.collective_time + ag.collective_time);
  EXPECT_GT(ar.collective_time, ag.collective_time);
}

// Every NIC sends its messages smallest first (dgx-h100:16, K = 1: runs of 15 shards, so a NIC
// sends partial blocks and whole ones), and the GPUs of a node start their hand-ons on
// different peers: GPU r sends to r + 1, r + 2, ... of its node.
TEST(NodeDirect, NicsSendSmallestFirstAndGpusHandOnInRotation) {
  const Topology pod = make("dgx-h100:16");
  const Algorithm ag = node_direct(pod, CollectiveKind::kAllGather, 1);
  std::map<NpuId, std::vector<std::pair<Time, int>>> nic_sends;
  std::map<NpuId, std::vector<std::pair<Time, NpuId>>> node_sends;
  for (const Transfer& t : ag.transfers()) {
    if (node_switch(pod, t.src) != node_switch(pod, t.dst))
      nic_sends[t.src].push_back({t.start, t.num_chunks});
    else
      node_sends[t.src].push_back({t.start, t.dst});
  }
  ASSERT_EQ(nic_sends.size(), 128u);
  int partial_then_whole = 0;
  for (auto& [gpu, sends] : nic_sends) {
    std::sort(sends.begin(), sends.end());
    for (std::size_t i = 1; i < sends.size(); ++i)
      EXPECT_LE(sends[i - 1].second, sends[i].second) << "GPU " << gpu;
    if (sends.front().second < sends.back().second) ++partial_then_whole;
  }
  EXPECT_GT(partial_then_whole, 0);
  // The gather: every GPU's first 7 sends inside its node go to the next 7 GPUs in turn.
  for (auto& [gpu, sends] : node_sends) {
    std::stable_sort(sends.begin(), sends.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    ASSERT_GE(sends.size(), 7u);
    for (int b = 1; b <= 7; ++b)
      EXPECT_EQ(sends[static_cast<std::size_t>(b - 1)].second, gpu / 8 * 8 + (gpu % 8 + b) % 8)
          << "GPU " << gpu << " send " << b;
  }
}

// dgx-h100:72: 72 nodes, 3 leaves per rail (32, 32 and 8 nodes), 12 spines; every leaf reaches
// every spine by one link of 133 GB/s, and the spine of a route is hashed per NPU pair. With
// offsets 1 .. D-1 laid out rail by rail, the middle rails' pairs all cross the spines and a
// leaf's busiest spine link carried 3.24 x the mean of its leaf's (1.29 now that node pairs
// change rails to even the totals out). All-Gather took 329.466129 us, 2.138 x the cut bound,
// Reduce-Scatter 338.696214 us (the rounds' times now: the next test; partial sums take the
// routes back, through other spines). These are the rounds alone: with its leaf-group relay
// (groups of 8 nodes there) node-direct keeps 219.927227 us.
TEST(NodeDirect, SpreadsNodePairsEvenlyOverTheSpines) {
  const Topology pod = make("dgx-h100:72");
  const Algorithm ag = node_direct(pod, CollectiveKind::kAllGather, 1, false);
  // Bytes on every link between switches, from each transfer's switch route, per leaf and
  // direction (leaves of 32 and of 8 nodes carry different totals). A leaf has NPUs on it.
  auto is_leaf = [&](DeviceId s) {
    for (LinkId l : pod.out_links(s))
      if (!pod.is_switch(pod.link(l).dst)) return true;
    return false;
  };
  std::map<std::pair<DeviceId, bool>, std::map<LinkId, std::int64_t>> bytes;
  const SwitchRoutes& routes = pod.switch_routes();
  for (const Transfer& t : ag.transfers())
    for (LinkId l : routes.route(t.src, t.dst)) {
      const Link& link = pod.link(l);
      if (!pod.is_switch(link.src) || !pod.is_switch(link.dst)) continue;
      const bool up = is_leaf(link.src);
      bytes[{up ? link.src : link.dst, up}][l] += ag.transfer_bytes(t);
    }
  ASSERT_EQ(bytes.size(), 2u * 3 * 8);  // 3 leaves per rail, up and down
  double worst = 0;                     // the busiest link of a leaf over the mean of its links
  for (const auto& [leaf, links] : bytes) {
    ASSERT_EQ(links.size(), 12u);
    std::int64_t total = 0, busiest = 0;
    for (const auto& [link, b] : links) {
      total += b;
      busiest = std::max(busiest, b);
    }
    worst = std::max(worst, static_cast<double>(busiest) * 12 / static_cast<double>(total));
  }
  EXPECT_LT(worst, 1.4) << worst;  // 3.24 with the layout alone
  // At least 10% faster than the 329.466129 us of the layout alone.
  EXPECT_LT(to_micros(ag.collective_time), 0.9 * 329.466129);
  const Algorithm rs = node_direct(pod, CollectiveKind::kReduceScatter, 1, false);
  EXPECT_LT(to_micros(rs.collective_time), 0.9 * 338.696214);
  node_direct(pod, CollectiveKind::kAllReduce, 1, false);
  EXPECT_NEAR(to_micros(node_direct(pod, CollectiveKind::kAllGather, 1).collective_time),
              219.927227, 1e-5);
}

// Behind spines each round's matching tries a NIC's messages in the layout's order or smallest
// first (partial blocks early); neither is faster everywhere, so both are built and the faster
// kept. dgx-h100:72, K = 1: All-Gather 263.723480 us in the layout's order, 259.546277 smallest
// first; Reduce-Scatter 263.680938 in the layout's order, 264.929244 smallest first.
TEST(NodeDirect, BehindSpinesTheFasterOfTwoRoundOrdersIsKept) {
  const Topology pod = make("dgx-h100:72");
  EXPECT_NEAR(to_micros(node_direct(pod, CollectiveKind::kAllGather, 1, false).collective_time),
              259.546277, 1e-5);
  EXPECT_NEAR(to_micros(node_direct(pod, CollectiveKind::kReduceScatter, 1, false).collective_time),
              263.680938, 1e-5);
}

// dgx-h100:128: 4 leaves per rail of 32 nodes each, 16 spines. Nodes on the same leaves form a
// group (nodes 0-31, 32-63, ...). Unequal leaves split into groups of their sizes' greatest
// common divisor: dgx-h100:72's leaves take 32, 32 and 8 nodes (9 groups of 8); dgx-h100:65's
// 32, 32 and 1 (none), and dgx-h100:64 has one leaf per rail (one group: none).
TEST(NodeDirect, LeafGroupsAreNodesOnTheSameLeaves) {
  auto groups_of = [](const Topology& pod) {
    std::vector<std::vector<NpuId>> nodes(static_cast<std::size_t>(pod.npus() / 8));
    for (NpuId gpu = 0; gpu < pod.npus(); ++gpu) nodes[gpu / 8].push_back(gpu);
    return detail::leaf_groups(pod, nodes);
  };
  const auto groups = groups_of(make("dgx-h100:128"));
  ASSERT_TRUE(groups.has_value());
  ASSERT_EQ(groups->size(), 4u);
  for (int g = 0; g < 4; ++g) {
    ASSERT_EQ((*groups)[g].size(), 32u);
    for (int i = 0; i < 32; ++i) EXPECT_EQ((*groups)[g][i], 32 * g + i);
  }
  const auto eights = groups_of(make("dgx-h100:72"));
  ASSERT_TRUE(eights.has_value());
  ASSERT_EQ(eights->size(), 9u);
  for (int g = 0; g < 9; ++g)
    for (int i = 0; i < 8; ++i) EXPECT_EQ((*eights)[g][i], 8 * g + i);
  EXPECT_FALSE(groups_of(make("dgx-h100:65")).has_value());
  EXPECT_FALSE(groups_of(make("dgx-h100:64")).has_value());
}

// Behind spines a node sends its block to one node of each other group (its counterpart), split
// over its 8 rails, and every node sends its own block and its 3 counterparts' over the leaves
// to the rest of its group: 3 blocks (24 shards) a node cross the spines instead of 96, so the
// hashed spine routes no longer set when blocks arrive. The counterparts are placed so that
// the links between leaves and spines carry their shards evenly: at most 10 on one (15 with
// each node's counterpart at its own place in the other group; 6 on average). dgx-h100:128,
// 64 MiB, K = 1: All-Gather 255.473765 us with the rounds over the spines (1.416 x the
// store-and-forward bound of 180.363929 us), 200.546129 us relayed with counterparts at their
// own places, 198.325425 us placed (1.0996: the 1.10); All-Reduce 506.758937 ->
// 409.682109 us, under 1.20 x its bound of 345.275555 us (docs/quality.md, quality at scale).
TEST(NodeDirect, BehindSpinesRelaysThroughLeafGroups) {
  const Topology pod = make("dgx-h100:128");
  const Algorithm ag = node_direct(pod, CollectiveKind::kAllGather, 1);
  EXPECT_NEAR(to_micros(ag.collective_time), 198.325425, 1e-5);
  EXPECT_LE(to_micros(ag.collective_time), 1.10 * 180.363929);
  const SwitchRoutes& routes = pod.switch_routes();
  std::vector<std::int64_t> crossing(128, 0);  // shards each node's GPUs send over the spines
  std::map<LinkId, std::int64_t> spine_link;   // shards on each link between switches
  for (const Transfer& t : ag.transfers()) {
    const auto route = routes.route(t.src, t.dst);
    if (route.size() != 4) continue;
    crossing[static_cast<std::size_t>(t.src / 8)] += t.num_chunks;
    for (LinkId l : route.subspan(1, 2)) spine_link[l] += t.num_chunks;
  }
  for (int m = 0; m < 128; ++m) EXPECT_EQ(crossing[static_cast<std::size_t>(m)], 3 * 8) << m;
  std::int64_t busiest = 0;
  for (const auto& [link, shards] : spine_link) busiest = std::max(busiest, shards);
  EXPECT_LE(busiest, 10);
  const Algorithm ar = node_direct(pod, CollectiveKind::kAllReduce, 1);
  EXPECT_NEAR(to_micros(ar.collective_time), 409.682109, 1e-5);
  EXPECT_LT(to_micros(ar.collective_time), 1.20 * 345.275555);
}

// All-to-All as PXN on dgx-h100:64, 64 MiB, K = 1: chunks of 128 KiB. Every NIC sends the 63
// other nodes one message each with its node's 8 chunks for the GPU of its rail there (1 MiB:
// 1 + 19.53 us a port) and takes in 63 such; nodes in shift order, so the leaf's ports never
// queue: 63 x 20.53 us of NIC port time and one more leaf port time, 1314.0 us, and the
// schedule ends 10.9 us later (the first shift's gathering over the NVSwitch): 1324.95 us,
// 1.019 x the store-and-forward bound of 1300.62 where the TACOS greedy is 1.384 x
// (docs/quality.md, quality at scale).
TEST(NodeDirect, AllToAllSendsANodesChunksForAGpuInOneMessage) {
  const Topology pod = make("dgx-h100:64");
  const Algorithm a2a = node_direct(pod, CollectiveKind::kAllToAll, 1);
  std::map<DeviceId, int> sent_messages, received_messages;
  for (const Transfer& t : a2a.transfers()) {
    if (node_switch(pod, t.src) == node_switch(pod, t.dst)) continue;
    EXPECT_EQ(t.num_chunks, 8) << t.src << "->" << t.dst;
    EXPECT_EQ(t.src % 8, t.dst % 8) << "rail";
    ++sent_messages[t.src];
    ++received_messages[t.dst];
  }
  ASSERT_EQ(sent_messages.size(), 512u);
  for (const auto& [npu, count] : sent_messages) EXPECT_EQ(count, 63) << npu;
  for (const auto& [npu, count] : received_messages) EXPECT_EQ(count, 63) << npu;
  const double port_us = 1.0 + (1 << 20) / (50.0 * (1 << 30)) * 1e6;
  const double nic_part = 64 * port_us;
  EXPECT_NEAR(nic_part, 1314.0, 0.01);
  EXPECT_NEAR(to_micros(a2a.collective_time), 1324.946628, 1e-5);
  EXPECT_GT(to_micros(a2a.collective_time), nic_part);
  EXPECT_LT(to_micros(a2a.collective_time), nic_part + 12);
  EXPECT_LT(to_micros(a2a.collective_time), 1.02 * 1300.624825);
}

}  // namespace
}  // namespace tacos
