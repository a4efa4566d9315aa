#pragma once
// Internal: the store-and-forward bound (lower_bound.h, LowerBound::store_and_forward_bound_us).
#include "tacos/collective/collective.h"
#include "tacos/topology/topology.h"

namespace tacos::bounds_detail {

// Seconds; 0 where the argument does not apply (no group whose traffic all crosses uniform,
// unicast switches; without switches, anything but Broadcast, Reduce and All-Reduce
// (rooted_relay_bound.h) and All-Gather and Reduce-Scatter (link_fill_bound.h)).
double store_and_forward_bound_seconds(const Topology& topology, const Collective& collective);

}  // namespace tacos::bounds_detail
