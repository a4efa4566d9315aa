#pragma once
// Internal: the store-and-forward bound of Broadcast and Reduce between the root's links and a
// far member's, and of All-Reduce between two far members' (store_and_forward_bound.h,
// LowerBound::store_and_forward_bound_us).
#include "tacos/collective/collective.h"
#include "tacos/topology/topology.h"

namespace tacos::bounds_detail {

// Seconds; 0 where the argument does not apply (not Broadcast, Reduce or All-Reduce, multicast
// or reducing switches, no member two hops or more from the root (All-Reduce: from another
// member), All-Reduce through switches, or, through switches, no member's group apart from the
// root's).
double rooted_relay_bound_seconds(const Topology& topology, const Collective& collective);

// The least sum over messages l = 1, 2, ... of (latency x l x b_l + b_l^2 / 2) over message
// port times b_l >= 0 (seconds of bytes) adding up to `seconds`: how much a port's message
// sizes cost the argument (rooted_relay_bound.cpp). 0 where either is 0.
double least_message_cost(double seconds, double latency);

}  // namespace tacos::bounds_detail
