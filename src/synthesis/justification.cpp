#include "justification.h"

#include <algorithm>
#include <cstdint>
#include <queue>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "../common/group_by.h"
#include "link_events.h"
#include "reduction.h"
#include "tacos/common/units.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {
namespace {

// Rounds of one backward and one forward pass, at most; the pass stops after two rounds in a
// row that find nothing faster. The best round can come late, each round faster than the last
// (docs/quality.md, "Measured choices").
constexpr int kRounds = 6;
constexpr int kPatience = 2;

// The messages of a copy schedule: each waits for the first delivery of every chunk it carries
// to its sender (none for a chunk the sender is a source of). Dependencies in CSR form.
struct MessageGraph {
  std::vector<std::span<const LinkId>> route;
  std::vector<Bytes> bytes;
  Groups<std::int32_t, std::int32_t> pred;  // per message: the messages it waits for
  Groups<std::int32_t, std::int32_t> succ;  // per message: the messages waiting for it
};

// Edges (from, to) grouped by `from`, in edge order.
Groups<std::int32_t, std::int32_t> group_by_first(
    const std::vector<std::pair<std::int32_t, std::int32_t>>& edges, std::size_t count) {
  return group_by<std::int32_t, std::int32_t>(count, edges.size(), [&](std::size_t i, auto&& emit) {
    emit(edges[i].first, edges[i].second);
  });
}

std::optional<MessageGraph> build_graph(const Algorithm& copy, const Topology& topology) {
  const auto& transfers = copy.transfers();
  const Collective& collective = copy.collective();
  const SwitchRoutes& routes = topology.switch_routes();
  const std::size_t count = transfers.size();
  MessageGraph graph;
  graph.route.reserve(count);
  graph.bytes.reserve(count);
  // (chunk, receiver, arrival, transfer), sorted: the first delivery of a chunk to an NPU.
  std::vector<std::tuple<ChunkId, NpuId, Time, std::int32_t>> deliveries;
  deliveries.reserve(copy.chunk_pool().size());
  for (std::size_t i = 0; i < count; ++i) {
    const Transfer& t = transfers[i];
    if (t.reduce || t.multicast >= 0) return std::nullopt;
    const std::span<const LinkId> route = routes.route(t.src, t.dst);
    if (route.empty()) return std::nullopt;
    graph.route.push_back(route);
    graph.bytes.push_back(copy.transfer_bytes(t));
    for (ChunkId c : copy.chunks(t))
      deliveries.emplace_back(c, t.dst, t.end, static_cast<std::int32_t>(i));
  }
  std::sort(deliveries.begin(), deliveries.end());
  auto first_delivery = [&](ChunkId c, NpuId u) -> std::int32_t {
    const auto it = std::lower_bound(deliveries.begin(), deliveries.end(),
                                     std::make_tuple(c, u, Time{0}, std::int32_t{0}));
    if (it == deliveries.end() || std::get<0>(*it) != c || std::get<1>(*it) != u) return -1;
    return std::get<3>(*it);
  };
  // (message, message it waits for)
  std::vector<std::pair<std::int32_t, std::int32_t>> waits;
  std::vector<std::int32_t> mine;
  for (std::size_t i = 0; i < count; ++i) {
    const Transfer& t = transfers[i];
    mine.clear();
    for (ChunkId c : copy.chunks(t)) {
      const auto sources = collective.sources(c);
      if (std::find(sources.begin(), sources.end(), t.src) != sources.end()) continue;
      const std::int32_t before = first_delivery(c, t.src);
      if (before < 0) return std::nullopt;  // sent before it is held: not a schedule
      mine.push_back(before);
    }
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    for (std::int32_t before : mine) waits.emplace_back(static_cast<std::int32_t>(i), before);
  }
  graph.pred = group_by_first(waits, count);
  for (auto& [m, before] : waits) std::swap(m, before);  // now (message, one waiting for it)
  graph.succ = group_by_first(waits, count);
  return graph;
}

struct Pass {
  std::vector<Time> start, end;
  std::vector<std::int32_t> order;  // messages in the order they start
  Time makespan = 0;
};

// A free port sends its ready message of the lowest priority value (then the lowest index); the
// message takes each port of its route as soon as the port is free (a switch's queue in the
// order messages were sent). Backwards: the dependencies and the routes reversed.
Pass list_schedule(const MessageGraph& graph, const Topology& topology, LinkModel model,
                   bool backwards, const std::vector<Time>& priority) {
  const auto count = static_cast<std::int32_t>(graph.route.size());
  const auto& waits = backwards ? graph.succ : graph.pred;
  const auto& frees = backwards ? graph.pred : graph.succ;
  std::vector<std::int32_t> pending(count);
  for (std::int32_t m = 0; m < count; ++m) pending[m] = static_cast<std::int32_t>(waits.size(m));
  auto entry_port = [&](std::int32_t m) {
    return backwards ? graph.route[m].back() : graph.route[m].front();
  };
  using Ready = std::pair<Time, std::int32_t>;
  std::vector<std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>>> queue(
      topology.num_links());
  std::vector<Time> port_free(topology.num_links(), 0);
  Pass pass;
  pass.start.assign(count, 0);
  pass.end.assign(count, 0);
  pass.order.reserve(count);
  LinkEventQueue events;  // messages arriving and entry ports freed
  auto try_send = [&](LinkId port, Time now) {
    if (port_free[port] > now || queue[port].empty()) return;
    const std::int32_t m = queue[port].top().second;
    queue[port].pop();
    const std::span<const LinkId> route = graph.route[m];
    Time ready = now, entry_free = now;
    for (std::size_t h = 0; h < route.size(); ++h) {
      const LinkId l = backwards ? route[route.size() - 1 - h] : route[h];
      const Link& link = topology.link(l);
      const Time serial = serialization_time(graph.bytes[m], link.bandwidth_gbps);
      const Time begin = h == 0 ? now : std::max(ready, port_free[l]);
      port_free[l] = begin + link_busy_time(model, link.latency_ps, serial);
      if (h == 0) entry_free = port_free[l];
      ready = begin + link.latency_ps + serial;
    }
    pass.start[m] = now;
    pass.end[m] = ready;
    pass.order.push_back(m);
    pass.makespan = std::max(pass.makespan, ready);
    events.push({ready, m});
    events.push(link_free_event(entry_free, port));
  };
  for (std::int32_t m = 0; m < count; ++m)
    if (pending[m] == 0) queue[entry_port(m)].push({priority[m], m});
  for (LinkId l = 0; l < topology.num_links(); ++l) try_send(l, 0);
  run_link_events(
      events,
      [&](std::int32_t arrived, Time, std::vector<LinkId>& touched) {
        for (const std::int32_t m : frees[arrived]) {
          if (--pending[m] == 0) {
            queue[entry_port(m)].push({priority[m], m});
            touched.push_back(entry_port(m));
          }
        }
      },
      try_send);
  return pass;
}

}  // namespace

std::optional<Algorithm> justify_copy_schedule(const Algorithm& copy, const Topology& topology,
                                               LinkModel model) {
  const auto& transfers = copy.transfers();
  if (transfers.empty() || static_cast<double>(copy.chunk_pool().size()) > kJustifyMaxDeliveries)
    return std::nullopt;
  const std::optional<MessageGraph> graph = build_graph(copy, topology);
  if (!graph) return std::nullopt;
  const std::size_t count = transfers.size();
  std::vector<Time> arrival(count), priority(count);
  for (std::size_t m = 0; m < count; ++m) arrival[m] = transfers[m].end;
  std::optional<Algorithm> best;
  Time best_time = copy.collective_time;
  for (int round = 0, idle = 0; round < kRounds && idle < kPatience; ++round) {
    for (std::size_t m = 0; m < count; ++m) priority[m] = -arrival[m];
    const Pass backward = list_schedule(*graph, topology, model, true, priority);
    for (std::size_t m = 0; m < count; ++m) priority[m] = -backward.end[m];
    Pass forward = list_schedule(*graph, topology, model, false, priority);
    Algorithm candidate = with_provenance(copy.collective(), copy);
    candidate.reserve(count);
    for (std::int32_t m : forward.order) {
      const Transfer& t = transfers[m];
      candidate.add_transfer(t.src, t.dst, forward.start[m], forward.end[m], copy.chunks(t));
    }
    candidate.collective_time = forward.makespan;
    compact(candidate, topology, model);
    if (candidate.collective_time < best_time) {
      best_time = candidate.collective_time;
      best = std::move(candidate);
      idle = 0;
    } else {
      ++idle;
    }
    arrival = std::move(forward.end);
  }
  return best;
}

}  // namespace tacos::detail
