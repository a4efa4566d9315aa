#pragma once
// node-direct's plan on pods behind spines (baseline_node_direct.cpp): relaying through leaf
// groups. Nodes whose NICs share a leaf on every rail form a group; a node sends its block to
// one node of every other group (its counterpart, placed to even out the leaf-spine links),
// split over all its rails, and every node sends its own block and its counterparts' to the
// rest of its group over the leaves. Only Q - 1 blocks a node leave its group (Q groups)
// instead of nearly all of them, so hashed spine routes no longer decide when blocks arrive,
// and inside a group every
// rail's round is a shift of the group's nodes: each NIC sends and receives one message a round.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "all_gather_plan.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

// Shared with node-direct's other plan (baseline_node_direct.cpp). Node `node`'s block of piece
// k: its GPUs' chunks k, one shard a GPU.
void node_block(std::vector<ChunkId>& block, std::span<const NpuId> node, int chunks_per_npu,
                int k);
// The node gathers its block at `step`: GPU a sends its shard to a + 1, a + 2, ... (mod G), so
// that GPUs sending at once start on different peers' NVSwitch ports.
void gather_in_rotation(AllGatherPlan& plan, std::span<const NpuId> node,
                        std::span<const ChunkId> block, std::int64_t step);
// The GPU on rail r hands `part` on to rails r + 1, r + 2, ... of its node at `step`.
void hand_on_in_rotation(AllGatherPlan& plan, std::span<const NpuId> node, int rail,
                         std::int64_t step, std::span<const ChunkId> part);

// groups[g][i]: the index into `nodes` of group g's i-th node (ascending), or nothing where the
// nodes do not form two or more groups of two or more nodes each: nodes whose NICs share a leaf
// on every rail (the switch of each NPU's one link to a switch other than its node's), those on
// the same leaves split into groups of the leaves' node counts' greatest common divisor
// (dgx-h100:72's 32, 32 and 8: 9 groups of 8).
std::optional<std::vector<std::vector<int>>> leaf_groups(
    const Topology& network, const std::vector<std::vector<NpuId>>& nodes);

// The All-Gather (pieces 0..K-1 interleaved as node-direct's): node gathers at step k, then on
// every rail first its counterparts' shards of that rail, then its group messages, own block
// first; a receiver hands each message on over its NVSwitch one step later.
// `network`'s routes pick each node's counterparts (counterparts() in the .cpp).
void plan_group_relay(AllGatherPlan& plan, const Topology& network,
                      const std::vector<std::vector<NpuId>>& nodes,
                      const std::vector<std::vector<int>>& groups, int chunks_per_npu);

}  // namespace tacos::detail
