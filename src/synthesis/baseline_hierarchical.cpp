// The hierarchical baseline (baselines.h): BlueConnect-style, one dimension at a time.
#include <cstdint>
#include <vector>

#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"

namespace tacos::detail {

Algorithm hierarchical_baseline(const Topology& topology, const Topology& timing,
                                const Collective& collective, LinkModel model) {
  using Wiring = DimensionWiring;
  const std::vector<ShapeDimension>& dims = topology.shape().dimensions;
  const int n = collective.num_members();
  const int k_count = collective.chunks_per_npu();
  const CollectiveKind kind = collective.kind();
  if (n != topology.npus())
    throw Error("hierarchical needs every NPU of the topology in the collective");
  struct Dim {
    Wiring wiring;
    int size;
    int stride;
  };
  std::vector<Dim> active;  // dimensions of size > 1, dimension 0 first
  {
    std::int64_t stride = 1;
    for (const ShapeDimension& d : dims) {
      if (d.size > 1) active.push_back({d.wiring, d.size, static_cast<int>(stride)});
      stride *= d.size;
    }
    if (stride != n)
      throw Error("hierarchical: the topology spec has " + std::to_string(stride) +
                  " NPUs but the collective " + std::to_string(n));
  }
  auto coord = [&](int npu, const Dim& d) { return (npu / d.stride) % d.size; };

  LogicalSchedule schedule(topology, timing, collective);
  std::vector<ChunkId> chunks;
  // Chunks (piece k) whose owner agrees with `base` on the dimensions before `d` and has
  // coordinate x along `d`: what member x of base's group along d gets in the reduce-scatter.
  auto block = [&](std::size_t d, int base, int x, int k) {
    chunks.clear();
    for (int owner = 0; owner < n; ++owner) {
      bool match = coord(owner, active[d]) == x;
      for (std::size_t e = 0; e < d && match; ++e)
        match = coord(owner, active[e]) == coord(base, active[e]);
      if (match) chunks.push_back(owner * k_count + k);
    }
    return std::span<const ChunkId>(chunks);
  };
  // Ring positions within a group: coordinate order round a ring, zig-zag over a line.
  auto ring_positions = [&](const Dim& d) {
    std::vector<int> order;
    if (d.wiring == Wiring::kLine) {
      for (int x = 0; x < d.size; x += 2) order.push_back(x);
      for (int x = d.size - 1 - (d.size % 2 == 0 ? 0 : 1); x > 0; x -= 2) order.push_back(x);
    } else {
      for (int x = 0; x < d.size; ++x) order.push_back(x);
    }
    return order;
  };
  // One phase along dimension d in every group; returns the next free step.
  auto phase = [&](std::size_t d, bool reduce, std::int64_t base) {
    const Dim& dim = active[d];
    const int m = dim.size;
    const bool direct = dim.wiring == Wiring::kFullyConnected || dim.wiring == Wiring::kSwitch;
    const std::vector<int> ring = ring_positions(dim);
    auto at = [&](int p) { return ring[((p % m) + m) % m]; };
    for (int lead = 0; lead < n; ++lead) {
      if (coord(lead, dim) != 0) continue;
      auto npu = [&](int x) { return lead + x * dim.stride; };
      for (int k = 0; k < k_count; ++k) {
        if (direct) {
          for (int x = 0; x < m; ++x)
            for (int y = 0; y < m; ++y) {
              if (x == y) continue;
              if (reduce)  // y sends its partial of x's block to x
                schedule.send(npu(y), npu(x), base + k, block(d, lead, x, k), true);
              else  // x sends its block to y
                schedule.send(npu(x), npu(y), base + k, block(d, lead, x, k));
            }
          continue;
        }
        const std::int64_t step = base + std::int64_t{k} * (m - 1);
        for (int b = 0; b < m; ++b)
          for (int h = 0; h + 1 < m; ++h) {
            if (reduce)  // x = at(b)'s block goes round from at(b + 1) and ends at at(b)
              schedule.send(npu(at(b + 1 + h)), npu(at(b + 2 + h)), step + h,
                            block(d, lead, at(b), k), true);
            else
              schedule.send(npu(at(b + h)), npu(at(b + h + 1)), step + h, block(d, lead, at(b), k));
          }
      }
    }
    return base + (direct ? k_count : std::int64_t{k_count} * (m - 1));
  };
  std::int64_t step = 0;
  if (kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kAllReduce)
    for (std::size_t d = 0; d < active.size(); ++d) step = phase(d, true, step);
  if (kind == CollectiveKind::kAllGather || kind == CollectiveKind::kAllReduce)
    for (std::size_t d = active.size(); d-- > 0;) step = phase(d, false, step);
  if (step == 0)
    throw Error("hierarchical is defined for all-gather, reduce-scatter and all-reduce, not " +
                to_string(kind));
  return schedule.build("hierarchical", model);
}

}  // namespace tacos::detail
