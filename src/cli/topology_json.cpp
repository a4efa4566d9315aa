#include "topology_json.h"

#include <utility>

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
  out["reducing_switches"] = s.reducing_switches;
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
  for (std::size_t i = 0; i < shape.dimensions.size(); ++i) {
    const ShapeDimension& d = shape.dimensions[i];
    nlohmann::ordered_json dimension = {{"wiring", kWirings[static_cast<int>(d.wiring)]},
                                        {"size", d.size}};
    // What its switches were declared to do, only when something (switch:8:nvls, dgx :sharp).
    const SwitchCapability c = shape.capability(i);
    if (c.any()) {
      dimension["multicast"] = c.multicast;
      dimension["reduce"] = c.reduce;
    }
    dimensions.push_back(std::move(dimension));
  }
  out["kind"] = to_string(shape.kind);
  out["dimensions"] = dimensions;
  return out;
}

}  // namespace tacos::cli
