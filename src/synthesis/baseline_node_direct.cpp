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
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "all_gather_plan.h"
#include "node_direct_groups.h"
#include "node_direct_rails.h"
#include "node_direct_rounds.h"
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

namespace {

// order[r][m]: the indices into rails.messages[r][m] in the order node m's NIC on rail r sends.
using RailOrder = std::vector<std::vector<std::vector<int>>>;

// The schedule of `collective` with the NICs sending in `order`.
Algorithm build_plan(const Topology& topology, const Topology& timing, const Collective& collective,
                     LinkModel model, const Nodes& nodes, const RailPlan& rails,
                     const RailOrder& order) {
  const int d_count = static_cast<int>(nodes.size());
  const int g_count = static_cast<int>(nodes.front().size());
  const int k_count = collective.chunks_per_npu();
  // The planned view joins every pair on a switch route by one link: every message is one hop,
  // and the budget is known before anything is planned.
  AllGatherPlan plan(collective);
  std::vector<ChunkId> block;
  // Steps: the node gathers at k; a NIC's t-th message leaves at K + t K + k and is handed on
  // one step later (pieces interleaved, so a NIC streams piece after piece). The GPU on rail r
  // gathers to and hands on to rails r + 1, r + 2, ... (mod G): GPUs that send at the same time
  // then start on different peers' NVSwitch ports instead of all on the node's first GPU's.
  for (int k = 0; k < k_count; ++k)
    for (int m = 0; m < d_count; ++m) {
      node_block(block, nodes[m], k_count, k);
      gather_in_rotation(plan, nodes[m], block, k);
      for (int r = 0; r < g_count; ++r) {
        const auto& messages = rails.messages[static_cast<std::size_t>(r)][m];
        const auto& sequence = order[r][m];
        for (std::size_t t = 0; t < sequence.size(); ++t) {
          const RailMessage& message = messages[static_cast<std::size_t>(sequence[t])];
          const auto part =
              std::span<const ChunkId>(block).subspan(message.first, message.last - message.first);
          const std::int64_t step = k_count + static_cast<std::int64_t>(t) * k_count + k;
          plan.send(nodes[m][r], nodes[message.to][r], step, part);
          hand_on_in_rotation(plan, nodes[message.to], r, step + 1, part);
        }
      }
    }
  return plan.build(topology, timing, collective, "node-direct", model);
}

// All-to-All, as NCCL's PXN: what a GPU sends to the GPU on rail r of another node goes first
// over the NVSwitch to its own node's GPU on rail r, which sends, per node, one message over
// rail r with all its node's chunks for that GPU: 8 chunks a message on a DGX instead of 1,
// each of which pays the network's per-port latency (1 us against 2.4 us of bytes for dgx-h100:64's
// 128 KiB chunks). Nodes go in shift order (node m to m + 1, m + 2, ...), so every leaf port
// takes one message at a time; a shift's chunks are gathered one step before they leave. Inside
// a node chunks go straight over the NVSwitch.
Algorithm node_direct_all_to_all(const Topology& topology, const Topology& timing,
                                 const Collective& collective, LinkModel model,
                                 const Nodes& nodes) {
  const int n = collective.num_members();
  const int d_count = static_cast<int>(nodes.size());
  const int g_count = static_cast<int>(nodes.front().size());
  const int k_count = collective.chunks_per_npu();
  // At most two hops a chunk (the gather, the rail), counted before anything is planned.
  require_transfers_within(2.0 * n * (n - 1) * k_count, kBaselineTransferBudget,
                           "%.0f chunk transfers > %.0f, the baselines' budget");
  auto chunk = [&](NpuId from, NpuId to, int k) {
    return static_cast<ChunkId>((static_cast<std::int64_t>(collective.member_index(from)) * n +
                                 collective.member_index(to)) *
                                    k_count +
                                k);
  };
  LogicalSchedule schedule(topology, timing, collective);
  std::vector<ChunkId> message;
  for (int m = 0; m < d_count; ++m) {
    const auto& node = nodes[m];
    for (int k = 0; k < k_count; ++k)
      for (int a = 0; a < g_count; ++a)
        for (int b = 1; b < g_count; ++b)
          schedule.send(node[a], node[(a + b) % g_count], k,
                        chunk(node[a], node[(a + b) % g_count], k));
    for (int shift = 1; shift < d_count; ++shift) {
      const auto& there = nodes[(m + shift) % d_count];
      for (int k = 0; k < k_count; ++k) {
        const std::int64_t gathered = static_cast<std::int64_t>(shift - 1) * k_count + k;
        for (int r = 0; r < g_count; ++r) {
          message.clear();
          for (int a = 0; a < g_count; ++a) {
            message.push_back(chunk(node[a], there[r], k));
            if (a != r) schedule.send(node[a], node[r], gathered, message.back());
          }
          schedule.send(node[r], there[r], gathered + k_count, message);
        }
      }
    }
  }
  return schedule.build("node-direct", model);
}

}  // namespace

Algorithm node_direct_baseline(const Topology& topology, const Topology& timing,
                               const Collective& collective, LinkModel model, bool with_groups) {
  auto found = pod_nodes(timing, collective);
  if (auto* reason = std::get_if<std::string>(&found)) throw Error(*reason);
  const Nodes& nodes = std::get<Nodes>(found);
  if (collective.kind() == CollectiveKind::kAllToAll)
    return node_direct_all_to_all(topology, timing, collective, model, nodes);
  const int d_count = static_cast<int>(nodes.size());
  const int g_count = static_cast<int>(nodes.front().size());
  const int k_count = collective.chunks_per_npu();
  AllGatherPlan::require_within_budget(collective);  // before anything is planned

  // Which NIC sends which node pair (node_direct_rails.h), and in which order: the layout's
  // where no link joins switches, else rounds that keep the spines' links within their
  // bandwidth (node_direct_rounds.h). Reduce-Scatter's partial sums take the routes back;
  // All-Reduce's pairs are spread for both phases and its rounds made for the All-Gather.
  NodeDirectPhases phases;
  phases.copies = collective.kind() != CollectiveKind::kReduceScatter;
  phases.reductions = collective.kind() != CollectiveKind::kAllGather;
  const RailPlan rails =
      node_direct_rails(timing, nodes, collective.chunk_bytes(), k_count, model, phases);
  if (!rails.rebalanced) {
    RailOrder order(static_cast<std::size_t>(g_count));
    for (int r = 0; r < g_count; ++r)
      for (const auto& sent : rails.messages[static_cast<std::size_t>(r)]) {
        order[r].emplace_back(sent.size());
        std::iota(order[r].back().begin(), order[r].back().end(), 0);
        // Smallest messages first: a message crosses the leaf whole, so the leaf's port to a
        // NIC idles wherever a message is larger than the one before it (for the difference);
        // in ascending order that adds up to the largest message once, and every NIC's last
        // arrivals are whole blocks, handed on while the NIC streams, not a partial block behind.
        auto& sequence = order[r].back();
        std::stable_sort(sequence.begin(), sequence.end(), [&](int x, int y) {
          return sent[x].last - sent[x].first < sent[y].last - sent[y].first;
        });
      }
    return build_plan(topology, timing, collective, model, nodes, rails, order);
  }
  // Behind spines the rounds, each filled preferring the layout's order or the smallest
  // messages first; neither is faster everywhere (docs/quality.md, "Measured choices"), so both
  // are built and the faster kept (the layout's on a tie).
  std::optional<Algorithm> best;
  std::vector<NpuId> rail(static_cast<std::size_t>(d_count));
  for (const bool smallest_first : {false, true}) {
    RailOrder order(static_cast<std::size_t>(g_count));
    for (int r = 0; r < g_count; ++r) {
      for (int m = 0; m < d_count; ++m) rail[static_cast<std::size_t>(m)] = nodes[m][r];
      order[r] = balanced_rail_rounds(timing, rail, rails.messages[static_cast<std::size_t>(r)],
                                      g_count, collective.chunk_bytes(), k_count, model,
                                      !phases.copies, smallest_first);
    }
    Algorithm built = build_plan(topology, timing, collective, model, nodes, rails, order);
    if (!best || built.collective_time < best->collective_time) best = std::move(built);
  }
  if (const auto groups = with_groups ? leaf_groups(timing, nodes) : std::nullopt) {
    AllGatherPlan plan(collective);
    plan_group_relay(plan, timing, nodes, *groups, k_count);
    Algorithm built = plan.build(topology, timing, collective, "node-direct", model);
    if (built.collective_time < best->collective_time) best = std::move(built);
  }
  return std::move(*best);
}

}  // namespace tacos::detail
