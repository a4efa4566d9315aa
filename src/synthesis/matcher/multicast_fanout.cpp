#include "multicast_fanout.h"

namespace tacos::detail {

bool MulticastFanout::init(const Topology& topology, std::span<const MatchLink> links,
                           const SwitchPorts& ports) {
  entry_port_.assign(links.size(), -1);
  fanout_.assign(topology.num_links(), {});
  bool any = false;
  for (LinkId l = 0; l < static_cast<LinkId>(links.size()); ++l) {
    const MatchLink& link = links[l];
    // Sharing the entry hop needs a hop beyond it.
    if (!link.switch_route() || link.hops_end - link.hops_begin < 2) continue;
    const LinkId port = ports.first_hop(link);
    if (!topology.is_multicast(topology.link(port).dst)) continue;
    entry_port_[l] = port;
    fanout_[port].push_back(l);
    any = true;
  }
  if (!any) {
    entry_port_.clear();
    fanout_.clear();
  }
  return any;
}

}  // namespace tacos::detail
