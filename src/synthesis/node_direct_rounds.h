#pragma once
// The order in which the NICs of one rail send their messages (node-direct,
// baseline_node_direct.cpp). Switch routes are fixed per NPU pair (a hash picks the spine, as
// ECMP does), so which pairs talk at the same time decides how many messages share a leaf's
// uplink or a spine's downlink. Each round is a perfect matching of the rail's senders to
// receivers (Kuhn's augmenting paths) that, where possible, keeps every link within a round's
// time: the time a NIC takes for a whole block. A link carries over what it could not send in
// earlier rounds (its queue) but not what it left idle, so a 100 GB/s leaf uplink takes two
// 50 GB/s NICs' blocks in one round and one in the next (each message pays its latency). Where
// no matching fits, the fewest whole blocks over.
#include <span>
#include <vector>

#include "node_direct_rails.h"
#include "tacos/common/link_model.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

// `rail[m]`: node m's NPU on the rail; `messages[m]`: what node m sends on it, every node
// sending and receiving the same number of messages, at most one per node pair. Returns, per
// node m, the indices into messages[m] in the order m sends them: in round t every node sends
// its t-th message and every node receives exactly one. A message of c shards is `pieces`
// messages of c x shard_bytes on each link; a whole block is `whole_block` shards.
// `reductions`: the rounds are made for the Reduce-Scatter the plan becomes, which sends each
// message back from its receiver (over that route) and runs the rounds last to first.
// `smallest_first`: each round's matching tries a sender's messages smallest first (partial
// blocks in the early rounds), else in the layout's order.
// Deterministic; about D^2 x messages route checks per round.
std::vector<std::vector<int>> balanced_rail_rounds(
    const Topology& network, std::span<const NpuId> rail,
    const std::vector<std::vector<RailMessage>>& messages, int whole_block, Bytes shard_bytes,
    int pieces, LinkModel model, bool reductions, bool smallest_first = false);

}  // namespace tacos::detail
