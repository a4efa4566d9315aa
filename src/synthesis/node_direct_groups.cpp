#include "node_direct_groups.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <span>

#include "domain_relay.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {

void node_block(std::vector<ChunkId>& block, std::span<const NpuId> node, int chunks_per_npu,
                int k) {
  block.clear();
  for (NpuId owner : node) block.push_back(static_cast<ChunkId>(owner * chunks_per_npu + k));
}

void gather_in_rotation(AllGatherPlan& plan, std::span<const NpuId> node,
                        std::span<const ChunkId> block, std::int64_t step) {
  const int g_count = static_cast<int>(node.size());
  for (int a = 0; a < g_count; ++a)
    for (int b = 1; b < g_count; ++b)
      plan.send(node[a], node[(a + b) % g_count], step, block.subspan(a, 1));
}

void hand_on_in_rotation(AllGatherPlan& plan, std::span<const NpuId> node, int rail,
                         std::int64_t step, std::span<const ChunkId> part) {
  const int g_count = static_cast<int>(node.size());
  for (int b = 1; b < g_count; ++b) plan.send(node[rail], node[(rail + b) % g_count], step, part);
}

std::optional<std::vector<std::vector<int>>> leaf_groups(
    const Topology& network, const std::vector<std::vector<NpuId>>& nodes) {
  // Per node the leaf of each rail's NIC: a GPU's one link to a switch other than its node's.
  std::map<std::vector<DeviceId>, std::vector<int>> by_leaves;
  for (std::size_t m = 0; m < nodes.size(); ++m) {
    std::vector<DeviceId> leaves;
    for (NpuId gpu : nodes[m]) {
      const DeviceId node_switch = domain_switch(network, gpu);
      DeviceId leaf = -1;
      for (LinkId l : network.out_links(gpu)) {
        const DeviceId to = network.link(l).dst;
        if (!network.is_switch(to) || to == node_switch) continue;
        if (leaf >= 0) return std::nullopt;  // more than one network port
        leaf = to;
      }
      if (leaf < 0) return std::nullopt;
      leaves.push_back(leaf);
    }
    by_leaves[leaves].push_back(static_cast<int>(m));
  }
  // Nodes on unequal leaves (dgx-h100:72: 32, 32 and 8) form groups of the sizes' greatest
  // common divisor: any nodes on the same leaves can relay for each other.
  std::size_t size = 0;
  for (const auto& [leaves, members] : by_leaves) size = std::gcd(size, members.size());
  if (size < 2) return std::nullopt;
  std::vector<std::vector<int>> groups;
  for (const auto& [leaves, members] : by_leaves)
    for (std::size_t first = 0; first < members.size(); first += size)
      groups.emplace_back(members.begin() + static_cast<std::ptrdiff_t>(first),
                          members.begin() + static_cast<std::ptrdiff_t>(first + size));
  if (groups.size() < 2) return std::nullopt;
  std::sort(groups.begin(), groups.end());
  return groups;
}

namespace {

// One message of a rail's sequence, the same for every node: to its counterpart in group g + q
// (shard r of its own block), or to node i + s of its own group with group g - q's
// counterpart's block (q = 0: its own), shards first .. last - 1.
struct GroupMessage {
  bool cross;
  int q, s;
  int first, last;
};

// Each rail's sequence: the Q - 1 counterparts' shards first (they cross the spines, and relays
// need them early), then the group messages. The group's (S - 1) Q block sends (s major, q
// minor) are cut as node-direct's layout into G runs of equal shards (run r on rail r), so every
// NIC sends and, by symmetry, receives the same shards, and in every round a rail's messages are
// one shift of the group: each NIC receives exactly one.
std::vector<std::vector<GroupMessage>> rail_sequences(int g_count, int q_count, int s_count) {
  std::vector<std::vector<GroupMessage>> rails(static_cast<std::size_t>(g_count));
  const std::int64_t sends = static_cast<std::int64_t>(s_count - 1) * q_count;
  for (int r = 0; r < g_count; ++r) {
    auto& rail = rails[static_cast<std::size_t>(r)];
    const std::int64_t begin = r * sends, end = (r + 1) * sends;  // slots: send x G + shard
    std::vector<GroupMessage> local;
    for (std::int64_t slot = begin; slot < end;) {
      const std::int64_t send = slot / g_count;
      const std::int64_t last = std::min(end, (send + 1) * g_count);
      local.push_back({false, static_cast<int>(send % q_count),
                       static_cast<int>(send / q_count) + 1, static_cast<int>(slot % g_count),
                       static_cast<int>(last - send * g_count)});
      slot = last;
    }
    auto size = [](const GroupMessage& m) { return m.last - m.first; };
    // Whole own blocks (ready at once), whole relayed blocks, then the partial blocks largest
    // first: after the first whole block a receiver's leaf port never waits for a larger
    // message behind a smaller one, and the last message handed on over the NVSwitch is small.
    auto whole_end = std::stable_partition(
        local.begin(), local.end(), [&](const GroupMessage& m) { return size(m) == g_count; });
    std::stable_sort(whole_end, local.end(), [&](const GroupMessage& a, const GroupMessage& b) {
      return size(a) > size(b);
    });
    std::stable_partition(local.begin(), whole_end, [](const GroupMessage& m) { return m.q == 0; });
    for (int q = 1; q < q_count; ++q) rail.push_back({true, q, 0, r, r + 1});
    rail.insert(rail.end(), local.begin(), local.end());
  }
  return rails;
}

// place[(g Q + q) S + i]: where in group g + q the counterpart of group g's i-th node is. The
// counterparts' shards all leave in the first few microseconds and each crosses a leaf's link
// up to a spine and the spine's link down to another leaf, picked by the routes' hash; the
// places start as i and are swapped two at a time while that lowers the sum of the squares of
// the shards on each such link (with the identity the busiest of dgx-h100:128's took 15
// shards, 6 on average). Reduce-Scatter runs over the routes back, whose spine the hash picks
// from the same pair, so the same links counted the other way.
std::vector<int> counterparts(const Topology& network, const std::vector<std::vector<NpuId>>& nodes,
                              const std::vector<std::vector<int>>& groups) {
  const int q_count = static_cast<int>(groups.size());
  const int s_count = static_cast<int>(groups.front().size());
  const int g_count = static_cast<int>(nodes.front().size());
  const SwitchRoutes& routes = network.switch_routes();
  std::vector<int> place(static_cast<std::size_t>(q_count) * q_count * s_count);
  for (std::size_t x = 0; x < place.size(); ++x) place[x] = static_cast<int>(x % s_count);
  std::vector<std::int64_t> shards(static_cast<std::size_t>(network.num_links()), 0);
  std::int64_t change = 0;  // in the sum of squares
  auto move = [&](int g, int q, int i, int j, int sign) {
    const auto& from = nodes[groups[g][i]];
    const auto& to = nodes[groups[(g + q) % q_count][j]];
    for (int r = 0; r < g_count; ++r)
      for (LinkId l : routes.route(from[r], to[r])) {
        const Link& link = network.link(l);
        if (!network.is_switch(link.src) || !network.is_switch(link.dst)) continue;
        std::int64_t& n = shards[static_cast<std::size_t>(l)];
        change += sign > 0 ? 2 * n + 1 : 1 - 2 * n;
        n += sign;
      }
  };
  auto at = [&](int g, int q, int i) -> int& {
    return place[(static_cast<std::size_t>(g) * q_count + q) * s_count + i];
  };
  for (int g = 0; g < q_count; ++g)
    for (int q = 1; q < q_count; ++q)
      for (int i = 0; i < s_count; ++i) move(g, q, i, at(g, q, i), +1);
  for (int pass = 0; pass < 8; ++pass) {
    bool improved = false;
    for (int g = 0; g < q_count; ++g)
      for (int q = 1; q < q_count; ++q)
        for (int a = 0; a < s_count; ++a)
          for (int b = a + 1; b < s_count; ++b) {
            int& pa = at(g, q, a);
            int& pb = at(g, q, b);
            change = 0;
            move(g, q, a, pa, -1);
            move(g, q, b, pb, -1);
            move(g, q, a, pb, +1);
            move(g, q, b, pa, +1);
            if (change < 0) {
              std::swap(pa, pb);
              improved = true;
            } else {
              move(g, q, a, pb, -1);
              move(g, q, b, pa, -1);
              move(g, q, a, pa, +1);
              move(g, q, b, pb, +1);
            }
          }
    if (!improved) break;
  }
  return place;
}

}  // namespace

void plan_group_relay(AllGatherPlan& plan, const Topology& network,
                      const std::vector<std::vector<NpuId>>& nodes,
                      const std::vector<std::vector<int>>& groups, int chunks_per_npu) {
  const int k_count = chunks_per_npu;
  const int g_count = static_cast<int>(nodes.front().size());
  const int q_count = static_cast<int>(groups.size());
  const int s_count = static_cast<int>(groups.front().size());
  const auto rails = rail_sequences(g_count, q_count, s_count);
  const std::vector<int> place = counterparts(network, nodes, groups);
  // from[(g Q + q) S + j]: the place in group g - q of the node whose counterpart in group g is j.
  std::vector<int> from(place.size());
  for (int g = 0; g < q_count; ++g)
    for (int q = 1; q < q_count; ++q)
      for (int i = 0; i < s_count; ++i)
        from[(static_cast<std::size_t>((g + q) % q_count) * q_count + q) * s_count +
             place[(static_cast<std::size_t>(g) * q_count + q) * s_count + i]] = i;
  const int d_count = static_cast<int>(nodes.size());
  std::vector<std::vector<ChunkId>> blocks(static_cast<std::size_t>(d_count));
  for (int k = 0; k < k_count; ++k) {
    for (int m = 0; m < d_count; ++m) {
      node_block(blocks[static_cast<std::size_t>(m)], nodes[m], k_count, k);
      gather_in_rotation(plan, nodes[m], blocks[static_cast<std::size_t>(m)], k);
    }
    for (int g = 0; g < q_count; ++g)
      for (int i = 0; i < s_count; ++i) {
        const int m = groups[g][i];
        for (int r = 0; r < g_count; ++r) {
          const auto& sequence = rails[static_cast<std::size_t>(r)];
          for (std::size_t t = 0; t < sequence.size(); ++t) {
            const GroupMessage& message = sequence[t];
            // A step more after the counterparts' shards (a rail's first Q - 1 messages): the
            // relayed blocks are handed on over the NVSwitch in it.
            const std::int64_t step = k_count + static_cast<std::int64_t>(t) * k_count + k +
                                      (t + 1 >= static_cast<std::size_t>(q_count) ? k_count : 0);
            const std::size_t slot =
                (static_cast<std::size_t>(g) * q_count + message.q) * s_count + i;
            const int to = message.cross ? groups[(g + message.q) % q_count][place[slot]]
                                         : groups[g][(i + message.s) % s_count];
            const int origin = message.cross || message.q == 0
                                   ? m
                                   : groups[(g - message.q + q_count) % q_count][from[slot]];
            const auto part = std::span<const ChunkId>(blocks[static_cast<std::size_t>(origin)])
                                  .subspan(static_cast<std::size_t>(message.first),
                                           static_cast<std::size_t>(message.last - message.first));
            plan.send(nodes[m][r], nodes[to][r], step, part);
            hand_on_in_rotation(plan, nodes[to], r, step + 1, part);
          }
        }
      }
  }
}

}  // namespace tacos::detail
