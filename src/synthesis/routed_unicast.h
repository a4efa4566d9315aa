#pragma once
// Unicast collectives (All-to-All, Gather, Scatter: every chunk has one source and one
// destination) as routed flows: every chunk takes a path chosen against the load the other
// chunks already put on each link (a congestion-aware shortest path, then re-routed twice
// against everyone else's paths), and the links are list-scheduled (most hops left first). The
// greedy matcher routes hop by hop towards the destination and cannot see that a slow link into the
// destination is already the bottleneck (an unequal mesh's Gather sends most chunks over the root's
// slow link) or that a two-hop pair should split over both its paths (dgx1's All-to-All); flows
// can.
#include <cstdint>
#include <optional>

#include "tacos/algorithm/algorithm.h"
#include "tacos/collective/collective.h"
#include "tacos/common/link_model.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

// Beyond this many chunk-device pairs (one shortest-path search per chunk and round) the
// candidate is not tried.
constexpr double kRoutedUnicastMaxWork = 5e7;

// The faster of two path costs (the sum of link loads on the path, or its busiest link), the
// schedule under `model` (compacted by the simulator), or nullopt when it does not apply:
// switch devices, a chunk with several sources or destinations, or too large.
std::optional<Algorithm> routed_unicast(const Topology& topology, const Collective& collective,
                                        LinkModel model, std::uint64_t seed);

}  // namespace tacos::detail
