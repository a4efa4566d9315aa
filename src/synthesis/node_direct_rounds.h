#pragma once
// The order in which the NICs of one rail send their messages (node-direct,
// baseline_node_direct.cpp). Switch routes are fixed per NPU pair (a hash picks the spine, as
// ECMP does), so which pairs talk at the same time decides how many messages share a leaf's
// uplink or a spine's downlink. Each round is a perfect matching of the rail's senders to
// receivers (Kuhn's augmenting paths) in which, where possible, no switch link carries more
// messages than its bandwidth has room for at the senders' rate (a 100 GB/s leaf uplink: two
// 50 GB/s NICs' messages); where not, the fewest over.
#include <span>
#include <vector>

#include "node_direct_rails.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

// `rail[m]`: node m's NPU on the rail; `messages[m]`: what node m sends on it, every node
// sending and receiving the same number of messages, at most one per node pair. Returns, per
// node m, the indices into messages[m] in the order m sends them: in round t every node sends
// its t-th message and every node receives exactly one. Deterministic; about D^2 x messages
// route checks per round.
std::vector<std::vector<int>> balanced_rail_rounds(
    const Topology& network, std::span<const NpuId> rail,
    const std::vector<std::vector<RailMessage>>& messages);

}  // namespace tacos::detail
