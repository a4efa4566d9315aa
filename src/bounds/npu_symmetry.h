#pragma once
// Whether every NPU of a topology looks the same: tori, rings, hypercubes and fully connected
// dimensions whose links are alike along each dimension. There the bounds need one NPU's
// answer instead of one per NPU (on torus2d:128x128 the All-Gather cut bound ran 16,384
// shortest-path certificates and the latency bound 16,384 breadth-first searches).
#include "tacos/topology/topology.h"

namespace tacos::bounds_detail {

// True when the topology has no switches, its shape lists switchless dimensions (rings,
// one-way rings, fully connected, lines of two; their sizes multiplying to the NPU count), and
// shifting every NPU by one step along any dimension maps each link onto a link with the same
// bandwidth and latency. The shifts then are automorphisms that take any NPU to any other. False
// where any of that fails or cannot be checked (custom topologies, meshes, switches, parallel
// links).
bool npus_are_all_alike(const Topology& topology);

}  // namespace tacos::bounds_detail
