#pragma once
// Lower bounds on the time of a collective on a topology: no algorithm, however chunked or
// scheduled, can finish faster. Computed on the topology WITH its switch devices (switches are
// vertices that relay, may copy, and reduce where Topology::is_reducing says so; their links
// carry the real port bandwidth), so the bound holds for the unwound topology the synthesizer
// uses as well. With reducing switches All-Reduce keeps the cut bound (every NPU must receive
// and send the whole buffer: buffer / B on a star of ports B, not 2(N-1)/N x buffer / B) and the
// gossip bounds only over groupings that hold every reducing switch inside a group of NPUs.
#include <string>

#include "tacos/collective/collective.h"
#include "tacos/topology/topology.h"

namespace tacos {

struct LowerBound {
  // The farthest (source, destination) pair that must communicate: max over chunks and over
  // destinations lacking the chunk of the latency-shortest path (sum of link latencies) from
  // the nearest source (copy collectives) or from the farthest contributor (reductions: every
  // contribution must reach the destination). Pure latency, so it holds for any chunking.
  double latency_bound_us = 0;
  // The cut bound: max over device sets S of (bytes that must enter S) / (bandwidth into S),
  // see `method` for how it was computed and whether it is exact.
  double bandwidth_bound_us = 0;
  // max(latency_bound_us, bandwidth_bound_us).
  double lower_bound_us = 0;
  // How the bandwidth bound was obtained (one line).
  std::string method;
  // False when the bandwidth bound is a valid bound that may lie below the exact cut bound
  // (all-to-all on more than 20 devices: the best of a set of candidate cuts).
  bool bandwidth_bound_exact = true;
  // Under the tacos link model only (a message holds each port for latency + bytes /
  // bandwidth): switches store and forward whole messages, so the bytes that groups of NPUs (a
  // DGX node, one NPU) must exchange through uniform unicast switches (every port of the same
  // bandwidth and latency: rail leaves, a single switch; or a fabric of switches whose links to
  // the NPUs are all alike: a fat-tree, leaves behind spines) take longer than their bandwidth
  // alone allows, at any message size (src/bounds/store_and_forward_bound.cpp). On networks of
  // NPUs alone, Broadcast and Reduce: NPUs relay whole messages too, so the root's links and
  // the farthest member's, a path of latencies apart, cannot both be kept busy with messages
  // that are large and few (src/bounds/rooted_relay_bound.cpp), and All-Reduce likewise
  // between two far members (each one's contribution is rooted at it); All-Gather and
  // Reduce-Scatter:
  // a link in carries only what its sender has gathered, so it needs several messages
  // (src/bounds/link_fill_bound.cpp). 0 where none applies (other collectives without
  // switches, traffic that can bypass the switches, NPU ports of mixed speeds, multicast
  // switches).
  // Not part of lower_bound_us, which holds for both link models.
  double store_and_forward_bound_us = 0;
};

// Throws Error when the collective was made for another NPU count or when some NPU that must
// receive data cannot be reached.
LowerBound compute_lower_bound(const Topology& topology_with_switches,
                               const Collective& collective);

}  // namespace tacos
