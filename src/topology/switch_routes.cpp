#include "tacos/topology/switch_routes.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <string>

#include "../common/group_by.h"
#include "../common/mix64.h"
#include "tacos/common/error.h"

namespace tacos {
namespace {

// Past this many NPU pairs through switches the route table alone takes gigabytes.
constexpr std::int64_t kMaxSwitchPairs = std::int64_t{1} << 27;

std::uint64_t spread(std::uint64_t a, std::uint64_t b, int hop) {
  return detail::mix64((a << 32) ^ b ^ (static_cast<std::uint64_t>(hop) << 58));
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
  std::vector<double> width(devices, 0);       // switch -> best bottleneck bandwidth on them
  std::vector<DeviceId> reached;
  std::vector<char> candidate(npus, 0);
  std::vector<NpuId> sources;
  auto hop_value = [&](LinkId l, NpuId dst) -> std::pair<int, double> {
    const Link& link = topology.link(l);
    if (link.dst == dst) return {0, link.bandwidth_gbps};
    if (!topology.is_switch(link.dst) || dist[link.dst] == kUnreached) return {kUnreached, 0};
    return {dist[link.dst], std::min(link.bandwidth_gbps, width[link.dst])};
  };
  if (topology.switches() > 0) {
    // Up front, before any memory is spent: NPUs attached to one group of connected switches
    // can all talk through it, so a group of A attached NPUs makes up to A(A-1) pairs.
    std::vector<DeviceId> group(devices);
    for (DeviceId d = 0; d < devices; ++d) group[d] = d;
    auto find = [&](DeviceId d) {
      while (group[d] != d) d = group[d] = group[group[d]];
      return d;
    };
    for (const Link& l : topology.links())
      if (topology.is_switch(l.src) && topology.is_switch(l.dst)) group[find(l.src)] = find(l.dst);
    std::vector<std::int64_t> attached(devices, 0);
    std::vector<DeviceId> last_group(npus, -1);
    for (const Link& l : topology.links())
      if (!topology.is_switch(l.src) && topology.is_switch(l.dst)) {
        const DeviceId g = find(l.dst);
        if (last_group[l.src] != g) ++attached[g];
        last_group[l.src] = g;
      }
    std::int64_t pairs = 0;
    for (DeviceId d = 0; d < devices; ++d)
      pairs += attached[d] * std::max<std::int64_t>(attached[d] - 1, 0);
    if (pairs > kMaxSwitchPairs)
      throw Error("topology: up to " + std::to_string(pairs) +
                  " NPU pairs talk through switches, more than the " +
                  std::to_string(kMaxSwitchPairs) + " whose routes fit in memory");
    for (NpuId dst = 0; dst < npus; ++dst) {
      // Breadth-first from the destination backwards over switches: hop counts, then the
      // widest bottleneck among the fewest-hop paths (switches are settled in hop order).
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
        for (LinkId l : topology.out_links(s)) {
          const auto [d, w] = hop_value(l, dst);
          if (d == dist[s] - 1) width[s] = std::max(width[s], w);
        }
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
          // Next hop: fewest hops left, then the widest bottleneck; ties spread by a hash.
          LinkId best = -1;
          std::pair<int, double> best_value{kUnreached, 0};
          std::uint64_t best_key = 0;
          for (LinkId l : topology.out_links(at)) {
            const auto value = hop_value(l, dst);
            if (value.first == kUnreached) continue;
            const std::uint64_t key = spread(
                spread(static_cast<std::uint64_t>(src), static_cast<std::uint64_t>(dst), hop) ^
                    static_cast<std::uint64_t>(topology.link(l).dst),
                hop, 1);
            const bool better = value.first < best_value.first ||
                                (value.first == best_value.first &&
                                 (value.second > best_value.second ||
                                  (value.second == best_value.second && key < best_key)));
            if (best < 0 || better) {
              best = l;
              best_value = value;
              best_key = key;
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
      for (DeviceId s : reached) {
        dist[s] = kUnreached;
        width[s] = 0;
      }
    }
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  // Found is sorted by src: each NPU's routes are one range.
  detail::key_offsets(src_begin_, static_cast<std::size_t>(npus), found.size(),
                      [&](std::size_t i) { return found[i].src; });
  peer_.reserve(found.size());
  route_begin_.reserve(found.size() + 1);
  links_.reserve(scratch.size());
  route_begin_.push_back(0);
  for (const Found& f : found) {
    peer_.push_back(f.dst);
    links_.insert(links_.end(), scratch.begin() + f.begin, scratch.begin() + f.begin + f.hops);
    route_begin_.push_back(static_cast<std::int64_t>(links_.size()));
  }
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

struct SwitchRoutesCache::State {
  std::once_flag once;
  std::unique_ptr<SwitchRoutes> routes;
};

SwitchRoutesCache::SwitchRoutesCache() : state_(std::make_unique<State>()) {}
SwitchRoutesCache::SwitchRoutesCache(const SwitchRoutesCache&) : SwitchRoutesCache() {}
SwitchRoutesCache& SwitchRoutesCache::operator=(const SwitchRoutesCache&) {
  state_ = std::make_unique<State>();
  return *this;
}
SwitchRoutesCache::~SwitchRoutesCache() = default;

const SwitchRoutes& SwitchRoutesCache::get(const Topology& topology) const {
  std::call_once(state_->once, [&] { state_->routes = std::make_unique<SwitchRoutes>(topology); });
  return *state_->routes;
}

Topology switch_route_view(const Topology& topology) {
  if (topology.switches() == 0) return topology;
  const SwitchRoutes& routes = topology.switch_routes();
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
  Topology view(topology.npus(), 0, std::move(links), topology.name());
  view.set_shape(topology.shape());
  return view;
}

}  // namespace tacos
