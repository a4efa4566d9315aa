#include "tacos/topology/describe.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

namespace tacos {
namespace {

constexpr Time kUnreached = std::numeric_limits<Time>::max();

// Hop counts from `source` to every device (-1 when unreachable); switches relay.
std::vector<int> hops_from(const Topology& t, DeviceId source) {
  std::vector<int> hops(t.devices(), -1);
  std::queue<DeviceId> queue;
  hops[source] = 0;
  queue.push(source);
  while (!queue.empty()) {
    const DeviceId d = queue.front();
    queue.pop();
    for (LinkId id : t.out_links(d)) {
      const DeviceId next = t.link(id).dst;
      if (hops[next] < 0) {
        hops[next] = hops[d] + 1;
        queue.push(next);
      }
    }
  }
  return hops;
}

// Shortest-path latency (sum of link latencies) from `source` to every device.
std::vector<Time> latency_from(const Topology& t, DeviceId source) {
  std::vector<Time> dist(t.devices(), kUnreached);
  using Entry = std::pair<Time, DeviceId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  dist[source] = 0;
  heap.push({0, source});
  while (!heap.empty()) {
    auto [d, u] = heap.top();
    heap.pop();
    if (d != dist[u]) continue;  // A stale entry: u was settled through a shorter path.
    for (LinkId id : t.out_links(u)) {
      const Link& l = t.link(id);
      if (d + l.latency_ps < dist[l.dst]) {
        dist[l.dst] = d + l.latency_ps;
        heap.push({dist[l.dst], l.dst});
      }
    }
  }
  return dist;
}

void degree_range(const Topology& t, TopologySummary& s) {
  s.min_degree = std::numeric_limits<int>::max();
  for (DeviceId d = 0; d < t.devices(); ++d) {
    const int degree = static_cast<int>(t.out_links(d).size());
    s.min_degree = std::min(s.min_degree, degree);
    s.max_degree = std::max(s.max_degree, degree);
  }
}

void ingress_range(const Topology& t, TopologySummary& s) {
  s.min_ingress_gbps = std::numeric_limits<double>::infinity();
  for (NpuId n = 0; n < t.npus(); ++n) {
    double sum = 0;
    for (LinkId id : t.in_links(n)) sum += t.link(id).bandwidth_gbps;
    s.min_ingress_gbps = std::min(s.min_ingress_gbps, sum);
    s.max_ingress_gbps = std::max(s.max_ingress_gbps, sum);
  }
}

}  // namespace

TopologySummary describe_topology(const Topology& topology) {
  TopologySummary s;
  s.npus = topology.npus();
  s.switches = topology.switches();
  s.multicast_switches = topology.multicast_switches();
  s.reducing_switches = topology.reducing_switches();
  s.links = topology.num_links();
  if (topology.devices() == 0) return s;  // A default-constructed Topology.
  degree_range(topology, s);
  ingress_range(topology, s);
  // Diameters count reachable NPU pairs only, so a disconnected topology still describes.
  s.connected = true;
  for (NpuId src = 0; src < topology.npus(); ++src) {
    const std::vector<int> hops = hops_from(topology, src);
    const std::vector<Time> latency = latency_from(topology, src);
    for (NpuId dst = 0; dst < topology.npus(); ++dst) {
      if (hops[dst] < 0) {
        s.connected = false;
        continue;
      }
      s.diameter_hops = std::max(s.diameter_hops, hops[dst]);
      s.diameter_latency_ps = std::max(s.diameter_latency_ps, latency[dst]);
    }
  }
  return s;
}

}  // namespace tacos
