// The bucket baseline (baselines.h): the multi-dimensional bidirectional bucket algorithm of
// tori and meshes. All-Gather along one dimension at a time, as hierarchical does, but
// - the pieces are spread over the rotations of the dimension order (2D: half rows first, half
//   columns first), so every dimension's links carry their share in every phase instead of one
//   dimension's links idling while the other's work;
// - within a dimension every block goes both ways round (a ring: halfway each way, the
//   antipode's copy split between the two; a line: to each end), so a phase takes about m / 2
//   steps on a ring of m, not m - 1.
// Each directed link then carries the cut bound's bytes of a torus in about half a ring's steps
// per dimension: on torus2d:32x32 32 messages per link where the ring needs 2 x 31.
// Reduce-Scatter is the time reversal; All-Reduce both.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "all_gather_plan.h"
#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"

namespace tacos::detail {
namespace {

struct Dimension {
  DimensionWiring wiring;
  int size;
  int stride;
};

// Logical steps a phase along `d` takes: a ring sends to the nearer half each way (the antipode
// of an even ring from both sides), a line to each end.
int phase_hops(const Dimension& d) {
  return d.wiring == DimensionWiring::kLine ? d.size - 1 : d.size / 2;
}

}  // namespace

std::optional<std::string> bucket_inapplicable(const Topology& network,
                                               const Collective& collective) {
  const auto& dims = network.shape().dimensions;
  if (collective.num_members() != network.npus())
    return "bucket needs every NPU of the topology in the collective";
  if (network.switches() > 0 || dims.empty())
    return "bucket needs a torus, mesh or ring generator topology (such as torus2d:8x8)";
  std::int64_t npus = 1;
  for (const ShapeDimension& d : dims) {
    npus *= d.size;
    if (d.size > 1 && d.wiring != DimensionWiring::kRing && d.wiring != DimensionWiring::kLine)
      return "bucket needs ring or line dimensions (a torus, mesh or ring); " + network.name() +
             " has others";
  }
  if (npus != network.npus())
    return "bucket: the dimensions of " + network.name() + " hold " + std::to_string(npus) +
           " NPUs, the topology " + std::to_string(network.npus());
  return std::nullopt;
}

Algorithm bucket_baseline(const Topology& topology, const Topology& timing,
                          const Collective& collective, LinkModel model) {
  if (const auto reason = bucket_inapplicable(topology, collective)) throw Error(*reason);
  const int n = collective.num_members();
  const int k_count = collective.chunks_per_npu();
  // Every message goes to a neighbour: the budget is known before anything is planned.
  AllGatherPlan plan(collective);
  std::vector<Dimension> active;
  {
    int stride = 1;
    for (const ShapeDimension& d : topology.shape().dimensions) {
      if (d.size > 1) active.push_back({d.wiring, d.size, stride});
      stride *= d.size;
    }
  }
  const int rotations = std::max<int>(1, static_cast<int>(active.size()));
  auto coord = [&](int npu, const Dimension& d) { return (npu / d.stride) % d.size; };
  // Pieces go to rotations round-robin; a rotation's pieces are pipelined one message each.
  const int pieces_per_rotation = (k_count + rotations - 1) / rotations;
  int longest_phase = 0;
  for (const Dimension& d : active) longest_phase = std::max(longest_phase, phase_hops(d));

  std::vector<ChunkId> block;
  for (int piece = 0; piece < k_count; ++piece) {
    const int rotation = piece % rotations;
    const int q = piece / rotations;
    for (std::size_t j = 0; j < active.size(); ++j) {
      const Dimension& d = active[(rotation + j) % active.size()];
      const std::int64_t phase_base =
          static_cast<std::int64_t>(j) * longest_phase * pieces_per_rotation;
      for (int v = 0; v < n; ++v) {
        // v's block: the piece of every owner that differs from v only in the dimensions
        // gathered before this phase.
        block.clear();
        for (int owner = 0; owner < n; ++owner) {
          bool same = true;
          for (std::size_t e = j; e < active.size() && same; ++e) {
            const Dimension& later = active[(rotation + e) % active.size()];
            same = coord(owner, later) == coord(v, later);
          }
          if (same) block.push_back(static_cast<ChunkId>(owner * k_count + piece));
        }
        const int x = coord(v, d);
        const int m = d.size;
        auto npu_at = [&](int position) { return v + (position - x) * d.stride; };
        auto add = [&](int from, int to, int hop, std::span<const ChunkId> chunks) {
          plan.send(npu_at(from), npu_at(to),
                    phase_base + std::int64_t{hop} * pieces_per_rotation + q, chunks);
        };
        const std::span<const ChunkId> all(block);
        if (d.wiring == DimensionWiring::kLine) {
          for (int h = 0; x + h + 1 < m; ++h) add(x + h, x + h + 1, h, all);
          for (int h = 0; x - h - 1 >= 0; ++h) add(x - h, x - h - 1, h, all);
          continue;
        }
        // Ring: each way to the nearer half; an even ring's antipode gets half of the block
        // from each side (a one-chunk block alternates its side by position and piece).
        auto wrap = [&](int p) { return ((p % m) + m) % m; };
        const int full = (m - 1) / 2;
        const bool antipode = m % 2 == 0;
        const std::size_t half = all.size() == 1 ? ((x + q) % 2 == 0 ? 1 : 0) : all.size() / 2;
        for (int sign : {1, -1}) {
          const int hops = full + (antipode ? 1 : 0);
          for (int h = 0; h < hops; ++h) {
            std::span<const ChunkId> part = all;
            if (h == full)  // the antipode's share from this side
              part = sign == 1 ? all.first(half) : all.subspan(half);
            // Positions as offsets from x, wrapped: the ring's neighbours.
            const int from = wrap(x + sign * h);
            const int to = wrap(x + sign * (h + 1));
            add(from, to, h, part);
          }
        }
      }
    }
  }
  return plan.build(topology, timing, collective, "bucket", model);
}

}  // namespace tacos::detail
