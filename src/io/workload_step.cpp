// A whole training step replayed the way ASTRA-sim runs a `tacos workload` bundle (see
// tacos/io/workload_step.h for the rules).
//
// Facts about ASTRA-sim 518bd51 this follows (astra-sim/workload/Workload.cc and
// HardwareResource.cc, astra-sim/system/Roofline.cc and Sys.cc, the custom collectives under
// astra-sim/system/astraccl/custom_collectives, the Chakra feeder it uses):
//  - a rank's workload layer scans its dependency-free nodes in id order at start and after each
//    of its nodes finishes, and issues those whose resource is free: one GPU compute node, one
//    CPU node and one communication node at a time (a metadata node counts as communication);
//  - a node that needs no time (metadata, a GPU compute node of tensor_size 0) finishes inside
//    the scan, and its children are only seen by the rank's next scan;
//  - a collective with a custom implementation starts its algorithm at once, issues every ready
//    node of the algorithm's ET, and reports back, in the same instant, when the last one
//    finished; a send finishes when its message has arrived, a 0 us compute node takes 1 ns.
//
// Flat state as in the Chakra replay (chakra_simulation.cpp): every node numbered globally
// (workload nodes first, then each collective node's algorithm instance), dependencies in CSR,
// one message per algorithm send, timed by the port engine (simulation/port_engine.h).
#include "tacos/io/workload_step.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../common/group_by.h"
#include "../simulation/port_engine.h"
#include "tacos/common/error.h"
#include "tacos/common/time_limit.h"
#include "tacos/topology/switch_routes.h"

namespace tacos {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kNodeDone = detail::PortEngine::kFirstCallerKind;

// What a workload node occupies while it runs (ASTRA-sim's HardwareResource).
enum class Resource { kGpu, kCpu, kComm };

Resource resource_of(const EtNode& n) {
  if (n.cpu_op) return Resource::kCpu;
  return n.type == EtNodeType::kComp ? Resource::kGpu : Resource::kComm;
}

// One collective node of one rank, run as its algorithm at the rank's position.
struct Instance {
  int rank = 0;
  std::uint32_t workload_node = 0;  // global index of the collective node
  int collective = 0;
  int position = 0;
  std::uint32_t begin = 0;  // its algorithm nodes: global begin .. begin + count
  std::uint32_t count = 0;
  std::uint32_t left = 0;  // nodes not finished yet
};

struct Message {
  std::uint32_t send = 0;
  std::uint32_t recv = 0;
  bool recv_posted = false;
};

struct RankState {
  std::set<std::pair<std::uint64_t, std::uint32_t>> ready;  // (node id, global node)
  bool busy[3] = {false, false, false};                     // by Resource
};

std::string describe(const EtRank& rank, const EtNode& n) {
  return rank.file + ": node " + std::to_string(n.id) +
         (n.name.empty() ? std::string() : " ('" + n.name + "')");
}

}  // namespace

std::int64_t Roofline::compute_ns(std::int64_t num_ops, std::int64_t tensor_size) const {
  const double ops = static_cast<double>(static_cast<std::uint64_t>(num_ops));
  const double bytes = static_cast<double>(static_cast<std::uint64_t>(tensor_size));
  const double peak = peak_tflops * 1000000000000;
  const double bandwidth = local_mem_gbps * 1000000000;
  const double perf = std::min(bandwidth * (ops / bytes), peak);
  const double ns = ops / perf * 1e9;
  // num_ops 0 gives 0 / 0 (ASTRA-sim's own cast of it is undefined): no duration.
  if (!(ns >= 0 && ns < 9e18)) return -1;
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(ns));
}

StepPrediction simulate_workload_step(const EtTrace& workload,
                                      const std::vector<StepCollective>& collectives,
                                      const std::map<std::uint64_t, int>& collective_of_node,
                                      const Topology& topology, const Roofline& roofline) {
  const int npus = workload.npus();
  if (topology.npus() != npus)
    throw Error(workload.prefix + ": " + std::to_string(npus) + " ranks but the topology has " +
                std::to_string(topology.npus()) + " NPUs");

  // Workload nodes first, then one algorithm instance per collective node.
  std::vector<std::uint32_t> offset(npus + 1, 0);
  for (int r = 0; r < npus; ++r)
    offset[r + 1] = offset[r] + static_cast<std::uint32_t>(workload.ranks[r].nodes.size());
  std::uint64_t total = offset[npus];
  std::vector<Instance> instances;
  std::unordered_map<std::uint64_t, std::uint32_t> instance_at;  // (rank, node id) -> instance
  auto key = [npus](int rank, std::uint64_t id) {
    return id * static_cast<std::uint64_t>(npus) + static_cast<std::uint64_t>(rank);
  };
  for (int r = 0; r < npus; ++r) {
    const EtRank& rank = workload.ranks[r];
    for (std::uint32_t i = 0; i < rank.nodes.size(); ++i) {
      const EtNode& n = rank.nodes[i];
      if (n.type == EtNodeType::kMemLoad || n.type == EtNodeType::kMemStore ||
          n.type == EtNodeType::kSend || n.type == EtNodeType::kRecv)
        throw Error(describe(rank, n) + ": a " + to_string(n.type) +
                    " in a workload: the step prediction runs compute and collective nodes only");
      if (n.type == EtNodeType::kComp && !n.cpu_op && (n.num_ops < 0 || n.tensor_size < 0))
        throw Error(describe(rank, n) +
                    ": a GPU compute node without 'num_ops' and 'tensor_size' (ASTRA-sim's "
                    "roofline needs both)");
      if (n.type != EtNodeType::kColl) continue;
      const auto c = collective_of_node.find(n.id);
      if (c == collective_of_node.end() || c->second < 0 ||
          c->second >= static_cast<int>(collectives.size()))
        throw Error(describe(rank, n) + ": no algorithm is given for this collective node");
      const StepCollective& sc = collectives[static_cast<std::size_t>(c->second)];
      const auto at = std::lower_bound(sc.members.begin(), sc.members.end(), r);
      if (at == sc.members.end() || *at != r)
        throw Error(describe(rank, n) + ": rank " + std::to_string(r) +
                    " is not in the group of its algorithm");
      Instance inst;
      inst.rank = r;
      inst.workload_node = offset[r] + i;
      inst.collective = c->second;
      inst.position = static_cast<int>(at - sc.members.begin());
      if (inst.position >= sc.algorithm->npus())
        throw Error(describe(rank, n) + ": its algorithm has no rank " +
                    std::to_string(inst.position));
      inst.begin = static_cast<std::uint32_t>(total);
      inst.count = static_cast<std::uint32_t>(sc.algorithm->ranks[inst.position].nodes.size());
      inst.left = inst.count;
      total += inst.count;
      if (total >= kNone) throw Error(workload.prefix + ": too many nodes to simulate");
      instance_at[key(r, n.id)] = static_cast<std::uint32_t>(instances.size());
      instances.push_back(inst);
    }
  }

  // Per global node: its rank, its instance (kNone: a workload node) and its EtNode.
  std::vector<int> rank_of(total);
  std::vector<std::uint32_t> instance_of(total, kNone);
  std::vector<const EtNode*> node_of(total);
  for (int r = 0; r < npus; ++r)
    for (std::uint32_t i = 0; i < workload.ranks[r].nodes.size(); ++i) {
      rank_of[offset[r] + i] = r;
      node_of[offset[r] + i] = &workload.ranks[r].nodes[i];
    }
  for (std::uint32_t k = 0; k < instances.size(); ++k) {
    const Instance& inst = instances[k];
    const auto& nodes = collectives[static_cast<std::size_t>(inst.collective)]
                            .algorithm->ranks[inst.position]
                            .nodes;
    for (std::uint32_t i = 0; i < inst.count; ++i) {
      rank_of[inst.begin + i] = inst.rank;
      instance_of[inst.begin + i] = k;
      node_of[inst.begin + i] = &nodes[i];
    }
  }
  auto base_of = [&](std::uint32_t g) {
    return instance_of[g] == kNone ? offset[rank_of[g]] : instances[instance_of[g]].begin;
  };

  // Dependencies: children in CSR, pending counts.
  std::vector<std::uint32_t> pending(total);
  for (std::uint32_t g = 0; g < total; ++g)
    pending[g] =
        static_cast<std::uint32_t>(node_of[g]->data_deps.size() + node_of[g]->ctrl_deps.size());
  const auto children =
      detail::group_by<std::uint32_t, std::uint32_t>(total, total, [&](std::size_t g, auto&& emit) {
        const std::uint32_t base = base_of(static_cast<std::uint32_t>(g));
        for (const auto* deps : {&node_of[g]->data_deps, &node_of[g]->ctrl_deps})
          for (std::uint32_t p : *deps) emit(base + p, static_cast<std::uint32_t>(g));
      });

  // Messages: an algorithm send of rank members[p] to position q is received by the same
  // collective node (same id) on rank members[q].
  const SwitchRoutes& routes = topology.switch_routes();
  std::vector<Message> messages;
  std::vector<std::uint32_t> message_of(total, kNone);
  std::vector<std::span<const LinkId>> message_route;
  std::vector<Bytes> message_bytes;
  std::vector<ChunkId> message_chunk;
  for (const Instance& inst : instances) {
    const StepCollective& sc = collectives[static_cast<std::size_t>(inst.collective)];
    const EtRank& algo = sc.algorithm->ranks[inst.position];
    const std::uint64_t id = node_of[inst.workload_node]->id;
    for (std::uint32_t i = 0; i < inst.count; ++i) {
      const EtNode& n = algo.nodes[i];
      if (n.type != EtNodeType::kSend) continue;
      const int peer = sc.members[static_cast<std::size_t>(n.peer)];
      const auto other = instance_at.find(key(peer, id));
      if (other == instance_at.end() || instances[other->second].collective != inst.collective)
        throw Error(describe(workload.ranks[inst.rank], *node_of[inst.workload_node]) + ": rank " +
                    std::to_string(peer) +
                    " has no collective node of this id and algorithm to receive " +
                    describe(algo, n));
      if (n.comm_size <= 0 || n.match < 0)
        throw Error(describe(algo, n) + ": a send without comm_size or a matching receive");
      const std::span<const LinkId> route = routes.route(inst.rank, peer);
      if (route.empty())
        throw Error(describe(algo, n) + ": rank " + std::to_string(inst.rank) +
                    " has no path to rank " + std::to_string(peer) +
                    " over a link or through switches");
      Message m;
      m.send = inst.begin + i;
      m.recv = instances[other->second].begin + static_cast<std::uint32_t>(n.match);
      message_of[m.send] = message_of[m.recv] = static_cast<std::uint32_t>(messages.size());
      messages.push_back(m);
      message_route.push_back(route);
      message_bytes.push_back(n.comm_size);
      message_chunk.push_back(n.chunks.empty() ? 0 : n.chunks.front());
    }
  }

  StepPrediction result;
  result.rank_finish.assign(npus, 0);
  result.compute.assign(npus, 0);
  result.messages = static_cast<std::int64_t>(messages.size());
  std::vector<Time> node_end(total, -1);
  std::vector<RankState> ranks(npus);

  auto release_children = [&](std::uint32_t g, auto&& ready) {
    for (std::uint32_t k = children.offsets[g]; k < children.offsets[g + 1]; ++k)
      if (--pending[children.values[k]] == 0) ready(children.values[k]);
  };
  // An algorithm node of a running collective: issued as soon as it is ready.
  auto issue_algorithm_node = [&](detail::PortEngine& engine, std::uint32_t g, Time t) {
    const EtNode& n = *node_of[g];
    if (n.type == EtNodeType::kSend) {
      engine.send(message_of[g], t);
    } else if (n.type == EtNodeType::kRecv) {
      const std::uint32_t mi = message_of[g];
      if (engine.end(mi) >= 0)
        engine.post(t, kNodeDone, g);
      else
        messages[mi].recv_posted = true;
    } else if (n.type == EtNodeType::kComp) {
      const Time duration = n.duration_micros == 0
                                ? kPicosPerNano
                                : static_cast<Time>(n.duration_micros) * kPicosPerMicro;
      engine.post(t + duration, kNodeDone, g);
    } else {
      engine.post(t, kNodeDone, g);
    }
  };
  // A workload node finished: its resource is free and its children ready; `scan` false when it
  // finished inside a scan (its children wait for the rank's next one).
  std::function<void(detail::PortEngine&, std::uint32_t, Time, bool)> workload_done;
  auto scan = [&](detail::PortEngine& engine, int r, Time t) {
    RankState& state = ranks[r];
    const std::vector<std::pair<std::uint64_t, std::uint32_t>> ready(state.ready.begin(),
                                                                     state.ready.end());
    for (const auto& [id, g] : ready) {
      const EtNode& n = *node_of[g];
      const Resource res = resource_of(n);
      bool& busy = state.busy[static_cast<int>(res)];
      if (busy) continue;
      state.ready.erase({id, g});
      busy = true;
      if (n.type == EtNodeType::kColl) {
        const Instance& run = instances[instance_at.at(key(r, id))];
        if (run.count == 0) {
          workload_done(engine, g, t, false);
          continue;
        }
        for (std::uint32_t i = 0; i < run.count; ++i)
          if (pending[run.begin + i] == 0) issue_algorithm_node(engine, run.begin + i, t);
      } else if (n.type == EtNodeType::kComp && n.cpu_op) {
        const Time duration = n.duration_micros == 0
                                  ? kPicosPerNano
                                  : static_cast<Time>(n.duration_micros) * kPicosPerMicro;
        engine.post(t + duration, kNodeDone, g);
      } else if (n.type == EtNodeType::kComp && n.tensor_size > 0) {
        const std::int64_t ns = roofline.compute_ns(n.num_ops, n.tensor_size);
        if (ns < 0 || ns > kMaxStepTime / kPicosPerNano)
          throw Error(describe(workload.ranks[r], n) + ": its roofline time (num_ops " +
                      std::to_string(n.num_ops) + ", tensor_size " + std::to_string(n.tensor_size) +
                      ") is undefined or more than the " +
                      std::to_string(kMaxStepTime / kPicosPerMicro) +
                      " us (2^50 ps) one node may take");
        const Time duration = ns * kPicosPerNano;
        result.compute[r] += duration;
        engine.post(t + duration, kNodeDone, g);
      } else {
        workload_done(engine, g, t, false);  // no work: done now, children at the next scan
      }
    }
  };
  workload_done = [&](detail::PortEngine& engine, std::uint32_t g, Time t, bool rescan) {
    const int r = rank_of[g];
    node_end[g] = t;
    ranks[r].busy[static_cast<int>(resource_of(*node_of[g]))] = false;
    release_children(g, [&](std::uint32_t c) { ranks[r].ready.insert({node_of[c]->id, c}); });
    if (rescan) scan(engine, r, t);
  };
  auto node_done = [&](detail::PortEngine& engine, std::uint32_t, std::uint32_t g, Time t) {
    node_end[g] = t;
    const std::uint32_t k = instance_of[g];
    if (k == kNone) {
      workload_done(engine, g, t, true);
      return;
    }
    release_children(g, [&](std::uint32_t c) { issue_algorithm_node(engine, c, t); });
    if (--instances[k].left == 0) workload_done(engine, instances[k].workload_node, t, true);
  };
  auto arrived = [&](detail::PortEngine& engine, std::uint32_t mi, Time t) {
    engine.post(t, kNodeDone, messages[mi].send);
    if (messages[mi].recv_posted) engine.post(t, kNodeDone, messages[mi].recv);
  };
  detail::LambdaClient client([](auto&&...) {}, arrived, node_done);

  detail::PortEngine::Options options;
  options.model = LinkModel::kAstra;
  options.clock = workload.prefix;
  options.serve_after_free = true;
  detail::PortEngine engine(topology, std::move(options), messages.size(), client);
  for (std::uint32_t mi = 0; mi < messages.size(); ++mi)
    engine.set_message(mi, message_route[mi], message_bytes[mi], message_chunk[mi]);

  for (int r = 0; r < npus; ++r) {
    for (std::uint32_t g = offset[r]; g < offset[r + 1]; ++g)
      if (pending[g] == 0) ranks[r].ready.insert({node_of[g]->id, g});
    scan(engine, r, 0);
  }
  engine.run();

  for (int r = 0; r < npus; ++r)
    for (std::uint32_t g = offset[r]; g < offset[r + 1]; ++g) {
      if (node_end[g] < 0)
        throw Error(describe(workload.ranks[r], *node_of[g]) +
                    " never runs (deadlock: its dependencies or its collective's messages never "
                    "finish)");
      result.rank_finish[r] = std::max(result.rank_finish[r], node_end[g]);
    }
  for (Time t : result.rank_finish) result.step_time = std::max(result.step_time, t);
  return result;
}

}  // namespace tacos
