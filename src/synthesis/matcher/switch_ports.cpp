#include "switch_ports.h"

#include <algorithm>
#include <limits>

#include "../../common/mix64.h"
#include "chunk_choice.h"
#include "tacos/common/units.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {
namespace {

// Per NPU: the shortest delay of its in-routes and the switch its fastest in-routes all come
// down from (the NVSwitch of a DGX node), or -1 when a direct link or two switches tie for it.
struct FastestIngress {
  std::vector<Time> delay;
  std::vector<DeviceId> domain;
};

FastestIngress fastest_ingress(const Topology& topology, const SwitchRoutes& routes,
                               const std::vector<Time>& serialization, const auto& route_delay) {
  const int npus = topology.npus();
  FastestIngress in{std::vector<Time>(npus, std::numeric_limits<Time>::max()),
                    std::vector<DeviceId>(npus, -1)};
  std::vector<char> mixed(npus, 0);
  for (LinkId l = 0; l < topology.num_links(); ++l) {
    const Link& link = topology.link(l);
    if (topology.is_switch(link.src) || topology.is_switch(link.dst)) continue;
    const Time delay = link.latency_ps + serialization[l];
    if (delay <= in.delay[link.dst]) mixed[link.dst] = 1;  // a direct link is among the fastest
    in.delay[link.dst] = std::min(in.delay[link.dst], delay);
  }
  for (NpuId src = 0; src < npus; ++src) {
    const auto peers = routes.switch_peers(src);
    for (int p = 0; p < static_cast<int>(peers.size()); ++p) {
      const auto route = routes.switch_route(src, p);
      const NpuId dst = peers[p];
      const Time delay = route_delay(route);
      const DeviceId last = topology.link(route.back()).src;
      if (delay < in.delay[dst]) {
        in.delay[dst] = delay;
        in.domain[dst] = last;
        mixed[dst] = 0;
      } else if (delay == in.delay[dst] && in.domain[dst] != last) {
        mixed[dst] = 1;
      }
    }
  }
  for (NpuId v = 0; v < npus; ++v)
    if (mixed[v]) in.domain[v] = -1;
  return in;
}

}  // namespace

bool SwitchPorts::add_routes(const Topology& topology, LinkModel model, Bytes chunk_bytes,
                             std::vector<MatchLink>& links) {
  const SwitchRoutes& routes = topology.switch_routes();
  if (routes.num_switch_pairs() == 0) return false;
  const int npus = topology.npus();
  free_.assign(topology.num_links(), 0);
  wake_at_.assign(topology.num_links(), -1);
  waiters_.resize(topology.num_links());
  std::vector<Time> serialization(topology.num_links());
  for (LinkId l = 0; l < topology.num_links(); ++l)
    serialization[l] = serialization_time(chunk_bytes, topology.link(l).bandwidth_gbps);
  auto route_delay = [&](std::span<const LinkId> route) {
    Time delay = 0;
    for (LinkId hop : route) delay += topology.link(hop).latency_ps + serialization[hop];
    return delay;
  };
  const FastestIngress in = fastest_ingress(topology, routes, serialization, route_delay);
  // Position of each NPU among its domain's members (ids ascending).
  std::vector<int> position(npus, 0);
  {
    std::vector<int> count(topology.devices(), 0);
    for (NpuId v = 0; v < npus; ++v)
      if (in.domain[v] >= 0) position[v] = count[in.domain[v]]++;
  }
  // A slower route into a domain is kept to one member per (sender, domain): the fewest hops,
  // then the member at the sender's own position (the same rail of a DGX cluster), then the
  // lowest id. The rest of the domain gets the chunk over its fast switch, so the slow fabric
  // carries each chunk into a domain once (NCCL's PXN does the same) and the matcher has
  // (NPUs x domains) rather than NPUs^2 slow routes to consider.
  auto slow_into_domain = [&](NpuId src, int p) {
    const NpuId dst = routes.switch_peers(src)[p];
    const DeviceId d = in.domain[dst];
    return d >= 0 && d != in.domain[src] &&
           route_delay(routes.switch_route(src, p)) != in.delay[dst];
  };
  std::vector<int> chosen(topology.devices(), -1);  // per domain switch: peer index
  std::vector<DeviceId> touched;
  for (NpuId src = 0; src < npus; ++src) {
    const auto peers = routes.switch_peers(src);
    auto better = [&](int p, int q) {
      const auto rp = routes.switch_route(src, p), rq = routes.switch_route(src, q);
      if (rp.size() != rq.size()) return rp.size() < rq.size();
      const bool p_match = position[peers[p]] == position[src];
      const bool q_match = position[peers[q]] == position[src];
      if (p_match != q_match) return p_match;
      return peers[p] < peers[q];
    };
    for (int p = 0; p < static_cast<int>(peers.size()); ++p) {
      if (!slow_into_domain(src, p)) continue;
      const DeviceId d = in.domain[peers[p]];
      if (chosen[d] < 0) touched.push_back(d);
      if (chosen[d] < 0 || better(p, chosen[d])) chosen[d] = p;
    }
    for (int p = 0; p < static_cast<int>(peers.size()); ++p) {
      if (slow_into_domain(src, p) && chosen[in.domain[peers[p]]] != p) continue;
      MatchLink link{src, peers[p], 0, 0, 0, 0, static_cast<std::int32_t>(hops_.size()), 0};
      Time offset = 0;
      for (LinkId hop : routes.switch_route(src, p)) {
        const Link& physical = topology.link(hop);
        hops_.push_back(
            Hop{hop, offset, link_busy_time(model, physical.latency_ps, serialization[hop])});
        offset += physical.latency_ps + serialization[hop];
      }
      link.hops_end = static_cast<std::int32_t>(hops_.size());
      link.arrival_delay = offset;
      link.busy_delay = hops_[link.hops_begin].busy;
      links.push_back(link);
    }
    for (DeviceId d : touched) chosen[d] = -1;
    touched.clear();
  }
  return true;
}

std::optional<SwitchPorts::Wait> SwitchPorts::wait_for_hops(LinkId id, const MatchLink& link,
                                                            Time now) {
  for (std::int32_t h = link.hops_begin; h < link.hops_end; ++h) {
    const Hop& hop = hops_[h];
    if (free_[hop.link] <= now + hop.offset) continue;
    const Time free_at = free_[hop.link] - hop.offset;
    const bool new_wake = wake_at_[hop.link] < now || free_at < wake_at_[hop.link];
    if (new_wake) wake_at_[hop.link] = free_at;
    waiters_[hop.link].push_back(id);
    return Wait{hop.link, free_at, new_wake};
  }
  return std::nullopt;
}

void SwitchPorts::order_round(std::span<const LinkId> queued, std::span<const MatchLink> links,
                              const ChunkChoice& choice, std::uint64_t seed, std::uint64_t round,
                              int npus, std::vector<std::pair<std::uint64_t, LinkId>>& keys) const {
  // Links share switch ports here, so one round is a matching of free sender ports to free
  // receiver ports. Going destination by destination leaves ports unmatched every round;
  // offering whole shifts (every NPU u to u + s, fastest links first, shifts from a seeded
  // offset) gives permutations, a perfect matching wherever every link has something useful.
  const auto n = static_cast<std::uint64_t>(npus);
  const std::uint64_t offset = mix64(seed ^ (round << 20)) % n;
  for (std::size_t i = 0; i < queued.size(); ++i) {
    const LinkId l = queued[i];
    const std::uint64_t shift =
        (static_cast<std::uint64_t>(links[l].dst - links[l].src + 2 * npus) + offset) % n;
    // Senders that alone hold some chunk (a broadcast root) go first: their port is what
    // every other NPU waits on.
    const std::uint64_t sole = choice.sole_holder(links[l].src) ? 0 : 1;
    const std::uint64_t key = (static_cast<std::uint64_t>(links[l].delay_rank) << 48) |
                              (sole << 47) | (shift << 20) |
                              (mix64(seed ^ (round << 32) ^ static_cast<std::uint64_t>(l)) >> 44);
    keys[i] = {key, l};
  }
}

}  // namespace tacos::detail
