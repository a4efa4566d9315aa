#pragma once
// The part of a topology that a group of NPUs spans on its own: what a collective among those
// NPUs may use when nothing may be relayed through NPUs outside the group (ASTRA-sim runs a
// workload collective on its members only: a relay through another rank deadlocks or crashes
// it when that rank runs collectives of its own, issue 27).
#include <optional>
#include <vector>

#include "tacos/common/types.h"
#include "tacos/topology/topology.h"

namespace tacos {

// NPUs: the members, renumbered 0..k-1 in the (sorted) order given; devices: every switch that
// keeps a link; links: those between kept devices, as they are. The shape stays for a 1-D
// switch or fully connected network (a group of it is the same kind with k NPUs) and for the
// whole topology; otherwise it is custom. nullopt when the members cannot all reach each other
// inside it. `members` must be sorted, distinct NPUs of `topology`.
std::optional<Topology> sub_topology(const Topology& topology, const std::vector<NpuId>& members);

}  // namespace tacos
