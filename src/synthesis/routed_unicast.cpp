#include "routed_unicast.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <queue>
#include <vector>

#include "../common/mix64.h"
#include "link_events.h"
#include "reduction.h"
#include "tacos/common/units.h"

namespace tacos::detail {
namespace {

// Chunks are routed once in a seeded order, then each is re-routed this many times against
// everyone else's final paths.
constexpr int kRerouteRounds = 2;

struct Flow {
  ChunkId chunk;
  NpuId from, to;
  std::vector<LinkId> path;
};

// Path costs, over the links of a path, of (the busy time already routed over the link + the
// chunk's own time on it): the sum (where the chunk would arrive if every link served its chunks
// one after another; good for All-to-All, where every link carries many flows), or the busiest
// link first, then the chunk's own time (a chunk avoids the link that sets the finish, such as
// the slow link into a Gather's root, even when the way round is longer).
enum class PathCost { kSum, kBottleneck };

class PathFinder {
 public:
  PathFinder(const Topology& topology, PathCost kind)
      : topology_(topology),
        kind_(kind),
        cost_(topology.devices()),
        via_(topology.devices()),
        done_(topology.devices()) {}

  std::vector<LinkId> find(NpuId from, NpuId to, const std::vector<double>& load,
                           const std::vector<double>& own) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::fill(cost_.begin(), cost_.end(), Cost{kInf, kInf});
    std::fill(done_.begin(), done_.end(), 0);
    using Entry = std::pair<Cost, DeviceId>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> open;
    cost_[from] = {0, 0};
    open.push({cost_[from], from});
    while (!open.empty()) {
      const auto [cost, v] = open.top();
      open.pop();
      if (done_[v]) continue;
      done_[v] = 1;
      if (v == to) break;
      for (LinkId l : topology_.out_links(v)) {
        const DeviceId w = topology_.link(l).dst;
        const Cost next = kind_ == PathCost::kSum
                              ? Cost{cost.first + load[l] + own[l], cost.second + own[l]}
                              : Cost{std::max(cost.first, load[l] + own[l]), cost.second + own[l]};
        if (next < cost_[w]) {
          cost_[w] = next;
          via_[w] = l;
          open.push({next, w});
        }
      }
    }
    std::vector<LinkId> path;
    if (!done_[to]) return path;
    for (DeviceId v = to; v != from; v = topology_.link(via_[v]).src) path.push_back(via_[v]);
    std::reverse(path.begin(), path.end());
    return path;
  }

 private:
  using Cost = std::pair<double, double>;  // (the cost, then own time over the path)
  const Topology& topology_;
  PathCost kind_;
  std::vector<Cost> cost_;
  std::vector<LinkId> via_;
  std::vector<char> done_;
};

std::optional<Algorithm> route_and_schedule(const Topology& topology, const Collective& collective,
                                            LinkModel model, std::uint64_t seed,
                                            PathCost path_cost) {
  if (topology.switches() > 0) return std::nullopt;
  std::vector<Flow> flows;
  for (ChunkId c = 0; c < collective.num_chunks(); ++c) {
    const auto sources = collective.sources(c);
    const auto destinations = collective.destinations(c);
    if (sources.size() != 1 || destinations.size() != 1) return std::nullopt;
    if (sources[0] != destinations[0]) flows.push_back({c, sources[0], destinations[0], {}});
  }
  if (static_cast<double>(flows.size()) * topology.devices() * (1 + kRerouteRounds) >
      kRoutedUnicastMaxWork)
    return std::nullopt;

  // A chunk's time on each link (what it keeps the link busy for).
  const Bytes chunk_bytes = collective.chunk_bytes();
  std::vector<double> own(topology.num_links());
  std::vector<Time> ser(topology.num_links());
  for (LinkId l = 0; l < topology.num_links(); ++l) {
    const Link& link = topology.link(l);
    ser[l] = serialization_time(chunk_bytes, link.bandwidth_gbps);
    own[l] = static_cast<double>(link_busy_time(model, link.latency_ps, ser[l]));
  }
  // Routed in a seeded order so that no source or destination goes first every time.
  std::vector<std::size_t> order(flows.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<std::uint64_t> draw(flows.size());
  for (std::size_t f = 0; f < flows.size(); ++f) draw[f] = mix64(mix64(seed) ^ f);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return draw[a] < draw[b]; });
  std::vector<double> load(topology.num_links(), 0);
  PathFinder finder(topology, path_cost);
  for (int round = 0; round <= kRerouteRounds; ++round)
    for (std::size_t f : order) {
      Flow& flow = flows[f];
      for (LinkId l : flow.path) load[l] -= own[l];
      flow.path = finder.find(flow.from, flow.to, load, own);
      if (flow.path.empty()) return std::nullopt;
      for (LinkId l : flow.path) load[l] += own[l];
    }

  // List scheduling: a free link sends, among the hops ready on it, the one of the chunk with
  // the most hops still to go (then the seeded order), as soon as the link and the data allow.
  struct Hop {
    std::int32_t flow;
    std::int32_t index;  // position on the flow's path
  };
  const auto num_flows = static_cast<std::int64_t>(flows.size());
  std::vector<std::int64_t> rank(flows.size());
  for (std::size_t i = 0; i < order.size(); ++i) rank[order[i]] = static_cast<std::int64_t>(i);
  auto key = [&](const Hop& hop) {
    const auto left = static_cast<std::int64_t>(flows[hop.flow].path.size()) - hop.index;
    return -left * num_flows + rank[hop.flow];
  };
  using Ready = std::pair<std::int64_t, std::int32_t>;  // (key, hop id)
  std::vector<Hop> hops;
  std::vector<std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>>> queue(
      topology.num_links());
  std::vector<Time> link_free(topology.num_links(), 0);
  std::vector<Time> start, end;
  LinkEventQueue events;  // hops arriving (hop id) and links freed
  auto ready = [&](std::int32_t flow, std::int32_t index) {
    const auto id = static_cast<std::int32_t>(hops.size());
    hops.push_back({flow, index});
    start.push_back(0);
    end.push_back(0);
    queue[flows[flow].path[index]].push({key(hops.back()), id});
    return flows[flow].path[index];
  };
  auto try_send = [&](LinkId l, Time now) {
    if (link_free[l] > now || queue[l].empty()) return;
    const std::int32_t id = queue[l].top().second;
    queue[l].pop();
    const Link& link = topology.link(l);
    start[id] = now;
    end[id] = now + link.latency_ps + ser[l];
    link_free[l] = now + link_busy_time(model, link.latency_ps, ser[l]);
    events.push({end[id], id});
    events.push(link_free_event(link_free[l], l));
  };
  for (std::int32_t f = 0; f < num_flows; ++f) ready(f, 0);
  for (LinkId l = 0; l < topology.num_links(); ++l) try_send(l, 0);
  run_link_events(
      events,
      [&](std::int32_t arrived, Time, std::vector<LinkId>& touched) {
        const Hop hop = hops[arrived];
        if (hop.index + 1 < static_cast<std::int32_t>(flows[hop.flow].path.size()))
          touched.push_back(ready(hop.flow, hop.index + 1));
      },
      try_send);

  std::vector<std::int32_t> by_start(hops.size());
  std::iota(by_start.begin(), by_start.end(), 0);
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](std::int32_t a, std::int32_t b) { return start[a] < start[b]; });
  Algorithm algorithm(collective);
  algorithm.reserve(hops.size());
  for (std::int32_t id : by_start) {
    const Flow& flow = flows[hops[id].flow];
    const Link& link = topology.link(flow.path[hops[id].index]);
    algorithm.add_transfer(link.src, link.dst, start[id], end[id], flow.chunk);
    algorithm.collective_time = std::max(algorithm.collective_time, end[id]);
  }
  algorithm.synthesizer = "tacos";
  algorithm.link_model = model;
  algorithm.seed = seed;
  compact(algorithm, topology, model);
  return algorithm;
}

}  // namespace

std::optional<Algorithm> routed_unicast(const Topology& topology, const Collective& collective,
                                        LinkModel model, std::uint64_t seed) {
  std::optional<Algorithm> best;
  for (PathCost cost : {PathCost::kSum, PathCost::kBottleneck}) {
    std::optional<Algorithm> candidate =
        route_and_schedule(topology, collective, model, seed, cost);
    if (!candidate) return std::nullopt;
    if (!best || candidate->collective_time < best->collective_time) best = std::move(candidate);
  }
  return best;
}

}  // namespace tacos::detail
