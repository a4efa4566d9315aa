#include "fast_domains.h"

#include <algorithm>
#include <limits>

namespace tacos::detail {

void FastDomains::init(const Topology& topology, std::span<const MatchLink> links,
                       std::span<const int> in_begin, const SwitchPorts& ports, int chunks) {
  const int npus = static_cast<int>(in_begin.size()) - 1;
  auto fastest_rank = [&](NpuId v) {
    std::uint16_t fastest = std::numeric_limits<std::uint16_t>::max();
    for (int l = in_begin[v]; l < in_begin[v + 1]; ++l)
      fastest = std::min(fastest, links[l].delay_rank);
    return fastest;
  };
  // Domain of v: the switch its fastest in-links (all switch routes) come down from, when
  // they all come down from the same one.
  domain_of_.assign(npus, -1);
  std::vector<int> domain_index(topology.devices(), -1);
  int domains = 0;
  for (NpuId v = 0; v < npus; ++v) {
    if (in_begin[v] == in_begin[v + 1]) continue;
    const std::uint16_t fastest = fastest_rank(v);
    DeviceId domain_switch = -1;
    bool single = true;
    for (int l = in_begin[v]; l < in_begin[v + 1] && single; ++l) {
      if (links[l].delay_rank != fastest) continue;
      if (!links[l].switch_route()) {
        single = false;
        break;
      }
      const DeviceId s = topology.link(ports.last_hop(links[l])).src;
      if (domain_switch >= 0 && s != domain_switch) single = false;
      domain_switch = s;
    }
    if (!single || domain_switch < 0) continue;
    if (domain_index[domain_switch] < 0) domain_index[domain_switch] = domains++;
    domain_of_[v] = domain_index[domain_switch];
  }
  if (domains == 0) {
    domain_of_.clear();
    return;
  }
  slow_link_.assign(links.size(), 0);
  bool any_slow = false;
  for (NpuId v = 0; v < npus; ++v) {
    if (domain_of_[v] < 0) continue;
    const std::uint16_t fastest = fastest_rank(v);
    for (int l = in_begin[v]; l < in_begin[v + 1]; ++l)
      if (links[l].delay_rank != fastest) slow_link_[l] = any_slow = true;
  }
  if (!any_slow) {
    domain_of_.clear();
    slow_link_.clear();
    return;
  }
  covered_.resize(domains, chunks);
}

}  // namespace tacos::detail
