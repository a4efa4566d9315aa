#pragma once
// tacos's own topology YAML format and ASTRA-sim analytical network configs.
#include <string>

#include "tacos/topology/topology.h"

namespace tacos {

// Reads a YAML topology file. Recognises:
//  - tacos format: `npus`, optional `switches`, `links: [{src, dst, bandwidth, latency,
//    bidirectional}]` (bandwidth GB/s, latency with unit suffix, bare = us), or a `generate:`
//    block {topology: SPEC, bandwidth: .., latency: ..};
//  - ASTRA-sim analytical network: `topology`, `npus_count`, `bandwidth`, `latency` lists
//    (latency bare numbers in ns).
// Errors are tacos::Error "FILE:LINE: what was expected".
Topology read_topology_yaml(const std::string& path);

}  // namespace tacos
