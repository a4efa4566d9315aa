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

Algorithm LogicalSchedule::build(const std::string& name, LinkModel model) const {
  Router router(topology_, name);
  std::vector<Hop> hops;  // copies, then partial sums once reversed
  std::vector<Hop> dual;  // the partial-sum messages as copies on the reversed routes
  std::vector<DeviceId> path;
  for (const Message& m : messages_) {
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

  // Partial sums: keep, per chunk, each device's first delivery in the dual (by key, then
  // index) when the device is a contributor or forwards the chunk through a kept delivery;
  // the dual's source (where the reduction ends) keeps nothing. Then reverse what is kept.
  std::vector<ChunkId> kept_pool;
  if (!dual.empty()) {
    const int num_chunks = collective_.num_chunks();
    const int devices = topology_.devices();
    // Entries (dual hop, position in its chunk list), grouped by chunk.
    std::vector<std::int64_t> entry_base(dual.size() + 1, 0);
    for (std::size_t i = 0; i < dual.size(); ++i)
      entry_base[i + 1] = entry_base[i] + dual[i].num_chunks;
    const std::int64_t entries = entry_base.back();
    std::vector<std::int64_t> offsets(static_cast<std::size_t>(num_chunks) + 1, 0);
    for (const Hop& h : dual)
      for (std::int32_t k = 0; k < h.num_chunks; ++k) ++offsets[chunk_pool_[h.first_chunk + k] + 1];
    for (int c = 0; c < num_chunks; ++c) offsets[c + 1] += offsets[c];
    struct Entry {
      std::uint32_t hop;
      std::int32_t pos;
    };
    std::vector<Entry> by_chunk(entries);
    {
      std::vector<std::int64_t> fill(offsets.begin(), offsets.end() - 1);
      for (std::size_t i = 0; i < dual.size(); ++i)
        for (std::int32_t k = 0; k < dual[i].num_chunks; ++k)
          by_chunk[fill[chunk_pool_[dual[i].first_chunk + k]]++] =
              Entry{static_cast<std::uint32_t>(i), k};
    }
    // The reduction's end per chunk: an NPU that receives the chunk in the logical schedule and
    // never sends it. Found from the logical messages.
    std::vector<DeviceId> root(num_chunks, -1);
    {
      std::vector<std::int64_t> msg_offsets(static_cast<std::size_t>(num_chunks) + 1, 0);
      for (const Message& m : messages_)
        if (m.reduce)
          for (std::int32_t k = 0; k < m.num_chunks; ++k)
            ++msg_offsets[chunk_pool_[m.first_chunk + k] + 1];
      for (int c = 0; c < num_chunks; ++c) msg_offsets[c + 1] += msg_offsets[c];
      std::vector<std::uint32_t> msgs(msg_offsets.back());
      std::vector<std::int64_t> fill(msg_offsets.begin(), msg_offsets.end() - 1);
      for (std::size_t i = 0; i < messages_.size(); ++i)
        if (messages_[i].reduce)
          for (std::int32_t k = 0; k < messages_[i].num_chunks; ++k)
            msgs[fill[chunk_pool_[messages_[i].first_chunk + k]]++] = static_cast<std::uint32_t>(i);
      std::vector<char> is_sender(devices, 0);
      for (int c = 0; c < num_chunks; ++c) {
        for (std::int64_t p = msg_offsets[c]; p < msg_offsets[c + 1]; ++p)
          is_sender[messages_[msgs[p]].from] = 1;
        for (std::int64_t p = msg_offsets[c]; p < msg_offsets[c + 1]; ++p) {
          const NpuId to = messages_[msgs[p]].to;
          if (is_sender[to]) continue;
          if (root[c] >= 0 && root[c] != to)
            throw Error(name + ": internal error: the partial sums of chunk " + std::to_string(c) +
                        " end at two NPUs (" + std::to_string(root[c]) + " and " +
                        std::to_string(to) + ")");
          root[c] = to;
        }
        for (std::int64_t p = msg_offsets[c]; p < msg_offsets[c + 1]; ++p)
          is_sender[messages_[msgs[p]].from] = 0;
      }
    }

    std::vector<char> kept(entries, 0);
    std::vector<std::int64_t> first(devices, -1);  // position in the chunk's sorted entries
    std::vector<char> forwards(devices, 0);
    for (int c = 0; c < num_chunks; ++c) {
      const auto begin = by_chunk.begin() + offsets[c];
      const auto end = by_chunk.begin() + offsets[c + 1];
      if (begin == end) continue;
      std::sort(begin, end, [&](const Entry& a, const Entry& b) {
        return dual[a.hop].key != dual[b.hop].key ? dual[a.hop].key < dual[b.hop].key
                                                  : a.hop < b.hop;
      });
      for (auto it = begin; it != end; ++it) {
        const DeviceId dst = dual[it->hop].dst;
        if (dst != root[c] && first[dst] < 0) first[dst] = it - by_chunk.begin();
      }
      for (auto it = end; it != begin;) {
        --it;
        const Hop& h = dual[it->hop];
        if (first[h.dst] != it - by_chunk.begin()) continue;
        const bool contributor = collective_.member_index(h.dst) >= 0;
        if (!contributor && !forwards[h.dst]) continue;
        kept[entry_base[it->hop] + it->pos] = 1;
        forwards[h.src] = 1;
      }
      for (auto it = begin; it != end; ++it) {
        const Hop& h = dual[it->hop];
        if (forwards[h.src] && h.src != root[c] && first[h.src] < 0)
          throw Error(name + ": internal error: chunk " + std::to_string(c) +
                      " is forwarded by device " + std::to_string(h.src) +
                      " that never receives it");
      }
      for (NpuId npu : collective_.sources(c))
        if (npu != root[c] && first[npu] < 0)
          throw Error(name + ": internal error: the partial sum of chunk " + std::to_string(c) +
                      " never leaves NPU " + std::to_string(npu));
      for (auto it = begin; it != end; ++it) {
        const Hop& h = dual[it->hop];
        first[h.src] = first[h.dst] = -1;
        forwards[h.src] = forwards[h.dst] = 0;
      }
    }
    for (std::size_t i = 0; i < dual.size(); ++i) {
      const Hop& h = dual[i];
      const std::int64_t start = static_cast<std::int64_t>(kept_pool.size());
      for (std::int32_t k = 0; k < h.num_chunks; ++k)
        if (kept[entry_base[i] + k]) kept_pool.push_back(chunk_pool_[h.first_chunk + k]);
      const auto count = static_cast<std::int32_t>(kept_pool.size() - start);
      if (count > 0)
        hops.push_back(Hop{h.dst, h.src, Key{-h.key.major, -h.key.minor}, -1 - start, count, true});
    }
  }

  // Placeholder times: the rank of the key (equal keys share a slot), one picosecond long,
  // so that a transfer's recorded end is at or before the start of every later key.
  std::vector<std::uint32_t> order(hops.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return hops[a].key < hops[b].key; });
  Algorithm algorithm(collective_);
  algorithm.synthesizer = name;
  algorithm.link_model = model;
  algorithm.reserve(hops.size());
  Time slot = -1;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Hop& h = hops[order[i]];
    if (i == 0 || hops[order[i - 1]].key != h.key) ++slot;
    // Copies point into the schedule's pool, reversed partial sums (negative) into kept_pool.
    const ChunkId* chunks = h.first_chunk >= 0 ? chunk_pool_.data() + h.first_chunk
                                               : kept_pool.data() + (-1 - h.first_chunk);
    algorithm.add_transfer(h.src, h.dst, slot, slot + 1,
                           std::span<const ChunkId>(chunks, static_cast<std::size_t>(h.num_chunks)),
                           h.reduce);
  }
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
