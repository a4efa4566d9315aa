// node-direct's rails and rounds (src/synthesis/node_direct_rails.h, node_direct_rounds.h): the
// layout on a pod without spines, and on a pod with spines that every node pair still gets
// every shard once, every NIC keeps its share and every round is a perfect matching.
#include "../src/synthesis/node_direct_rails.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "../src/synthesis/node_direct_rounds.h"
#include "tacos/topology/generators.h"

namespace tacos::detail {
namespace {

// The r-th NPU of each node is on rail r: node m is NPUs 8m .. 8m + 7 on dgx pods.
std::vector<std::vector<NpuId>> dgx_nodes(int nodes) {
  std::vector<std::vector<NpuId>> out(static_cast<std::size_t>(nodes));
  for (int m = 0; m < nodes; ++m)
    for (int r = 0; r < 8; ++r) out[static_cast<std::size_t>(m)].push_back(m * 8 + r);
  return out;
}

// dgx-h100:3 (no spines): 2 x 8 slots cut into 8 runs of 2. Slots (s, j) for s = 1, 2, j = 0..7
// in order: run r holds slots 2r and 2r + 1, so rails 0-3 carry shards 2r, 2r + 1 of the block
// to node m + 1 and rails 4-7 shards 2(r - 4), 2(r - 4) + 1 of the block to node m + 2.
TEST(NodeDirectRails, LaysOffsetsOutRailByRailWithoutSpines) {
  const Topology pod = generate_topology("dgx-h100:3", LinkParams{});
  const RailPlan plan = node_direct_rails(pod, dgx_nodes(3), 1 << 20, 1, LinkModel::kTacos, {});
  EXPECT_FALSE(plan.rebalanced);
  ASSERT_EQ(plan.messages.size(), 8u);
  for (int r = 0; r < 8; ++r)
    for (int m = 0; m < 3; ++m) {
      const auto& sent = plan.messages[r][m];
      ASSERT_EQ(sent.size(), 1u) << "rail " << r << " node " << m;
      const int s = r < 4 ? 1 : 2;
      EXPECT_EQ(sent[0].to, (m + s) % 3);
      EXPECT_EQ(sent[0].first, 2 * (r % 4));
      EXPECT_EQ(sent[0].last, 2 * (r % 4) + 2);
    }
}

// dgx-h100:72: 3 leaves per rail and 12 spines, so pairs change rails.
TEST(NodeDirectRails, WithSpinesEveryPairStillGetsEveryShardOnceAndEveryRoundIsAMatching) {
  const Topology pod = generate_topology("dgx-h100:72", LinkParams{});
  const int d = 72;
  const auto nodes = dgx_nodes(d);
  for (const bool reductions : {false, true}) {
    NodeDirectPhases phases;
    phases.copies = !reductions;
    phases.reductions = reductions;
    const RailPlan plan = node_direct_rails(pod, nodes, 1 << 16, 1, LinkModel::kTacos, phases);
    EXPECT_TRUE(plan.rebalanced);
    std::map<std::pair<int, int>, std::multiset<int>> shards;  // (from, to) -> shards
    std::map<std::pair<int, int>, int> sent, received;         // (rail, node) -> shards
    for (int r = 0; r < 8; ++r)
      for (int m = 0; m < d; ++m)
        for (const RailMessage& message : plan.messages[r][m]) {
          for (int j = message.first; j < message.last; ++j) shards[{m, message.to}].insert(j);
          sent[{r, m}] += message.last - message.first;
          received[{r, message.to}] += message.last - message.first;
        }
    ASSERT_EQ(shards.size(), static_cast<std::size_t>(d * (d - 1)));
    for (const auto& [pair, got] : shards)
      EXPECT_EQ(got, (std::multiset<int>{0, 1, 2, 3, 4, 5, 6, 7}))
          << pair.first << "->" << pair.second;
    // Every NIC sends and receives D - 1 = 71 shards, as in the layout.
    for (const auto& [nic, count] : sent) EXPECT_EQ(count, d - 1);
    for (const auto& [nic, count] : received) EXPECT_EQ(count, d - 1);

    for (int r = 0; r < 8; ++r) {
      std::vector<NpuId> rail;
      for (int m = 0; m < d; ++m) rail.push_back(nodes[m][r]);
      const auto& messages = plan.messages[r];
      const auto order =
          balanced_rail_rounds(pod, rail, messages, 8, 1 << 16, 1, LinkModel::kTacos, reductions);
      ASSERT_EQ(order.size(), static_cast<std::size_t>(d));
      const std::size_t rounds = messages[0].size();
      for (int m = 0; m < d; ++m) {
        ASSERT_EQ(order[m].size(), rounds);
        EXPECT_EQ(std::set<int>(order[m].begin(), order[m].end()).size(), rounds);
      }
      for (std::size_t t = 0; t < rounds; ++t) {
        std::set<int> receivers;
        for (int m = 0; m < d; ++m) receivers.insert(messages[m][order[m][t]].to);
        EXPECT_EQ(receivers.size(), static_cast<std::size_t>(d)) << "rail " << r << " round " << t;
      }
    }
  }
}

}  // namespace
}  // namespace tacos::detail
