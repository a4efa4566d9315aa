// The node-direct baseline (baselines.h): All-Gather on switch pods of nodes (DGX, NVL racks)
// with one message per pair of nodes. Every node first gathers its GPUs' shards over its
// NVSwitch; then for every other node one GPU sends the whole node block over its rail to the
// GPU of the same rail there (the rail of a pair chosen so that every NIC sends and receives the
// same number of blocks), and that GPU hands the block to the rest of its node over the
// NVSwitch. A rail then carries (nodes - 1) / rails blocks of a node's size per NIC instead of
// nodes - 1 single shards: on dgx-h100:128 16 messages of 512 KiB where a rail's all-gather
// sends 127 of 64 KiB, each of which pays the network's per-port latency (1 us against 1.25 us
// of bytes). Reduce-Scatter is the time reversal, All-Reduce both.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "all_gather_plan.h"
#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {
namespace {

// Nodes: NPUs grouped by the switch of their fastest link, each node's NPUs ascending (rail r
// is the r-th NPU of every node).
std::optional<std::vector<std::vector<NpuId>>> find_nodes(const Topology& network) {
  std::map<DeviceId, std::vector<NpuId>> by_switch;
  for (NpuId m = 0; m < network.npus(); ++m) {
    DeviceId best = -1;
    double fastest = 0;
    for (LinkId l : network.out_links(m)) {
      const Link& link = network.link(l);
      if (link.bandwidth_gbps > fastest) {
        fastest = link.bandwidth_gbps;
        best = link.dst;
      }
    }
    if (best < 0 || !network.is_switch(best)) return std::nullopt;
    by_switch[best].push_back(m);
  }
  std::vector<std::vector<NpuId>> nodes;
  for (auto& [s, members] : by_switch) nodes.push_back(std::move(members));
  return nodes;
}

using Nodes = std::vector<std::vector<NpuId>>;

// The nodes node-direct runs over, or why it cannot run on `network`.
std::variant<Nodes, std::string> pod_nodes(const Topology& network, const Collective& collective) {
  if (collective.num_members() != network.npus())
    return std::string("node-direct needs every NPU of the topology in the collective");
  if (network.switches() == 0)
    return std::string("node-direct needs nodes on switches (a DGX or NVL pod such as dgx-h100:4)");
  auto nodes = find_nodes(network);
  if (!nodes || nodes->size() < 2)
    return std::string(
        "node-direct needs two or more nodes: NPUs whose fastest link goes to one switch");
  for (const auto& node : *nodes)
    if (node.size() != nodes->front().size() || node.size() < 2)
      return std::string("node-direct needs nodes of the same number of NPUs, two or more");
  const SwitchRoutes& routes = network.switch_routes();
  const std::size_t per_node = nodes->front().size();
  for (std::size_t r = 0; r < per_node; ++r)
    for (const auto& a : *nodes)
      for (const auto& b : *nodes)
        if (a[r] != b[r] && routes.route(a[r], b[r]).empty())
          return "node-direct: NPU " + std::to_string(a[r]) + " cannot reach NPU " +
                 std::to_string(b[r]) + " of its rail through switches";
  for (const auto& node : *nodes)
    for (NpuId a : node)
      for (NpuId b : node)
        if (a != b && routes.route(a, b).empty())
          return "node-direct: NPU " + std::to_string(a) + " cannot reach NPU " +
                 std::to_string(b) + " of its node through switches";
  return std::move(*nodes);
}

}  // namespace

std::optional<std::string> node_direct_inapplicable(const Topology& network,
                                                    const Collective& collective) {
  auto nodes = pod_nodes(network, collective);
  if (auto* reason = std::get_if<std::string>(&nodes)) return std::move(*reason);
  return std::nullopt;
}

Algorithm node_direct_baseline(const Topology& topology, const Topology& timing,
                               const Collective& collective, LinkModel model) {
  auto found = pod_nodes(timing, collective);
  if (auto* reason = std::get_if<std::string>(&found)) throw Error(*reason);
  const Nodes& nodes = std::get<Nodes>(found);
  const int d_count = static_cast<int>(nodes.size());
  const int g_count = static_cast<int>(nodes.front().size());
  const int k_count = collective.chunks_per_npu();
  // The planned view joins every pair on a switch route by one link: every message is one hop,
  // and the budget is known before anything is planned.
  AllGatherPlan plan(collective);

  std::vector<ChunkId> block;
  std::vector<ChunkId> part;
  // Steps: the node gathers at k; the block of the t-th destination leaves at K + t K + k and
  // is handed on one step later (pieces interleaved, so a NIC streams piece after piece).
  for (int k = 0; k < k_count; ++k)
    for (int m = 0; m < d_count; ++m) {
      block.clear();
      for (NpuId owner : nodes[m]) block.push_back(static_cast<ChunkId>(owner * k_count + k));
      for (int a = 0; a < g_count; ++a)
        for (int b = 0; b < g_count; ++b)
          if (a != b)
            plan.send(nodes[m][a], nodes[m][b], k, std::span<const ChunkId>(&block[a], 1));
      // The block for node m + s (its G shards) goes over the rails as slot (s, j) of the
      // sequence s = 1 .. D-1, j = 0 .. G-1, cut into G runs of D - 1 slots, run r on rail r:
      // every NIC sends and receives D - 1 shards, whole blocks where D - 1 >= G, a block over
      // several rails where there are fewer nodes than rails.
      for (int r = 0; r < g_count; ++r) {
        const std::int64_t begin = std::int64_t{r} * (d_count - 1);
        const std::int64_t stop = begin + (d_count - 1);
        int t = 0;  // this NIC's t-th message
        for (std::int64_t slot = begin; slot < stop;) {
          const int s = static_cast<int>(slot / g_count) + 1;
          part.clear();
          for (; slot < stop && slot / g_count + 1 == s; ++slot)
            part.push_back(block[static_cast<std::size_t>(slot % g_count)]);
          const int n_index = (m + s) % d_count;
          const std::int64_t step = k_count + std::int64_t{t} * k_count + k;
          const NpuId receiver = nodes[n_index][r];
          plan.send(nodes[m][r], receiver, step, part);
          for (int b = 0; b < g_count; ++b)
            if (b != r) plan.send(receiver, nodes[n_index][b], step + 1, part);
          ++t;
        }
      }
    }
  return plan.build(topology, timing, collective, "node-direct", model);
}

}  // namespace tacos::detail
