#pragma once
// Internal: the store-and-forward bound of All-Gather and Reduce-Scatter on networks of NPUs
// alone (store_and_forward_bound.h, LowerBound::store_and_forward_bound_us).
#include <functional>
#include <vector>

#include "tacos/collective/collective.h"
#include "tacos/topology/topology.h"

namespace tacos::bounds_detail {

// Seconds; 0 where the argument does not apply (not All-Gather or Reduce-Scatter, switches).
// Over links without latency it is the bytes alone (no more than the cut bound).
double link_fill_bound_seconds(const Topology& topology, const Collective& collective);

// At most how many seconds of bytes one link of latency `latency` can have delivered by each
// time grid[i] = i x step (i < points), when its sender holds at most holds(t) seconds of bytes
// at time t (nondecreasing): every message holds the link for the latency plus its bytes and
// carries only bytes its sender held when it started. Upper bounds at the grid's times.
std::vector<double> link_fill_capacity(double latency, double step, int points,
                                       const std::function<double(double)>& holds);

}  // namespace tacos::bounds_detail
