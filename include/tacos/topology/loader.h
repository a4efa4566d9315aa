#pragma once
// One entry point for --topology: a generator spec or a YAML file (tacos format or ASTRA-sim
// analytical network config, told apart by their keys).
#include <string>

#include "tacos/topology/generators.h"

namespace tacos {

// If `spec_or_file` names an existing file or ends in .yml/.yaml it is loaded as a file
// (--bandwidth/--latency do not apply to files and are ignored), otherwise it is a generator
// spec. Throws Error with file:line context on bad files.
Topology load_topology(const std::string& spec_or_file, const LinkParams& params);

}  // namespace tacos
