// The part of a topology a group of NPUs spans (see tacos/topology/sub_topology.h).
#include "tacos/topology/sub_topology.h"

#include <algorithm>

#include "tacos/common/error.h"

namespace tacos {

std::optional<Topology> sub_topology(const Topology& topology, const std::vector<NpuId>& members) {
  const int n = topology.npus();
  std::vector<DeviceId> new_id(static_cast<std::size_t>(topology.devices()), -1);
  for (std::size_t i = 0; i < members.size(); ++i)
    new_id[static_cast<std::size_t>(members[i])] = static_cast<DeviceId>(i);
  auto kept_end = [&](DeviceId d) { return topology.is_switch(d) || new_id[d] >= 0; };
  // Switches keep their order after the members; a switch left without links goes.
  std::vector<char> used(static_cast<std::size_t>(topology.devices()), 0);
  for (const Link& l : topology.links())
    if (kept_end(l.src) && kept_end(l.dst)) used[l.src] = used[l.dst] = 1;
  DeviceId next = static_cast<DeviceId>(members.size());
  for (DeviceId d = n; d < topology.devices(); ++d)
    if (used[d]) new_id[d] = next++;
  std::vector<Link> links;
  for (const Link& l : topology.links())
    if (kept_end(l.src) && kept_end(l.dst) && new_id[l.src] >= 0 && new_id[l.dst] >= 0)
      links.push_back(Link{new_id[l.src], new_id[l.dst], l.bandwidth_gbps, l.latency_ps});
  const int k = static_cast<int>(members.size());
  Topology sub(k, next - k, std::move(links), topology.name());
  for (DeviceId d = n; d < topology.devices(); ++d)
    if (new_id[d] >= 0) {
      if (topology.is_multicast(d)) sub.set_multicast(new_id[d]);
      if (topology.is_reducing(d)) sub.set_reducing(new_id[d]);
    }
  const TopologyShape& shape = topology.shape();
  if (k == n) {
    sub.set_shape(shape);
  } else if (shape.kind == TopologyKind::kDimensions && shape.dimensions.size() == 1 &&
             (shape.dimensions[0].wiring == DimensionWiring::kSwitch ||
              shape.dimensions[0].wiring == DimensionWiring::kFullyConnected)) {
    TopologyShape group = shape;
    group.dimensions[0].size = k;
    group.astra_network_text.clear();  // describes the whole network
    sub.set_shape(group);
  }
  for (DeviceId d = 0; d < k; ++d) {
    const std::vector<char> forward = sub.reachable(d, true);
    for (DeviceId e = 0; e < k; ++e)
      if (!forward[static_cast<std::size_t>(e)]) return std::nullopt;
  }
  return sub;
}

}  // namespace tacos
