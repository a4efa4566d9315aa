// The torus-trees baseline (baselines.h): Broadcast and Reduce on a 2D torus over four spanning
// trees from the root, one per link out of it, no link in two of them. A unicast Broadcast must
// bring the whole buffer into every NPU over its four links in, so the bound asks every link to
// carry a quarter of it: four trees that share no link do exactly that, each quarter pipelined
// chunk by chunk down its tree. With the root at (0, 0), x along dimension 0 (W NPUs) and y
// along dimension 1 (H NPUs), the tree that leaves the root eastwards runs along row 0 (x + 1),
// then up every other column (y + 1), and enters column 0 from the east end of each row; the
// others are the same turned by a quarter each (north: column 0, then westwards along every
// row, then into row 0 from the top; west; south). That is W + H - 1 deep; a local search then
// reorders which tree takes which link into each NPU to make them shallower (make_shallower).
// Every hop is a message, so it pays where a latency does not hold a link (the astra link
// model) and chunks are small.
#include <algorithm>
#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"

namespace tacos::detail {
namespace {

constexpr int kTrees = 4;
// Tori of at most this many NPUs have their trees made shallower by the local search below
// (about 3 s on torus2d:32x32, once per torus shape in a process); larger ones keep the
// construction as it is.
constexpr int kSearchedNpus = 1024;

// The four trees of a W x H torus rooted at NPU 0 (x + W y, the root at (0, 0)): per NPU its
// parent in each tree (the root's entries unused).
struct Forest {
  std::vector<std::array<NpuId, kTrees>> parent;
};

int wrap(int v, int size) { return ((v % size) + size) % size; }

// The construction of the file's comment: tree 0 east, 1 north, 2 west, 3 south.
Forest construct(int w, int h) {
  Forest f{std::vector<std::array<NpuId, kTrees>>(static_cast<std::size_t>(w) * h)};
  auto id = [&](int x, int y) { return wrap(x, w) + w * wrap(y, h); };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (x == 0 && y == 0) continue;
      auto& p = f.parent[static_cast<std::size_t>(id(x, y))];
      p[0] = y == 0 ? id(x - 1, 0) : x != 0 ? id(x, y - 1) : id(w - 1, y);
      p[1] = x == 0 ? id(0, y - 1) : y != 0 ? id(x + 1, y) : id(x, h - 1);
      p[2] = y == 0 ? id(x + 1, 0) : x != 0 ? id(x, y + 1) : id(1, y);
      p[3] = x == 0 ? id(0, y + 1) : y != 0 ? id(x - 1, y) : id(x, 1);
    }
  return f;
}

// Depths in tree q (the root 0), or empty where the tree has a cycle.
std::vector<int> depths(const Forest& f, int q) {
  const auto n = f.parent.size();
  std::vector<int> depth(n, -1);
  depth[0] = 0;
  std::vector<NpuId> path;
  for (std::size_t v = 0; v < n; ++v) {
    path.clear();
    auto u = static_cast<NpuId>(v);
    while (depth[static_cast<std::size_t>(u)] < 0) {
      path.push_back(u);
      if (path.size() > n) return {};
      u = f.parent[static_cast<std::size_t>(u)][static_cast<std::size_t>(q)];
    }
    int d = depth[static_cast<std::size_t>(u)];
    for (auto it = path.rbegin(); it != path.rend(); ++it)
      depth[static_cast<std::size_t>(*it)] = ++d;
  }
  return depth;
}

// How deep the four trees are, to be made smaller in this order: the deepest NPU's depth, how
// many NPUs lie that deep, the sum of the squared depths.
struct Depth {
  int deepest = 0;
  std::int64_t at_deepest = 0, squares = 0;
  auto operator<=>(const Depth&) const = default;
};

Depth measure(const std::array<std::vector<int>, kTrees>& depth) {
  Depth m;
  for (const auto& tree : depth)
    for (const int d : tree) {
      if (d > m.deepest) m.deepest = d, m.at_deepest = 0;
      if (d == m.deepest) ++m.at_deepest;
      m.squares += static_cast<std::int64_t>(d) * d;
    }
  return m;
}

// The construction is twice as deep as the torus's diameter (W + H - 1). Each NPU's four links
// in can go to the four trees in any order, so exchange two trees' links in at one NPU wherever
// both stay trees and the forest gets shallower, NPUs in a shuffled order, until a whole pass
// finds nothing. mt19937, whose output the standard fixes: the same trees everywhere.
Depth make_shallower(Forest& f, unsigned seed) {
  const auto n = static_cast<int>(f.parent.size());
  std::array<std::vector<int>, kTrees> depth;
  for (int q = 0; q < kTrees; ++q) depth[static_cast<std::size_t>(q)] = depths(f, q);
  Depth best = measure(depth);
  std::mt19937 random(seed);
  std::vector<NpuId> order(static_cast<std::size_t>(n - 1));
  for (int v = 1; v < n; ++v) order[static_cast<std::size_t>(v - 1)] = v;
  for (bool improved = true; improved;) {
    improved = false;
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[random() % i]);
    for (const NpuId v : order) {
      auto& p = f.parent[static_cast<std::size_t>(v)];
      for (int a = 0; a < kTrees; ++a)
        for (int b = a + 1; b < kTrees; ++b) {
          const auto qa = static_cast<std::size_t>(a), qb = static_cast<std::size_t>(b);
          std::swap(p[qa], p[qb]);
          auto tried = depth;
          tried[qa] = depths(f, a);
          if (!tried[qa].empty()) tried[qb] = depths(f, b);
          if (!tried[qa].empty() && !tried[qb].empty()) {
            const Depth m = measure(tried);
            if (m < best) {
              best = m;
              depth = std::move(tried);
              improved = true;
              continue;
            }
          }
          std::swap(p[qa], p[qb]);
        }
    }
  }
  return best;
}

// The trees of a W x H torus, made once per shape.
const Forest& forest(int w, int h) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, Forest> made;
  std::lock_guard lock(mutex);
  auto it = made.find({w, h});
  if (it == made.end()) {
    // The best of several searches, 4 x 1,024 / N of them (4 to 64): torus2d:32x32 63 -> 38 or
    // 37 deep by seed (4 seeds, about 3 s), 33 at least; torus2d:16x16 31 -> 19 (16 seeds, 0.7
    // s; 64 would find 18 in 3 s), 17 at least.
    Forest f = construct(w, h);
    if (w * h <= kSearchedNpus) {
      const int seeds = std::clamp(4 * kSearchedNpus / (w * h), 4, 64);
      std::optional<std::pair<Depth, Forest>> best;
      for (int seed = 1; seed <= seeds; ++seed) {
        Forest tried = f;
        const Depth d = make_shallower(tried, static_cast<unsigned>(seed));
        if (!best || d < best->first) best.emplace(d, std::move(tried));
      }
      f = std::move(best->second);
    }
    it = made.emplace(std::pair{w, h}, std::move(f)).first;
  }
  return it->second;
}

}  // namespace

std::optional<std::string> torus_trees_inapplicable(const Topology& network,
                                                    const Collective& collective) {
  // torus2d:WxH, or ring:W,ring:H (the same network as ASTRA-sim dimensions).
  const TopologyShape& shape = network.shape();
  if ((shape.kind != TopologyKind::kTorus2d && shape.kind != TopologyKind::kDimensions) ||
      network.switches() > 0 || shape.dimensions.size() != 2 ||
      shape.dimensions[0].size * shape.dimensions[1].size != network.npus())
    return "torus-trees needs a 2D torus (such as torus2d:8x8 or ring:8,ring:8)";
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
  const int w = topology.shape().dimensions[0].size, h = topology.shape().dimensions[1].size;
  const Forest& trees = forest(w, h);
  // The trees are made for a root at NPU 0; the torus looks the same from every NPU.
  const int rx = root % w, ry = root / w;
  auto placed = [&](NpuId v) { return wrap(v % w + rx, w) + w * wrap(v / w + ry, h); };
  const bool reduce = kind == CollectiveKind::kReduce;
  std::array<std::vector<int>, kTrees> depth;
  int deepest = 0;
  for (int q = 0; q < kTrees; ++q) {
    depth[static_cast<std::size_t>(q)] = depths(trees, q);
    for (const int d : depth[static_cast<std::size_t>(q)]) deepest = std::max(deepest, d);
  }
  // Chunk c goes down tree c mod 4 as that tree's (c / 4)-th: a node at depth d forwards it at
  // step c / 4 + d - 1, once it has arrived. Reduce runs the same steps backwards.
  const std::int64_t last = (chunks - 1) / kTrees + deepest - 1;
  LogicalSchedule schedule(topology, timing, collective);
  for (ChunkId c = 0; c < chunks; ++c) {
    const auto q = static_cast<std::size_t>(c % kTrees);
    const std::int64_t index = c / kTrees;
    for (NpuId v = 1; v < n; ++v) {
      const NpuId from = placed(trees.parent[static_cast<std::size_t>(v)][q]);
      const NpuId to = placed(v);
      const std::int64_t step = index + depth[q][static_cast<std::size_t>(v)] - 1;
      if (reduce)
        schedule.send(to, from, last - step, c, /*reduce=*/true);
      else
        schedule.send(from, to, step, c);
    }
  }
  return schedule.build("torus-trees", model, kTorusTreesTransferBudget);
}

}  // namespace tacos::detail
