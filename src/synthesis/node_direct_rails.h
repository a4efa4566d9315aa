#pragma once
// Which rail carries which node pair in node-direct (baseline_node_direct.cpp).
//
// The layout: node m's block goes to node m + s as slots (s, shard j), s = 1 .. D-1,
// j = 0 .. G-1, cut into G runs of D - 1 slots, run r on rail r; every NIC sends and receives
// D - 1 shards, whole blocks where D - 1 >= G, a block over several rails where there are
// fewer nodes than rails.
//
// Behind leaves and spines the switch routes are fixed per NPU pair (a hash picks the spine, as
// ECMP does), so what each leaf-spine link carries over the whole collective is set by which
// pairs share a rail. In the layout the offsets that stay inside a leaf are on the first and
// last rails and those that all cross the spines on the middle ones, where a hashed spine link
// then carries up to half again its share. So where links join switches, whole-block pairs
// change rails four at a time (a -> c and b -> d from rail x to rail y, a -> d and b -> c from
// y to x: every NIC keeps its count of messages and shards) while that lowers the busiest
// leaf-spine link, measured as the sum of the squares of the links' busy times.
#include <vector>

#include "tacos/common/link_model.h"
#include "tacos/common/types.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

// One message of a NIC: shards first .. last - 1 of its node's block to node `to`.
struct RailMessage {
  int to;
  int first, last;
};

struct RailPlan {
  // messages[r][m]: what node m's NIC on rail r sends, in the layout's order.
  std::vector<std::vector<std::vector<RailMessage>>> messages;
  bool rebalanced = false;  // pairs changed rails (there are links between switches)
};

// Which messages the plan becomes: All-Gather copies node m's block to node n over the route
// from m to n; Reduce-Scatter sends the partial sums back over the route from n to m, which
// the hash may take through another spine; All-Reduce does both, one after the other.
struct NodeDirectPhases {
  bool copies = true;
  bool reductions = false;
};

// `nodes[m][r]`: node m's NPU on rail r (D nodes of G NPUs). A message of c shards is
// `pieces` messages of c x shard_bytes on each link. Deterministic.
RailPlan node_direct_rails(const Topology& network, const std::vector<std::vector<NpuId>>& nodes,
                           Bytes shard_bytes, int pieces, LinkModel model, NodeDirectPhases phases);

}  // namespace tacos::detail
