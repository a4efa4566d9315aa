#pragma once
// The real-system generators (numbers and sources: docs/topologies.md): dgx1, the DGX pods
// dgx-a100 / dgx-h100 / dgx-h200 / dgx-b200 and gb200-nvl72 racks, with their capability words
// (:multicast, :nvls, :sharp; switch_suffix.h).
#include <string_view>

#include "tacos/topology/generators.h"

namespace tacos::spec {

// Whether `kind` (the spec text before the first ':') names one of them.
bool is_system_kind(std::string_view kind);

// Builds `spec` (trimmed, its kind one of is_system_kind's). Throws Error for bad sizes, words
// or parameters.
Topology generate_system(std::string_view spec, const LinkParams& params);

}  // namespace tacos::spec
