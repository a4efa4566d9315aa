#include "latencies.h"

#include <functional>
#include <queue>
#include <span>
#include <utility>

namespace tacos::bounds_detail {
namespace {

std::span<const LinkId> next(const Topology& t, DeviceId u, bool forward) {
  return forward ? t.out_links(u) : t.in_links(u);
}

DeviceId other(const Topology& t, LinkId id, bool forward) {
  return forward ? t.link(id).dst : t.link(id).src;
}

}  // namespace

Latencies::Latencies(const Topology& t) : t_(t) {
  for (const Link& l : t.links()) uniform_ &= l.latency_ps == t.links().front().latency_ps;
}

const std::vector<Time>& Latencies::get(DeviceId root, bool forward) {
  Cached& c = forward ? forward_ : backward_;
  if (c.root != root) {
    c.root = root;
    c.dist = uniform_ ? bfs(root, forward) : dijkstra(root, forward);
  }
  return c.dist;
}

std::vector<Time> Latencies::bfs(DeviceId root, bool forward) const {
  std::vector<Time> dist(t_.devices(), kUnreachable);
  const Time hop = t_.num_links() > 0 ? t_.link(0).latency_ps : 0;
  const std::vector<int> hops = hops_from(t_, root, forward);
  for (DeviceId d = 0; d < t_.devices(); ++d)
    if (hops[d] >= 0) dist[d] = hops[d] * hop;
  return dist;
}

std::vector<Time> Latencies::dijkstra(DeviceId root, bool forward) const {
  std::vector<Time> dist(t_.devices(), kUnreachable);
  using Item = std::pair<Time, DeviceId>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  dist[root] = 0;
  heap.emplace(0, root);
  while (!heap.empty()) {
    const auto [d, u] = heap.top();
    heap.pop();
    if (d != dist[u]) continue;
    for (LinkId id : next(t_, u, forward)) {
      const DeviceId v = other(t_, id, forward);
      const Time nd = d + t_.link(id).latency_ps;
      if (nd < dist[v]) {
        dist[v] = nd;
        heap.emplace(nd, v);
      }
    }
  }
  return dist;
}

std::vector<int> hops_from(const Topology& t, DeviceId source, bool forward) {
  std::vector<int> hops(t.devices(), -1);
  std::vector<DeviceId> queue{source};
  hops[source] = 0;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const DeviceId u = queue[head];
    for (LinkId id : next(t, u, forward)) {
      const DeviceId v = other(t, id, forward);
      if (hops[v] < 0) {
        hops[v] = hops[u] + 1;
        queue.push_back(v);
      }
    }
  }
  return hops;
}

}  // namespace tacos::bounds_detail
