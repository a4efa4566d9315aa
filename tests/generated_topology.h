#pragma once
// A generator topology with the given per-dimension bandwidth (GB/s) and the default latency;
// one from a test parameter "SPEC" or "SPEC|BANDWIDTH|LATENCY" (as the command line's flags).
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

inline Topology generated_from_param(const std::string& param) {
  std::vector<std::string> parts{""};
  for (char ch : param)
    if (ch == '|')
      parts.emplace_back();
    else
      parts.back() += ch;
  parts.resize(3);
  return generate_topology(parts[0], parse_link_params(parts[1], parts[2]));
}

}  // namespace tacos
