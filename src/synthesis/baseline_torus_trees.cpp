// The torus-trees baseline (baselines.h): Broadcast and Reduce on a 2D torus over four spanning
// trees from the root, one per link out of it, no link in two of them. A unicast Broadcast must
// bring the whole buffer into every NPU over its four links in, so the bound asks every link to
// carry a quarter of it: four trees that share no link do exactly that, each quarter pipelined
// chunk by chunk down its tree. With the root at (0, 0), x along dimension 0 (W NPUs) and y
// along dimension 1 (H NPUs), the tree that leaves the root eastwards runs along row 0 (x + 1),
// then up every other column (y + 1), and enters column 0 from the east end of each row; the
// others are the same turned by a quarter each (north: column 0, then westwards along every
// row, then into row 0 from the top; west; south). Depth W + H - 1, so it pays where a
// latency does not hold a link (the astra link model) and chunks are small.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"

namespace tacos::detail {
namespace {

constexpr int kTrees = 4;

// Coordinates relative to the root, wrapped into [0, size).
struct Torus {
  int w, h;
  int rx, ry;  // the root's coordinates
  int wrap(int v, int size) const { return ((v % size) + size) % size; }
  NpuId id(int x, int y) const { return wrap(x + rx, w) + w * wrap(y + ry, h); }
  int x_of(NpuId v) const { return wrap(v % w - rx, w); }
  int y_of(NpuId v) const { return wrap(v / w - ry, h); }
};

// v's parent in tree q (0: east, 1: north, 2: west, 3: south), v not the root.
NpuId parent(const Torus& t, int q, NpuId v) {
  const int x = t.x_of(v), y = t.y_of(v);
  switch (q) {
    case 0:
      if (y == 0) return t.id(x - 1, 0);
      return x != 0 ? t.id(x, y - 1) : t.id(t.w - 1, y);
    case 1:
      if (x == 0) return t.id(0, y - 1);
      return y != 0 ? t.id(x + 1, y) : t.id(x, t.h - 1);
    case 2:
      if (y == 0) return t.id(x + 1, 0);
      return x != 0 ? t.id(x, y + 1) : t.id(1, y);
    default:
      if (x == 0) return t.id(0, y + 1);
      return y != 0 ? t.id(x - 1, y) : t.id(x, 1);
  }
}

// Depths in tree q (the root 0).
std::vector<int> depths(const Torus& t, int q, NpuId root) {
  const int n = t.w * t.h;
  std::vector<int> depth(static_cast<std::size_t>(n), -1);
  depth[static_cast<std::size_t>(root)] = 0;
  std::vector<NpuId> path;
  for (NpuId v = 0; v < n; ++v) {
    path.clear();
    NpuId u = v;
    while (depth[static_cast<std::size_t>(u)] < 0) {
      path.push_back(u);
      if (static_cast<int>(path.size()) > n)
        throw Error("torus-trees: internal error: tree " + std::to_string(q) + " has a cycle");
      u = parent(t, q, u);
    }
    int d = depth[static_cast<std::size_t>(u)];
    for (auto it = path.rbegin(); it != path.rend(); ++it)
      depth[static_cast<std::size_t>(*it)] = ++d;
  }
  return depth;
}

}  // namespace

std::optional<std::string> torus_trees_inapplicable(const Topology& network,
                                                    const Collective& collective) {
  const TopologyShape& shape = network.shape();
  if (shape.kind != TopologyKind::kTorus2d || network.switches() > 0 ||
      shape.dimensions.size() != 2)
    return "torus-trees needs a 2D torus (such as torus2d:8x8)";
  for (const ShapeDimension& d : shape.dimensions)
    if (d.wiring != DimensionWiring::kRing || d.size < 3)
      return "torus-trees needs both rings of the torus 3 NPUs long or more (" + network.name() +
             ")";
  if (collective.num_members() != network.npus())
    return "torus-trees needs every NPU of the torus in the collective";
  return std::nullopt;
}

Algorithm torus_trees_baseline(const Topology& topology, const Topology& timing,
                               const Collective& collective, LinkModel model) {
  if (const auto reason = torus_trees_inapplicable(topology, collective)) throw Error(*reason);
  const CollectiveKind kind = collective.kind();
  if (kind != CollectiveKind::kBroadcast && kind != CollectiveKind::kReduce)
    throw Error("torus-trees is defined for broadcast and reduce, not " + to_string(kind));
  const int n = topology.npus();
  const int chunks = collective.num_chunks();
  // Every chunk reaches every other NPU over one link: the count is known before planning.
  require_transfers_within(static_cast<double>(n - 1) * chunks, kTorusTreesTransferBudget,
                           "%.0f chunk transfers > %.0f, torus-trees' budget");
  const NpuId root = collective.root();
  const Torus torus{topology.shape().dimensions[0].size, topology.shape().dimensions[1].size,
                    root % topology.shape().dimensions[0].size,
                    root / topology.shape().dimensions[0].size};
  const bool reduce = kind == CollectiveKind::kReduce;
  std::vector<std::vector<int>> depth;
  int deepest = 0;
  for (int q = 0; q < kTrees; ++q) {
    depth.push_back(depths(torus, q, root));
    for (const int d : depth.back()) deepest = std::max(deepest, d);
  }
  // Chunk c goes down tree c mod 4 as that tree's (c / 4)-th: a node at depth d forwards it at
  // step c / 4 + d - 1, once it has arrived. Reduce runs the same steps backwards.
  const std::int64_t last = (chunks - 1) / kTrees + deepest - 1;
  LogicalSchedule schedule(topology, timing, collective);
  for (ChunkId c = 0; c < chunks; ++c) {
    const int q = c % kTrees;
    const std::int64_t index = c / kTrees;
    for (NpuId v = 0; v < n; ++v) {
      if (v == root) continue;
      const NpuId up = parent(torus, q, v);
      const std::int64_t step = index + depth[static_cast<std::size_t>(q)][v] - 1;
      if (reduce)
        schedule.send(v, up, last - step, c, /*reduce=*/true);
      else
        schedule.send(up, v, step, c);
    }
  }
  return schedule.build("torus-trees", model, kTorusTreesTransferBudget);
}

}  // namespace tacos::detail
