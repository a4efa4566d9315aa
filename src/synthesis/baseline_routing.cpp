// Shared machinery of the baselines: shortest-path routing, the logical schedule -> routed and
// compacted Algorithm, the ring order search and generator spec dimensions.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <numeric>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "../common/group_by.h"
#include "reduction.h"
#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"

namespace tacos::detail {
namespace {

// Destination-based shortest paths: fewest hops, then least latency, then the lowest next hop.
// Tables are built lazily per destination; neighbours need none.
class Router {
 public:
  Router(const Topology& topology, const std::string& name) : topology_(topology), name_(name) {}

  // Devices from `from` to `to`, both included.
  void path(DeviceId from, DeviceId to, std::vector<DeviceId>& out) {
    out.clear();
    out.push_back(from);
    if (from == to) return;
    if (topology_.find_link(from, to) >= 0) {
      out.push_back(to);
      return;
    }
    const std::vector<DeviceId>& next = next_hops(to);
    if (next[from] < 0)
      throw Error(name_ + ": NPU " + std::to_string(to) + " cannot be reached from NPU " +
                  std::to_string(from) + " (no path in the topology)");
    for (DeviceId d = from; d != to;) {
      d = next[d];
      out.push_back(d);
    }
  }

 private:
  const std::vector<DeviceId>& next_hops(DeviceId to) {
    auto it = tables_.find(to);
    if (it != tables_.end()) return it->second;
    using Cost = std::pair<std::int64_t, Time>;  // (hops, latency) to `to`
    constexpr Cost kInfinite{std::numeric_limits<std::int64_t>::max(), 0};
    const int devices = topology_.devices();
    std::vector<Cost> cost(devices, kInfinite);
    using Item = std::pair<Cost, DeviceId>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue;
    cost[to] = {0, 0};
    queue.push({cost[to], to});
    while (!queue.empty()) {
      const auto [c, d] = queue.top();
      queue.pop();
      if (c != cost[d]) continue;
      for (LinkId id : topology_.in_links(d)) {
        const Link& link = topology_.link(id);
        const Cost through{c.first + 1, c.second + link.latency_ps};
        if (through < cost[link.src]) {
          cost[link.src] = through;
          queue.push({through, link.src});
        }
      }
    }
    std::vector<DeviceId> next(devices, -1);
    for (DeviceId d = 0; d < devices; ++d) {
      if (d == to || cost[d] == kInfinite) continue;
      for (LinkId id : topology_.out_links(d)) {  // sorted by destination: lowest wins ties
        const Link& link = topology_.link(id);
        if (cost[link.dst] == kInfinite) continue;
        const Cost through{cost[link.dst].first + 1, cost[link.dst].second + link.latency_ps};
        if (through == cost[d]) {
          next[d] = link.dst;
          break;
        }
      }
    }
    return tables_.emplace(to, std::move(next)).first->second;
  }

  const Topology& topology_;
  const std::string& name_;
  std::unordered_map<DeviceId, std::vector<DeviceId>> tables_;
};

// Placeholder order of a transfer: (logical step, hop), compared lexicographically.
struct Key {
  std::int64_t major = 0;
  std::int64_t minor = 0;
  auto operator<=>(const Key&) const = default;
};

struct Hop {
  DeviceId src, dst;
  Key key;
  std::int64_t first_chunk;  // into the schedule's chunk pool (dual hops) or `kept` (reversed)
  std::int32_t num_chunks;
  bool reduce;
};

}  // namespace

LogicalSchedule::LogicalSchedule(const Topology& topology, const Topology& timing,
                                 const Collective& collective)
    : topology_(topology), timing_(timing), collective_(collective) {}

void LogicalSchedule::send(NpuId from, NpuId to, std::int64_t step, std::span<const ChunkId> chunks,
                           bool reduce) {
  if (chunks.empty() || from == to) return;
  messages_.push_back(Message{from, to, step, static_cast<std::int64_t>(chunk_pool_.size()),
                              static_cast<std::int32_t>(chunks.size()), reduce});
  chunk_pool_.insert(chunk_pool_.end(), chunks.begin(), chunks.end());
}

namespace {

using Message = LogicalSchedule::Message;

// Each message along its route: copies hop by hop, partial sums as their dual (copies from the
// reduction's end back along the reversed route, see keep_partial_sums).
void route_messages(Router& router, std::span<const Message> messages, std::vector<Hop>& hops,
                    std::vector<Hop>& dual) {
  std::vector<DeviceId> path;
  for (const Message& m : messages) {
    router.path(m.from, m.to, path);
    const std::int64_t length = static_cast<std::int64_t>(path.size()) - 1;
    for (std::int64_t h = 0; h < length; ++h) {
      if (!m.reduce)
        hops.push_back(
            Hop{path[h], path[h + 1], Key{m.step, h}, m.first_chunk, m.num_chunks, false});
      else  // dual hop h runs from path[length - h] back to path[length - h - 1]
        dual.push_back(Hop{path[length - h], path[length - h - 1], Key{-m.step, h}, m.first_chunk,
                           m.num_chunks, false});
    }
  }
}

// The reduction's end per chunk (-1 for a chunk no partial sum carries): an NPU that receives
// the chunk in the logical schedule and never sends it.
std::vector<DeviceId> reduction_roots(std::span<const Message> messages,
                                      std::span<const ChunkId> pool, int num_chunks, int devices,
                                      const std::string& name) {
  const auto by_chunk = group_by<std::int64_t, std::uint32_t>(
      num_chunks, messages.size(), [&](std::size_t i, auto&& emit) {
        if (messages[i].reduce)
          for (std::int32_t k = 0; k < messages[i].num_chunks; ++k)
            emit(pool[messages[i].first_chunk + k], static_cast<std::uint32_t>(i));
      });
  std::vector<DeviceId> root(num_chunks, -1);
  std::vector<char> is_sender(devices, 0);
  for (int c = 0; c < num_chunks; ++c) {
    for (std::uint32_t m : by_chunk[c]) is_sender[messages[m].from] = 1;
    for (std::uint32_t m : by_chunk[c]) {
      const NpuId to = messages[m].to;
      if (is_sender[to]) continue;
      if (root[c] >= 0 && root[c] != to)
        throw Error(name + ": internal error: the partial sums of chunk " + std::to_string(c) +
                    " end at two NPUs (" + std::to_string(root[c]) + " and " + std::to_string(to) +
                    ")");
      root[c] = to;
    }
    for (std::uint32_t m : by_chunk[c]) is_sender[messages[m].from] = 0;
  }
  return root;
}

// One chunk's place in a dual hop's chunk list.
struct Entry {
  std::uint32_t hop;
  std::int32_t pos;
};

// Scratch of keep_first_deliveries, per device; every chunk leaves it as it found it.
struct DeliveryScratch {
  std::vector<std::int64_t> first;  // position of the device's first delivery in the entries
  std::vector<char> forwards;       // the device sends the chunk on through a kept delivery
};

// Chunk c's dual entries, sorted in place by (key, hop): marks in `kept` (by entry_base[hop] +
// pos) each device's first delivery when the device is a contributor or forwards the chunk;
// the root (where the reduction ends) keeps nothing.
void keep_first_deliveries(ChunkId c, std::span<Entry> entries, const std::vector<Hop>& dual,
                           const std::vector<std::int64_t>& entry_base, DeviceId root,
                           const Collective& collective, const std::string& name,
                           DeliveryScratch& scratch, std::vector<char>& kept) {
  if (entries.empty()) return;
  auto& first = scratch.first;
  auto& forwards = scratch.forwards;
  std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    return dual[a.hop].key != dual[b.hop].key ? dual[a.hop].key < dual[b.hop].key : a.hop < b.hop;
  });
  for (std::size_t p = 0; p < entries.size(); ++p) {
    const DeviceId dst = dual[entries[p].hop].dst;
    if (dst != root && first[dst] < 0) first[dst] = static_cast<std::int64_t>(p);
  }
  for (std::size_t p = entries.size(); p-- > 0;) {
    const Hop& h = dual[entries[p].hop];
    if (first[h.dst] != static_cast<std::int64_t>(p)) continue;
    const bool contributor = collective.member_index(h.dst) >= 0;
    if (!contributor && !forwards[h.dst]) continue;
    kept[entry_base[entries[p].hop] + entries[p].pos] = 1;
    forwards[h.src] = 1;
  }
  for (const Entry& e : entries) {
    const Hop& h = dual[e.hop];
    if (forwards[h.src] && h.src != root && first[h.src] < 0)
      throw Error(name + ": internal error: chunk " + std::to_string(c) +
                  " is forwarded by device " + std::to_string(h.src) + " that never receives it");
  }
  for (NpuId npu : collective.sources(c))
    if (npu != root && first[npu] < 0)
      throw Error(name + ": internal error: the partial sum of chunk " + std::to_string(c) +
                  " never leaves NPU " + std::to_string(npu));
  for (const Entry& e : entries) {
    const Hop& h = dual[e.hop];
    first[h.src] = first[h.dst] = -1;
    forwards[h.src] = forwards[h.dst] = 0;
  }
}

// Partial sums: keep, per chunk, each device's first delivery in the dual (by key, then index)
// when the device is a contributor or forwards the chunk through a kept delivery; the dual's
// source (where the reduction ends) keeps nothing. Then reverse what is kept: appended to
// `hops` as reduce hops whose chunks (first_chunk negative) index the returned pool.
std::vector<ChunkId> keep_partial_sums(const std::vector<Hop>& dual,
                                       std::span<const Message> messages,
                                       std::span<const ChunkId> pool, const Collective& collective,
                                       int devices, const std::string& name,
                                       std::vector<Hop>& hops) {
  std::vector<ChunkId> kept_pool;
  if (dual.empty()) return kept_pool;
  const int num_chunks = collective.num_chunks();
  // Entries (dual hop, position in its chunk list), grouped by chunk.
  std::vector<std::int64_t> entry_base(dual.size() + 1, 0);
  for (std::size_t i = 0; i < dual.size(); ++i)
    entry_base[i + 1] = entry_base[i] + dual[i].num_chunks;
  auto by_chunk =
      group_by<std::int64_t, Entry>(num_chunks, dual.size(), [&](std::size_t i, auto&& emit) {
        for (std::int32_t k = 0; k < dual[i].num_chunks; ++k)
          emit(pool[dual[i].first_chunk + k], Entry{static_cast<std::uint32_t>(i), k});
      });
  const std::vector<DeviceId> root = reduction_roots(messages, pool, num_chunks, devices, name);

  std::vector<char> kept(entry_base.back(), 0);
  DeliveryScratch scratch{std::vector<std::int64_t>(devices, -1), std::vector<char>(devices, 0)};
  for (int c = 0; c < num_chunks; ++c)
    keep_first_deliveries(c, by_chunk[c], dual, entry_base, root[c], collective, name, scratch,
                          kept);
  for (std::size_t i = 0; i < dual.size(); ++i) {
    const Hop& h = dual[i];
    const std::int64_t start = static_cast<std::int64_t>(kept_pool.size());
    for (std::int32_t k = 0; k < h.num_chunks; ++k)
      if (kept[entry_base[i] + k]) kept_pool.push_back(pool[h.first_chunk + k]);
    const auto count = static_cast<std::int32_t>(kept_pool.size() - start);
    if (count > 0)
      hops.push_back(Hop{h.dst, h.src, Key{-h.key.major, -h.key.minor}, -1 - start, count, true});
  }
  return kept_pool;
}

// The hops as transfers at placeholder times: the rank of the key (equal keys share a slot),
// one picosecond long, so that a transfer's recorded end is at or before the start of every
// later key. Copies point into the schedule's pool, reversed partial sums (negative) into
// kept_pool.
void add_placeholder_transfers(const std::vector<Hop>& hops, std::span<const ChunkId> pool,
                               std::span<const ChunkId> kept_pool, Algorithm& algorithm) {
  std::vector<std::uint32_t> order(hops.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return hops[a].key < hops[b].key; });
  algorithm.reserve(hops.size());
  Time slot = -1;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Hop& h = hops[order[i]];
    if (i == 0 || hops[order[i - 1]].key != h.key) ++slot;
    const ChunkId* chunks =
        h.first_chunk >= 0 ? pool.data() + h.first_chunk : kept_pool.data() + (-1 - h.first_chunk);
    algorithm.add_transfer(h.src, h.dst, slot, slot + 1,
                           std::span<const ChunkId>(chunks, static_cast<std::size_t>(h.num_chunks)),
                           h.reduce);
  }
}

}  // namespace

namespace {

// Every message's chunks times its hops (what route_messages makes: one transfer per hop, each
// carrying the message's chunks), counted before anything is built.
void require_within_budget(Router& router, std::span<const Message> messages, double budget) {
  std::vector<DeviceId> path;
  double deliveries = 0;
  for (const Message& m : messages) {
    router.path(m.from, m.to, path);
    deliveries += (static_cast<double>(path.size()) - 1) * m.num_chunks;
  }
  require_transfers_within(deliveries, budget,
                           "%.0f chunk transfers routed hop by hop > %.0f, the baselines' budget");
}

}  // namespace

Algorithm LogicalSchedule::build(const std::string& name, LinkModel model, double budget) const {
  Router router(topology_, name);
  require_within_budget(router, messages_, budget);
  std::vector<Hop> hops;  // copies, then partial sums once reversed
  std::vector<Hop> dual;  // the partial-sum messages as copies on the reversed routes
  route_messages(router, messages_, hops, dual);
  const std::vector<ChunkId> kept_pool =
      keep_partial_sums(dual, messages_, chunk_pool_, collective_, topology_.devices(), name, hops);
  Algorithm algorithm(collective_);
  algorithm.synthesizer = name;
  algorithm.link_model = model;
  add_placeholder_transfers(hops, chunk_pool_, kept_pool, algorithm);
  compact(algorithm, timing_, model);
  algorithm.synthesizer = name;
  algorithm.link_model = model;
  return algorithm;
}

// ---- Ring order ------------------------------------------------------------------------------

std::vector<NpuId> hamiltonian_cycle(const Topology& topology, std::int64_t budget) {
  const int n = topology.npus();
  if (n < 2) return {};
  auto linked = [&](NpuId a, NpuId b) { return topology.find_link(a, b) >= 0; };
  {
    bool identity = true;
    for (NpuId i = 0; i < n && identity; ++i) identity = linked(i, (i + 1) % n);
    if (identity) {
      std::vector<NpuId> order(n);
      std::iota(order.begin(), order.end(), 0);
      return order;
    }
  }
  // NPU neighbours (switches, if any, are not part of a ring of NPUs).
  std::vector<std::vector<NpuId>> out(n), in(n);
  for (const Link& l : topology.links())
    if (l.src < n && l.dst < n) {
      out[l.src].push_back(l.dst);
      in[l.dst].push_back(l.src);
    }
  // The path runs from NPU 0 to its end. Every NPU off the path still needs a way in (from an
  // NPU off the path or the end) and a way out (to an NPU off the path or NPU 0):
  // `ways_in` / `ways_out` count them and a move that leaves one at zero is undone at once.
  std::vector<char> visited(n, 0);
  std::vector<int> ways_in(n), ways_out(n), onward(n);
  for (NpuId v = 0; v < n; ++v) {
    ways_in[v] = static_cast<int>(in[v].size());
    ways_out[v] = static_cast<int>(out[v].size());
    onward[v] = static_cast<int>(out[v].size());  // out-neighbours off the path
  }
  visited[0] = 1;
  for (NpuId u : in[0]) --onward[u];
  auto extend = [&](NpuId end, NpuId w, int delta) {  // delta 1: end -> w; -1: undo
    if (delta > 0) visited[w] = 1;
    for (NpuId x : out[end]) ways_in[x] -= delta;
    for (NpuId y : in[w]) {
      ways_out[y] -= delta;
      onward[y] -= delta;
    }
    if (delta < 0) visited[w] = 0;
  };
  auto feasible = [&](NpuId end, NpuId w) {
    for (NpuId x : out[end])
      if (!visited[x] && ways_in[x] == 0) return false;
    for (NpuId y : in[w])
      if (!visited[y] && ways_out[y] == 0) return false;
    return ways_in[0] > 0;
  };
  std::vector<NpuId> path{0};
  std::vector<std::vector<NpuId>> candidates;
  std::vector<std::size_t> cursor;
  auto push_candidates = [&](NpuId v) {
    std::vector<NpuId> next;
    int forced = 0;
    for (NpuId w : out[v])
      if (!visited[w]) {
        // Only the end can still enter w: w must come next.
        if (ways_in[w] == 1) {
          if (forced++ == 0) next.assign(1, w);
        } else if (forced == 0) {
          next.push_back(w);
        }
      }
    if (forced > 1) next.clear();
    std::sort(next.begin(), next.end(),
              [&](NpuId a, NpuId b) { return std::tie(onward[a], a) < std::tie(onward[b], b); });
    candidates.push_back(std::move(next));
    cursor.push_back(0);
  };
  push_candidates(0);
  std::int64_t steps = 0;
  while (true) {
    if (static_cast<int>(path.size()) == n) {
      if (linked(path.back(), 0)) return path;
    } else if (cursor.back() < candidates.back().size()) {
      const NpuId end = path.back();
      const NpuId w = candidates.back()[cursor.back()++];
      if (++steps > budget) return {};
      extend(end, w, 1);
      if (!feasible(end, w)) {
        extend(end, w, -1);
        continue;
      }
      path.push_back(w);
      push_candidates(w);
      continue;
    }
    // Backtrack.
    if (path.size() == 1) return {};
    const NpuId w = path.back();
    path.pop_back();
    candidates.pop_back();
    cursor.pop_back();
    extend(path.back(), w, -1);
  }
}

std::vector<NpuId> snake_cycle(const std::vector<ShapeDimension>& dims) {
  using Wiring = DimensionWiring;
  struct Axis {
    int size, stride;
  };
  std::vector<Axis> axes;
  int stride = 1;
  for (const ShapeDimension& d : dims) {
    if (d.wiring == Wiring::kUniRing && d.size > 2) return {};  // one way only
    if (d.size > 1) axes.push_back({d.size, stride});
    stride *= d.size;
  }
  if (axes.size() < 2) return {};
  // A Hamiltonian path over every axis but the last, boustrophedon.
  std::vector<NpuId> path{0};
  for (std::size_t a = 0; a + 1 < axes.size(); ++a) {
    std::vector<NpuId> next;
    for (int layer = 0; layer < axes[a].size; ++layer)
      for (std::size_t i = 0; i < path.size(); ++i)
        next.push_back(path[layer % 2 == 0 ? i : path.size() - 1 - i] + layer * axes[a].stride);
    path = std::move(next);
  }
  // The grid (path position) x (last axis) has a Hamiltonian cycle when a side is even: along
  // row 0, snake over rows 1.. in columns 1.., back along column 0. Rows must be even in number.
  const Axis last = axes.back();
  const int positions = static_cast<int>(path.size());
  const bool rows_are_layers = last.size % 2 == 0;
  if (!rows_are_layers && positions % 2 != 0) return {};
  const int rows = rows_are_layers ? last.size : positions;
  const int cols = rows_are_layers ? positions : last.size;
  auto node = [&](int r, int c) {
    return rows_are_layers ? path[c] + r * last.stride : path[r] + c * last.stride;
  };
  std::vector<NpuId> cycle;
  for (int c = 0; c < cols; ++c) cycle.push_back(node(0, c));
  for (int r = 1; r < rows; ++r)
    for (int i = 1; i < cols; ++i) cycle.push_back(node(r, r % 2 == 1 ? cols - i : i));
  for (int r = rows - 1; r >= 1; --r) cycle.push_back(node(r, 0));
  return cycle;
}

std::vector<int> ring_order(const Topology& topology, const Collective& collective) {
  const std::vector<ShapeDimension>& dims = topology.shape().dimensions;
  const int n = collective.num_members();
  if (n == topology.npus()) {
    // Every NPU is a member, so member index == NPU id. NPU order first, then the snake.
    std::vector<NpuId> cycle = hamiltonian_cycle(topology, /*budget=*/0);  // NPU order only
    if (cycle.empty() && !dims.empty()) {
      cycle = snake_cycle(dims);
      bool valid = static_cast<int>(cycle.size()) == n;
      for (std::size_t i = 0; i < cycle.size() && valid; ++i)
        valid = topology.find_link(cycle[i], cycle[(i + 1) % cycle.size()]) >= 0;
      if (!valid) cycle.clear();
    }
    if (cycle.empty()) cycle = hamiltonian_cycle(topology);
    if (!cycle.empty()) return cycle;
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

}  // namespace tacos::detail
