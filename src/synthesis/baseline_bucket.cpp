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
// All-to-All: every chunk goes one dimension at a time (the shorter way round a ring, an even
// ring's antipode from either side), the dimension orders spread over the chunks, and all that
// crosses a link at the same hop of the same phase for the same piece goes as one message.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <tuple>
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

// v modulo size, in [0, size).
int wrap(int v, int size) { return (v % size + size) % size; }

// An NPU's position along `d`.
int coordinate(NpuId npu, const Dimension& d) { return (npu / d.stride) % d.size; }

// Hops from position a to b along `d`: straight on a line, the shorter way round a ring.
int dimension_distance(const Dimension& d, int a, int b) {
  const int forward = wrap(b - a, d.size);
  return d.wiring == DimensionWiring::kLine ? std::abs(b - a) : std::min(forward, d.size - forward);
}

// The dimension order of each (offset between sender and receiver, piece), and the side an
// even ring's antipode is reached from. Phase p works dimension e with order (e - p) mod
// orders, so the phases take about the sum over phases of their most loaded direction of a
// dimension. Offsets are taken largest first, each to the order where that sum grows least,
// then where the squared loads grow least (each direction's load even over the orders). By the
// offset alone (not the pair), every link of a torus dimension carries the same at every hop,
// so no hop waits on a larger message upstream. (Orders by a hash of the pair, or balancing
// dimensions but not their directions, left phases uneven: docs/quality.md, "Measured choices".)
class OrderTable {
 public:
  OrderTable(const std::vector<Dimension>& active, int pieces) : active_(active), pieces_(pieces) {
    const std::size_t dims = active_.size();
    const int orders = std::max<int>(1, static_cast<int>(dims));
    for (const Dimension& d : active_) offsets_ *= range(d);
    struct Offset {
      int index;
      std::vector<int> forward;  // (b - a) mod size per dimension
      std::vector<int> diff;     // b - a per dimension (cyclic: the forward offset)
      std::int64_t pairs = 1;
      std::int64_t weight = 0;  // pairs x hops
    };
    std::vector<Offset> all(offsets_);
    for (int o = 0; o < offsets_; ++o) {
      Offset& offset = all[o];
      offset.index = o;
      int rest = o;
      std::int64_t hops = 0;
      for (const Dimension& d : active_) {
        const int v = rest % range(d);
        rest /= range(d);
        const int diff = cyclic(d) ? v : v - (d.size - 1);
        offset.diff.push_back(diff);
        offset.forward.push_back(wrap(diff, d.size));
        offset.pairs *= cyclic(d) ? d.size : d.size - std::abs(diff);
        hops += cyclic(d) ? std::min(diff, d.size - diff) : std::abs(diff);
      }
      offset.weight = offset.pairs * hops;
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const Offset& x, const Offset& y) { return x.weight > y.weight; });
    order_.assign(static_cast<std::size_t>(offsets_) * pieces_, 0);
    // load[order][2 e] (+ way) and [2 e + 1] (- way), in pair hops.
    std::vector<std::vector<std::int64_t>> load(orders, std::vector<std::int64_t>(2 * dims, 0));
    std::vector<std::int64_t> add(2 * dims);
    for (int k = 0; k < pieces_; ++k)
      for (const Offset& offset : all) {
        if (offset.weight == 0) continue;
        std::fill(add.begin(), add.end(), 0);
        for (std::size_t e = 0; e < dims; ++e) {
          const Dimension& d = active_[e];
          const int f = offset.forward[e];
          if (f == 0) continue;
          if (d.size == 2) {  // a hypercube's edge: half the pairs each way
            add[2 * e] += offset.pairs / 2;
            add[2 * e + 1] += offset.pairs - offset.pairs / 2;
          } else if (!cyclic(d)) {
            add[2 * e + (offset.diff[e] > 0 ? 0 : 1)] += offset.pairs * std::abs(offset.diff[e]);
          } else if (2 * f != d.size) {
            add[2 * e + (2 * f < d.size ? 0 : 1)] += offset.pairs * std::min(f, d.size - f);
          } else {
            int others = 0;
            for (std::size_t g = 0; g < dims; ++g)
              if (g != e) others += offset.forward[g];
            add[2 * e + (forward_at_antipode(others, k) ? 0 : 1)] += offset.pairs * f;
          }
        }
        int best = 0;
        std::pair<std::int64_t, std::int64_t> best_cost{-1, -1};
        for (int r = 0; r < orders; ++r) {
          std::int64_t squares = 0;
          for (std::size_t a = 0; a < 2 * dims; ++a) {
            squares += add[a] * (2 * load[r][a] + add[a]);
            load[r][a] += add[a];
          }
          std::int64_t phases = 0;
          for (int p = 0; p < orders; ++p) {
            std::int64_t most = 0;
            for (std::size_t a = 0; a < 2 * dims; ++a)
              most = std::max(most, load[(static_cast<int>(a / 2) - p + orders) % orders][a]);
            phases += most;
          }
          for (std::size_t a = 0; a < 2 * dims; ++a) load[r][a] -= add[a];
          if (best_cost.first < 0 || std::make_pair(phases, squares) < best_cost) {
            best_cost = {phases, squares};
            best = r;
          }
        }
        for (std::size_t a = 0; a < 2 * dims; ++a) load[best][a] += add[a];
        order_[static_cast<std::size_t>(k) * offsets_ + offset.index] = best;
      }
  }

  // The order of the chunk from NPU `from` to NPU `to`, piece k.
  int order(NpuId from, NpuId to, int k) const {
    int index = 0, scale = 1;
    for (const Dimension& d : active_) {
      const int diff = coordinate(to, d) - coordinate(from, d);
      index += (cyclic(d) ? wrap(diff, d.size) : diff + d.size - 1) * scale;
      scale *= range(d);
    }
    return order_[static_cast<std::size_t>(k) * offsets_ + index];
  }

  // Whether the chunk reaches its antipode along ring dimension e the positive way: by the
  // other dimensions' offsets and the piece, so each way takes about half.
  bool antipode_forward(NpuId from, NpuId to, int k, std::size_t e) const {
    int others = 0;
    for (std::size_t f = 0; f < active_.size(); ++f)
      if (f != e)
        others += wrap(coordinate(to, active_[f]) - coordinate(from, active_[f]), active_[f].size);
    return forward_at_antipode(others, k);
  }

 private:
  // A line of two is a ring of two (a hypercube's dimensions): offsets by difference, not
  // direction, so that the table sees the same classes from every NPU.
  static bool cyclic(const Dimension& d) {
    return d.wiring != DimensionWiring::kLine || d.size == 2;
  }
  static int range(const Dimension& d) { return cyclic(d) ? d.size : 2 * d.size - 1; }
  // `others`: the sum of the other dimensions' forward offsets.
  static bool forward_at_antipode(int others, int k) { return (others + k) % 2 == 0; }

  const std::vector<Dimension>& active_;
  int pieces_;
  int offsets_ = 1;
  std::vector<int> order_;
};

Algorithm bucket_all_to_all(const Topology& topology, const Topology& timing,
                            const Collective& collective, LinkModel model,
                            const std::vector<Dimension>& active) {
  const int n = collective.num_members();
  const int k_count = collective.chunks_per_npu();
  const auto& members = collective.members();
  const int dims = static_cast<int>(active.size());
  // Every chunk's hops are known before anything is planned: the budget first.
  double chunk_hops = 0;
  int longest_phase = 0;
  for (const Dimension& d : active) {
    double sum = 0;
    for (int a = 0; a < d.size; ++a)
      for (int b = 0; b < d.size; ++b) sum += dimension_distance(d, a, b);
    const double others = static_cast<double>(n) / d.size;
    chunk_hops += sum * others * others;
    longest_phase = std::max(longest_phase, phase_hops(d));
  }
  chunk_hops *= k_count;
  require_transfers_within(chunk_hops, kBucketAllToAllBudget,
                           "%.0f chunk transfers > %.0f, the budget of bucket's All-to-All");
  // Step by step (phase, hop, piece), so only one step's hops are held at a time: at 1,024
  // NPUs all of them would be 16.8 million.
  const OrderTable orders(active, k_count);
  // Each chunk's dimension order, looked up once rather than at every (phase, hop).
  std::vector<std::uint16_t> rotation_of(static_cast<std::size_t>(n) * n * k_count);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < k_count; ++k)
        rotation_of[(static_cast<std::size_t>(i) * n + j) * k_count + k] =
            static_cast<std::uint16_t>(orders.order(members[i], members[j], k));
  struct Hop {
    NpuId from, to;
    ChunkId chunk;
  };
  std::vector<Hop> hops;
  std::vector<ChunkId> message;
  LogicalSchedule schedule(topology, timing, collective);
  for (int p = 0; p < dims; ++p)
    for (int h = 0; h < longest_phase; ++h)
      for (int k = 0; k < k_count; ++k) {
        hops.clear();
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) {
            if (i == j) continue;
            const NpuId source = members[i];
            const NpuId target = members[j];
            const auto chunk =
                static_cast<ChunkId>((static_cast<std::int64_t>(i) * n + j) * k_count + k);
            const int rotation = rotation_of[static_cast<std::size_t>(chunk)];
            const std::size_t e = static_cast<std::size_t>((rotation + p) % dims);
            const Dimension& d = active[e];
            const int a = coordinate(source, d);
            const int b = coordinate(target, d);
            if (dimension_distance(d, a, b) <= h) continue;
            // Where the chunk starts this phase: the earlier phases' coordinates are the
            // target's.
            NpuId at = source;
            for (int q = 0; q < p; ++q) {
              const Dimension& earlier = active[(rotation + q) % dims];
              at += (coordinate(target, earlier) - coordinate(source, earlier)) * earlier.stride;
            }
            int sign = b > a ? 1 : -1;
            if (d.wiring != DimensionWiring::kLine) {
              const int forward = wrap(b - a, d.size);
              sign = 2 * forward < d.size                            ? 1
                     : 2 * forward > d.size                          ? -1
                     : orders.antipode_forward(source, target, k, e) ? 1
                                                                     : -1;
            }
            const int from = wrap(a + sign * h, d.size);
            const int to = wrap(a + sign * (h + 1), d.size);
            hops.push_back({at + (from - a) * d.stride, at + (to - a) * d.stride, chunk});
          }
        std::stable_sort(hops.begin(), hops.end(), [](const Hop& x, const Hop& y) {
          return std::tie(x.from, x.to) < std::tie(y.from, y.to);
        });
        const std::int64_t step = (static_cast<std::int64_t>(p) * longest_phase + h) * k_count + k;
        for (std::size_t first = 0; first < hops.size();) {
          std::size_t last = first;
          message.clear();
          while (last < hops.size() && hops[last].from == hops[first].from &&
                 hops[last].to == hops[first].to)
            message.push_back(hops[last++].chunk);
          schedule.send(hops[first].from, hops[first].to, step, message);
          first = last;
        }
      }
  return schedule.build("bucket", model, kBucketAllToAllBudget);
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
  std::vector<Dimension> active;
  {
    int stride = 1;
    for (const ShapeDimension& d : topology.shape().dimensions) {
      if (d.size > 1) active.push_back({d.wiring, d.size, stride});
      stride *= d.size;
    }
  }
  if (collective.kind() == CollectiveKind::kAllToAll)
    return bucket_all_to_all(topology, timing, collective, model, active);
  const int rotations = std::max<int>(1, static_cast<int>(active.size()));
  // Every message goes to a neighbour: the budget is known before anything is planned. Below one
  // piece per dimension order some links idle in every phase (K = 1 on a 2D torus: about twice
  // the bound), so there the baselines' budget holds and bucket's own only from K = dimensions.
  const bool every_link = k_count >= rotations;
  const std::string over_budget =
      every_link ? "%.0f chunk transfers > %.0f, bucket's budget"
                 : "%.0f chunk transfers > %.0f, the baselines' budget (bucket's own, " +
                       std::to_string(static_cast<std::int64_t>(kBucketTransferBudget)) +
                       ", from one piece per dimension order on)";
  AllGatherPlan plan(collective, every_link ? kBucketTransferBudget : kBaselineTransferBudget,
                     over_budget.c_str());
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
            same = coordinate(owner, later) == coordinate(v, later);
          }
          if (same) block.push_back(static_cast<ChunkId>(owner * k_count + piece));
        }
        const int x = coordinate(v, d);
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
            const int from = wrap(x + sign * h, m);
            const int to = wrap(x + sign * (h + 1), m);
            add(from, to, h, part);
          }
        }
      }
    }
  }
  return plan.build(topology, timing, collective, "bucket", model);
}

}  // namespace tacos::detail
