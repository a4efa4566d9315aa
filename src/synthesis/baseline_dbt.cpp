// The double binary tree baseline (baselines.h), after NCCL's ncclGetBtree / ncclGetDtree.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"

namespace tacos::detail {
namespace {

// Children of `rank` in NCCL's binary tree over ranks 0..n-1 rooted at 0 (the root has one
// child; leaves and inner nodes alternate), -1 for none.
void btree_children(int n, int rank, int& down0, int& down1) {
  int bit = 1;
  while (bit < n && (bit & rank) == 0) bit <<= 1;
  if (rank == 0) {
    down0 = -1;
    down1 = n > 1 ? bit >> 1 : -1;
    return;
  }
  int lowbit = bit >> 1;
  down0 = lowbit == 0 ? -1 : rank - lowbit;
  down1 = -1;
  while (lowbit != 0 && rank + lowbit >= n) lowbit >>= 1;
  if (lowbit != 0) down1 = rank + lowbit;
}

struct TreeNode {
  int rank;
  int parent;  // rank, -1 at the root
  int depth;
};

// Tree 0 (mirror = false) or tree 1 over n ranks, in breadth-first order from the root.
std::vector<TreeNode> dtree(int n, bool second) {
  // Tree 1 is tree 0 with every rank x renamed: n-1-x (n even, mirror) or x+1 mod n (n odd).
  auto rename = [&](int x) { return !second ? x : (n % 2 == 0 ? n - 1 - x : (x + 1) % n); };
  std::vector<TreeNode> nodes{{0, -1, 0}};
  std::vector<char> seen(n, 0);
  seen[0] = 1;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    int down[2];
    btree_children(n, nodes[i].rank, down[0], down[1]);
    for (int child : down)
      if (child >= 0) {
        if (seen[child])
          throw Error("dbt: internal error: rank " + std::to_string(child) +
                      " appears twice in the binary tree");
        seen[child] = 1;
        nodes.push_back({child, nodes[i].rank, nodes[i].depth + 1});
      }
  }
  if (static_cast<int>(nodes.size()) != n)
    throw Error("dbt: internal error: the binary tree over " + std::to_string(n) + " ranks has " +
                std::to_string(nodes.size()) + " nodes");
  for (TreeNode& node : nodes) {
    node.rank = rename(node.rank);
    if (node.parent >= 0) node.parent = rename(node.parent);
  }
  return nodes;
}

}  // namespace

Algorithm dbt_baseline(const Topology& topology, const Topology& timing,
                       const Collective& collective, LinkModel model) {
  const int n = collective.num_members();
  const auto& members = collective.members();
  const CollectiveKind kind = collective.kind();
  if (kind != CollectiveKind::kAllReduce && kind != CollectiveKind::kBroadcast &&
      kind != CollectiveKind::kReduce)
    throw Error("dbt is defined for all-reduce, broadcast and reduce, not " + to_string(kind));
  LogicalSchedule schedule(topology, timing, collective);
  const int num_chunks = collective.num_chunks();
  const int half = (num_chunks + 1) / 2;
  for (int t = 0; t < 2; ++t) {
    // Nodes as member indices.
    std::vector<TreeNode> nodes;
    if (kind == CollectiveKind::kAllReduce) {
      nodes = dtree(n, t == 1);
    } else {
      // Both trees over the other N-1 members (rank r is member root+1+r), below the root.
      const int root = collective.member_index(collective.root());
      auto member = [&](int rank) { return (root + 1 + rank) % n; };
      nodes.push_back({root, -1, 0});
      for (const TreeNode& node : dtree(n - 1, t == 1))
        nodes.push_back(
            {member(node.rank), node.parent < 0 ? root : member(node.parent), node.depth + 1});
    }
    int max_depth = 0;
    for (const TreeNode& node : nodes) max_depth = std::max(max_depth, node.depth);
    const int first = t == 0 ? 0 : half;
    const int last = t == 0 ? half : num_chunks;
    for (int q = 0; q < last - first; ++q) {
      const ChunkId chunk = first + q;
      for (const TreeNode& node : nodes) {
        if (node.parent < 0) continue;
        const NpuId child = members[node.rank];
        const NpuId parent = members[node.parent];
        // Up: a node at depth d sends chunk q at step q + (D - d), after its children.
        if (kind != CollectiveKind::kBroadcast)
          schedule.send(child, parent, q + (max_depth - node.depth), chunk, /*reduce=*/true);
        // Down: the parent (depth d - 1) sends chunk q at step base + q + d - 1.
        if (kind != CollectiveKind::kReduce) {
          const std::int64_t base = kind == CollectiveKind::kAllReduce ? max_depth : 0;
          schedule.send(parent, child, base + q + node.depth - 1, chunk);
        }
      }
    }
  }
  return schedule.build("dbt", model);
}

}  // namespace tacos::detail
