#pragma once
// A generator topology with the given per-dimension bandwidth (GB/s) and the default latency.
#include <string>
#include <utility>
#include <vector>

#include "tacos/topology/generators.h"

namespace tacos {

inline Topology generated(const std::string& spec, std::vector<double> bandwidth = {50}) {
  LinkParams params;
  params.bandwidth_gbps = std::move(bandwidth);
  return generate_topology(spec, params);
}

}  // namespace tacos
