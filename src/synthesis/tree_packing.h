#pragma once
// All-Reduce over a packing of spanning trees: every tree reduces its share of the chunks towards
// its root and broadcasts them back down, pipelined chunk by chunk. Each undirected edge then
// carries every chunk of every tree it belongs to once each way, so a packing that spreads the
// trees evenly over the links (in proportion to their bandwidth) loads every link alike; that is
// the All-Reduce's cut bound (2(n-1) chunk crossings per chunk over all links), which the
// Reduce-Scatter + All-Gather structure cannot reach where NPUs differ in degree (a mesh's
// corners relay as much as its centre).
#include <cstdint>
#include <optional>
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/collective/collective.h"
#include "tacos/common/link_model.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

// A spanning tree over the NPUs: parent[v] (-1 at the root) and the NPUs in breadth-first
// order from the root.
struct SpanningTree {
  std::vector<NpuId> parent;
  std::vector<NpuId> order;
  int height = 0;
};

// `count` spanning trees over the links that run both ways (bandwidth = the slower direction),
// each grown by Prim's algorithm from a central NPU, an edge's key its load so far (trees on it
// per unit of bandwidth) plus a penalty per level of depth, then each rebuilt a few times
// against the others' loads (a multiplicative-weights style packing that keeps trees shallow);
// equal keys broken by `seed`. Each tree is rooted at its centre. Empty when those links do not
// connect every NPU.
std::vector<SpanningTree> pack_spanning_trees(const Topology& topology, int count,
                                              std::uint64_t seed);

// The All-Reduce over `num_trees` packed trees (chunk c on tree c mod num_trees; each tree
// reduces up and broadcasts down, list-scheduled on the links, ready messages of one direction
// merged up to `max_batch` chunks, the order then improved by forward-backward rounds: each
// message ranked by how late it may start), compacted by the simulator under `model`; nullopt
// when it does not apply (switch devices, a collective on a subset of the NPUs, no spanning
// tree of two-way links).
std::optional<Algorithm> tree_packing_all_reduce(const Topology& topology,
                                                 const Collective& all_reduce, int num_trees,
                                                 int max_batch, LinkModel model,
                                                 std::uint64_t seed);

// Beyond these the candidate is not tried (its plan holds 2(n-1) x chunks messages).
constexpr int kTreePackingMaxNpus = 256;
constexpr double kTreePackingMaxMessages = 1e6;

// The fastest of tree_packing_all_reduce over 16, 64, 256 and 1024 trees (at most one per
// chunk) and batches of 1, 2, 4 and 8 chunks (every pair list-scheduled, the fastest one to
// three improved by forward-backward rounds), or nullopt where it does not apply or is too
// large.
std::optional<Algorithm> best_tree_packing_all_reduce(const Topology& topology,
                                                      const Collective& all_reduce, LinkModel model,
                                                      std::uint64_t seed);

}  // namespace tacos::detail
