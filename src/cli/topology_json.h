#pragma once
// The object `tacos topology describe --json` prints; the Python module's Topology.describe()
// returns the same.
#include <nlohmann/json.hpp>

#include "tacos/topology/topology.h"

namespace tacos::cli {

nlohmann::ordered_json describe_json(const Topology& topology);

}  // namespace tacos::cli
