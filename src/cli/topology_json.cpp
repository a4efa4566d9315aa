#include "topology_json.h"

#include "tacos/common/units.h"
#include "tacos/topology/describe.h"

namespace tacos::cli {

nlohmann::ordered_json describe_json(const Topology& t) {
  const TopologySummary s = describe_topology(t);
  nlohmann::ordered_json out;
  out["topology"] = t.name();
  out["npus"] = s.npus;
  out["switches"] = s.switches;
  out["multicast_switches"] = s.multicast_switches;
  out["links"] = s.links;
  out["min_degree"] = s.min_degree;
  out["max_degree"] = s.max_degree;
  out["diameter_hops"] = s.diameter_hops;
  out["diameter_latency_us"] = to_micros(s.diameter_latency_ps);
  out["min_ingress_gbps"] = s.min_ingress_gbps;
  out["max_ingress_gbps"] = s.max_ingress_gbps;
  out["connected"] = s.connected;
  // What built it (Topology::shape): the generator kind and the NPUs' dimensions.
  const TopologyShape& shape = t.shape();
  nlohmann::ordered_json dimensions = nlohmann::ordered_json::array();
  static constexpr const char* kWirings[] = {"line", "ring", "uniring", "fc", "switch"};
  for (const ShapeDimension& d : shape.dimensions)
    dimensions.push_back({{"wiring", kWirings[static_cast<int>(d.wiring)]}, {"size", d.size}});
  out["kind"] = to_string(shape.kind);
  out["dimensions"] = dimensions;
  return out;
}

}  // namespace tacos::cli
