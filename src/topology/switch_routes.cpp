#include "tacos/topology/switch_routes.h"

#include <algorithm>
#include <limits>
#include <string>

#include "tacos/common/error.h"

namespace tacos {
namespace {

// Past this many NPU pairs through switches the route table alone takes gigabytes.
constexpr std::int64_t kMaxSwitchPairs = std::int64_t{1} << 27;

std::uint64_t spread(NpuId src, NpuId dst, int hop) {
  std::uint64_t x = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) ^
                    static_cast<std::uint32_t>(dst) ^ (static_cast<std::uint64_t>(hop) << 58);
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

SwitchRoutes::SwitchRoutes(const Topology& topology) : topology_(&topology) {
  const int npus = topology.npus();
  const int devices = topology.devices();
  direct_.resize(topology.num_links());
  for (LinkId l = 0; l < topology.num_links(); ++l) direct_[l] = l;

  struct Found {
    NpuId src, dst;
    std::int64_t begin;  // into scratch links
    int hops;
  };
  std::vector<Found> found;
  std::vector<LinkId> scratch;
  constexpr int kUnreached = std::numeric_limits<int>::max();
  std::vector<int> dist(devices, kUnreached);  // switch -> hops to the destination
  std::vector<DeviceId> reached;
  std::vector<char> candidate(npus, 0);
  std::vector<NpuId> sources;
  if (topology.switches() > 0) {
    for (NpuId dst = 0; dst < npus; ++dst) {
      reached.clear();
      for (LinkId l : topology.in_links(dst)) {
        const DeviceId s = topology.link(l).src;
        if (topology.is_switch(s) && dist[s] == kUnreached) {
          dist[s] = 1;
          reached.push_back(s);
        }
      }
      for (std::size_t i = 0; i < reached.size(); ++i) {
        const DeviceId s = reached[i];
        for (LinkId l : topology.in_links(s)) {
          const DeviceId up = topology.link(l).src;
          if (topology.is_switch(up)) {
            if (dist[up] == kUnreached) {
              dist[up] = dist[s] + 1;
              reached.push_back(up);
            }
          } else if (up != dst && !candidate[up] && topology.find_link(up, dst) < 0) {
            candidate[up] = 1;
            sources.push_back(up);
          }
        }
      }
      for (NpuId src : sources) {
        candidate[src] = 0;
        const std::int64_t begin = static_cast<std::int64_t>(scratch.size());
        DeviceId at = src;
        int hop = 0;
        while (at != dst) {
          // Next hop: the destination itself, else a switch one hop closer; ties spread.
          LinkId best = -1;
          int best_dist = kUnreached;
          std::uint64_t best_key = 0;
          for (LinkId l : topology.out_links(at)) {
            const DeviceId next = topology.link(l).dst;
            const int d = next == dst ? 0 : (topology.is_switch(next) ? dist[next] : kUnreached);
            if (d == kUnreached) continue;
            const std::uint64_t key = spread(src, dst, hop) ^ static_cast<std::uint64_t>(next);
            if (d < best_dist || (d == best_dist && spread(key, hop, 1) < best_key)) {
              best = l;
              best_dist = d;
              best_key = spread(key, hop, 1);
            }
          }
          scratch.push_back(best);
          at = topology.link(best).dst;
          ++hop;
        }
        found.push_back(Found{src, dst, begin, hop});
        if (static_cast<std::int64_t>(found.size()) > kMaxSwitchPairs)
          throw Error("topology: more than " + std::to_string(kMaxSwitchPairs) +
                      " NPU pairs talk through switches; too many routes to keep in memory");
      }
      sources.clear();
      for (DeviceId s : reached) dist[s] = kUnreached;
    }
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  src_begin_.assign(static_cast<std::size_t>(npus) + 1, 0);
  peer_.reserve(found.size());
  route_begin_.reserve(found.size() + 1);
  links_.reserve(scratch.size());
  route_begin_.push_back(0);
  for (const Found& f : found) {
    ++src_begin_[f.src + 1];
    peer_.push_back(f.dst);
    links_.insert(links_.end(), scratch.begin() + f.begin, scratch.begin() + f.begin + f.hops);
    route_begin_.push_back(static_cast<std::int64_t>(links_.size()));
  }
  for (int n = 0; n < npus; ++n) src_begin_[n + 1] += src_begin_[n];
}

std::span<const LinkId> SwitchRoutes::route(NpuId src, NpuId dst) const {
  const LinkId direct = topology_->find_link(src, dst);
  if (direct >= 0) return {direct_.data() + direct, 1};
  if (src < 0 || src >= topology_->npus()) return {};
  const auto peers = switch_peers(src);
  const auto it = std::lower_bound(peers.begin(), peers.end(), dst);
  if (it == peers.end() || *it != dst) return {};
  return switch_route(src, static_cast<int>(it - peers.begin()));
}

std::span<const NpuId> SwitchRoutes::switch_peers(NpuId src) const {
  return {peer_.data() + src_begin_[src],
          static_cast<std::size_t>(src_begin_[src + 1] - src_begin_[src])};
}

std::span<const LinkId> SwitchRoutes::switch_route(NpuId src, int peer_index) const {
  const std::int64_t k = src_begin_[src] + peer_index;
  return {links_.data() + route_begin_[k],
          static_cast<std::size_t>(route_begin_[k + 1] - route_begin_[k])};
}

Topology switch_route_view(const Topology& topology) {
  if (topology.switches() == 0) return topology;
  const SwitchRoutes routes(topology);
  std::vector<Link> links;
  for (const Link& l : topology.links())
    if (!topology.is_switch(l.src) && !topology.is_switch(l.dst)) links.push_back(l);
  for (NpuId src = 0; src < topology.npus(); ++src) {
    const auto peers = routes.switch_peers(src);
    for (int p = 0; p < static_cast<int>(peers.size()); ++p) {
      Link view{src, peers[p], std::numeric_limits<double>::infinity(), 0};
      for (LinkId hop : routes.switch_route(src, p)) {
        view.bandwidth_gbps = std::min(view.bandwidth_gbps, topology.link(hop).bandwidth_gbps);
        view.latency_ps += topology.link(hop).latency_ps;
      }
      links.push_back(view);
    }
  }
  return Topology(topology.npus(), 0, std::move(links), topology.name());
}

}  // namespace tacos
