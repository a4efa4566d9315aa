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
//    finished; a send finishes when its message has arrived, a 0 us compute node takes 1 ns;
//  - the analytical congestion-aware network (astra-network-analytical, Link.cpp) cuts each
//    link crossing's busy time and arrival time to whole ns (PortEngine::Options::whole_ns).
//
// Flat state as in the Chakra replay (chakra_simulation.cpp), in StepReplay: every node
// numbered globally (workload nodes first, then each collective node's algorithm instance),
// dependencies in CSR, one message per algorithm send, timed by the port engine
// (simulation/port_engine.h); the replay keeps only its own dependency and issue rules.
#include "tacos/io/workload_step.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <string>
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
// The one event of the replay's own: a node finished (id: global node).
constexpr std::uint32_t kNodeDone = detail::PortEngine::kFirstCallerKind;

// What a workload node occupies while it runs (ASTRA-sim's HardwareResource).
enum class Resource { kGpu, kCpu, kComm };

Resource resource_of(const EtNode& n) {
  if (n.cpu_op) return Resource::kCpu;
  return n.type == EtNodeType::kComp ? Resource::kGpu : Resource::kComm;
}

std::string describe(const EtRank& rank, const EtNode& n) {
  return rank.file + ": node " + std::to_string(n.id) +
         (n.name.empty() ? std::string() : " ('" + n.name + "')");
}

// The flat graph of one step and its run. Global node g: the workload's nodes (rank offsets),
// then each collective node's algorithm instance; dependencies in CSR (parent -> children) with
// a pending count per node; one message per algorithm send.
class StepReplay {
 public:
  StepReplay(const EtTrace& workload, const std::vector<StepCollective>& collectives,
             const std::map<std::uint64_t, int>& collective_of_node, const Topology& topology,
             const Roofline& roofline)
      : workload_(workload),
        collectives_(collectives),
        topology_(topology),
        roofline_(roofline),
        npus_(workload.npus()) {
    number_nodes(collective_of_node);
    link_dependencies();
    match_messages();
  }

  StepPrediction run() {
    result_.rank_finish.assign(npus_, 0);
    result_.compute.assign(npus_, 0);
    result_.messages = static_cast<std::int64_t>(messages_.size());
    node_end_.assign(total_, -1);
    ranks_.assign(npus_, RankState{});
    auto arrived = [this](detail::PortEngine& engine, std::uint32_t mi, Time t) {
      engine.post(t, kNodeDone, messages_[mi].send);
      if (messages_[mi].recv_posted) engine.post(t, kNodeDone, messages_[mi].recv);
    };
    auto event = [this](detail::PortEngine& engine, std::uint32_t, std::uint32_t g, Time t) {
      node_done(engine, g, t);
    };
    detail::LambdaClient client([](auto&&...) {}, arrived, event);
    detail::PortEngine::Options options;
    options.model = LinkModel::kAstra;
    options.clock = workload_.prefix;
    options.serve_after_free = true;  // as the Chakra replay: one instant in posting order
    options.whole_ns = true;
    detail::PortEngine engine(topology_, std::move(options), messages_.size(), client);
    for (std::uint32_t mi = 0; mi < messages_.size(); ++mi)
      engine.set_message(mi, messages_[mi].route, messages_[mi].bytes, messages_[mi].chunk);

    // ASTRA-sim starts every rank with one scan at time 0.
    for (int r = 0; r < npus_; ++r) {
      for (std::uint32_t g = offset_[r]; g < offset_[r + 1]; ++g)
        if (pending_[g] == 0) ranks_[r].ready.insert({node_of_[g]->id, g});
      scan(engine, r, 0);
    }
    engine.run();

    for (int r = 0; r < npus_; ++r)
      for (std::uint32_t g = offset_[r]; g < offset_[r + 1]; ++g) {
        if (node_end_[g] < 0)
          throw Error(describe(workload_.ranks[r], *node_of_[g]) +
                      " never runs (deadlock: its dependencies or its collective's messages "
                      "never finish)");
        result_.rank_finish[r] = std::max(result_.rank_finish[r], node_end_[g]);
      }
    for (Time t : result_.rank_finish) result_.step_time = std::max(result_.step_time, t);
    return result_;
  }

 private:
  // One collective node of one rank, run as its algorithm at the rank's position.
  struct Instance {
    int rank = 0;
    std::uint32_t workload_node = 0;  // global index of the collective node
    int collective = 0;
    int position = 0;
    std::uint32_t begin = 0;  // its algorithm's nodes: global begin .. begin + count
    std::uint32_t count = 0;
    std::uint32_t left = 0;  // of them, not finished yet
  };
  struct Message {
    std::uint32_t send = 0;  // global nodes
    std::uint32_t recv = 0;
    std::span<const LinkId> route;
    Bytes bytes = 0;
    ChunkId chunk = 0;  // the switch queue's tie-break
    bool recv_posted = false;
  };
  struct RankState {
    std::set<std::pair<std::uint64_t, std::uint32_t>> ready;  // (node id, global node)
    bool busy[3] = {false, false, false};                     // by Resource
  };

  // Workload nodes first, then one algorithm instance per collective node, each checked.
  void number_nodes(const std::map<std::uint64_t, int>& collective_of_node) {
    offset_.assign(npus_ + 1, 0);
    for (int r = 0; r < npus_; ++r)
      offset_[r + 1] = offset_[r] + static_cast<std::uint32_t>(workload_.ranks[r].nodes.size());
    std::uint64_t total = offset_[npus_];
    instance_of_coll_.assign(total, kNone);
    for (int r = 0; r < npus_; ++r) {
      const EtRank& rank = workload_.ranks[r];
      for (std::uint32_t i = 0; i < rank.nodes.size(); ++i) {
        const EtNode& n = rank.nodes[i];
        check_workload_node(rank, n);
        if (n.type != EtNodeType::kColl) continue;
        const auto c = collective_of_node.find(n.id);
        if (c == collective_of_node.end() || c->second < 0 ||
            c->second >= static_cast<int>(collectives_.size()))
          throw Error(describe(rank, n) + ": no algorithm is given for this collective node");
        const StepCollective& sc = collectives_[static_cast<std::size_t>(c->second)];
        const auto at = std::lower_bound(sc.members.begin(), sc.members.end(), r);
        if (at == sc.members.end() || *at != r)
          throw Error(describe(rank, n) + ": rank " + std::to_string(r) +
                      " is not in the group of its algorithm");
        Instance inst;
        inst.rank = r;
        inst.workload_node = offset_[r] + i;
        inst.collective = c->second;
        inst.position = static_cast<int>(at - sc.members.begin());
        if (inst.position >= sc.algorithm->npus())
          throw Error(describe(rank, n) + ": its algorithm has no rank " +
                      std::to_string(inst.position));
        inst.begin = static_cast<std::uint32_t>(total);
        inst.count = static_cast<std::uint32_t>(sc.algorithm->ranks[inst.position].nodes.size());
        inst.left = inst.count;
        total += inst.count;
        if (total >= kNone) throw Error(workload_.prefix + ": too many nodes to simulate");
        instance_of_coll_[inst.workload_node] = static_cast<std::uint32_t>(instances_.size());
        instance_at_[{r, n.id}] = static_cast<std::uint32_t>(instances_.size());
        instances_.push_back(inst);
      }
    }
    total_ = static_cast<std::uint32_t>(total);
    rank_of_.resize(total_);
    instance_of_.assign(total_, kNone);
    node_of_.resize(total_);
    for (int r = 0; r < npus_; ++r)
      for (std::uint32_t i = 0; i < workload_.ranks[r].nodes.size(); ++i) {
        rank_of_[offset_[r] + i] = r;
        node_of_[offset_[r] + i] = &workload_.ranks[r].nodes[i];
      }
    for (std::uint32_t k = 0; k < instances_.size(); ++k) {
      const Instance& inst = instances_[k];
      const auto& nodes = algorithm_rank(inst).nodes;
      for (std::uint32_t i = 0; i < inst.count; ++i) {
        rank_of_[inst.begin + i] = inst.rank;
        instance_of_[inst.begin + i] = k;
        node_of_[inst.begin + i] = &nodes[i];
      }
    }
  }

  // What the replay runs: compute, collective and metadata nodes; a GPU compute node needs the
  // roofline's two attributes.
  static void check_workload_node(const EtRank& rank, const EtNode& n) {
    if (n.type == EtNodeType::kMemLoad || n.type == EtNodeType::kMemStore ||
        n.type == EtNodeType::kSend || n.type == EtNodeType::kRecv)
      throw Error(describe(rank, n) + ": a " + to_string(n.type) +
                  " in a workload: the step prediction runs compute and collective nodes only");
    if (n.type == EtNodeType::kComp && !n.cpu_op && (n.num_ops < 0 || n.tensor_size < 0))
      throw Error(describe(rank, n) +
                  ": a GPU compute node without 'num_ops' and 'tensor_size' (ASTRA-sim's "
                  "roofline needs both)");
  }

  const EtRank& algorithm_rank(const Instance& inst) const {
    return collectives_[static_cast<std::size_t>(inst.collective)].algorithm->ranks[inst.position];
  }

  void link_dependencies() {
    pending_.resize(total_);
    for (std::uint32_t g = 0; g < total_; ++g)
      pending_[g] =
          static_cast<std::uint32_t>(node_of_[g]->data_deps.size() + node_of_[g]->ctrl_deps.size());
    // A dependency is an index into its own file: the rank's workload or the instance's
    // algorithm rank.
    children_ = detail::group_by<std::uint32_t, std::uint32_t>(
        total_, total_, [&](std::size_t g, auto&& emit) {
          const std::uint32_t base =
              instance_of_[g] == kNone ? offset_[rank_of_[g]] : instances_[instance_of_[g]].begin;
          for (const auto* deps : {&node_of_[g]->data_deps, &node_of_[g]->ctrl_deps})
            for (std::uint32_t p : *deps) emit(base + p, static_cast<std::uint32_t>(g));
        });
  }

  // An algorithm send of rank members[p] to position q is received by the collective node of
  // the same id on rank members[q] (the bundle gives an occurrence the same id on every rank).
  void match_messages() {
    const SwitchRoutes& routes = topology_.switch_routes();
    message_of_.assign(total_, kNone);
    for (const Instance& inst : instances_) {
      const StepCollective& sc = collectives_[static_cast<std::size_t>(inst.collective)];
      const EtRank& algo = algorithm_rank(inst);
      const EtNode& coll = *node_of_[inst.workload_node];
      for (std::uint32_t i = 0; i < inst.count; ++i) {
        const EtNode& n = algo.nodes[i];
        if (n.type != EtNodeType::kSend) continue;
        const int peer = sc.members[static_cast<std::size_t>(n.peer)];
        const auto other = instance_at_.find({peer, coll.id});
        if (other == instance_at_.end() || instances_[other->second].collective != inst.collective)
          throw Error(
              describe(workload_.ranks[inst.rank], coll) + ": rank " + std::to_string(peer) +
              " has no collective node of this id and algorithm to receive " + describe(algo, n));
        if (n.comm_size <= 0 || n.match < 0)
          throw Error(describe(algo, n) + ": a send without comm_size or a matching receive");
        Message m;
        m.route = routes.route(inst.rank, peer);
        if (m.route.empty())
          throw Error(describe(algo, n) + ": rank " + std::to_string(inst.rank) +
                      " has no path to rank " + std::to_string(peer) +
                      " over a link or through switches");
        m.send = inst.begin + i;
        m.recv = instances_[other->second].begin + static_cast<std::uint32_t>(n.match);
        m.bytes = n.comm_size;
        m.chunk = n.chunks.empty() ? 0 : n.chunks.front();
        message_of_[m.send] = message_of_[m.recv] = static_cast<std::uint32_t>(messages_.size());
        messages_.push_back(m);
      }
    }
  }

  template <class Ready>
  void release_children(std::uint32_t g, Ready&& ready) {
    for (std::uint32_t k = children_.offsets[g]; k < children_.offsets[g + 1]; ++k)
      if (--pending_[children_.values[k]] == 0) ready(children_.values[k]);
  }

  // A replayed node of duration_micros (ASTRA-sim runs a 0 us one for 1 ns).
  static Time replay_time(const EtNode& n) {
    return n.duration_micros == 0 ? kPicosPerNano
                                  : static_cast<Time>(n.duration_micros) * kPicosPerMicro;
  }

  // An algorithm node of a running collective, issued as soon as it is ready.
  void issue_algorithm_node(detail::PortEngine& engine, std::uint32_t g, Time t) {
    const EtNode& n = *node_of_[g];
    if (n.type == EtNodeType::kSend) {
      engine.send(message_of_[g], t);
    } else if (n.type == EtNodeType::kRecv) {
      const std::uint32_t mi = message_of_[g];
      if (engine.end(mi) >= 0)
        engine.post(t, kNodeDone, g);
      else
        messages_[mi].recv_posted = true;
    } else if (n.type == EtNodeType::kComp) {
      engine.post(t + replay_time(n), kNodeDone, g);
    } else {
      engine.post(t, kNodeDone, g);
    }
  }

  // ASTRA-sim's issue_dep_free_nodes: the rank's ready nodes in id order, each issued when its
  // resource is free. A node with no work finishes here; its children wait for the next scan.
  void scan(detail::PortEngine& engine, int r, Time t) {
    RankState& state = ranks_[r];
    const std::vector<std::pair<std::uint64_t, std::uint32_t>> ready(state.ready.begin(),
                                                                     state.ready.end());
    for (const auto& entry : ready) {
      const std::uint32_t g = entry.second;
      const EtNode& n = *node_of_[g];
      bool& busy = state.busy[static_cast<int>(resource_of(n))];
      if (busy) continue;
      state.ready.erase(entry);
      busy = true;
      if (n.type == EtNodeType::kColl) {
        const Instance& inst = instances_[instance_of_coll_[g]];
        bool started = false;
        for (std::uint32_t i = 0; i < inst.count; ++i)
          if (pending_[inst.begin + i] == 0) {
            issue_algorithm_node(engine, inst.begin + i, t);
            started = true;
          }
        if (!started) workload_done(engine, g, t, false);  // an empty algorithm rank
      } else if (n.type == EtNodeType::kComp && n.cpu_op) {
        engine.post(t + replay_time(n), kNodeDone, g);
      } else if (n.type == EtNodeType::kComp && n.tensor_size > 0) {
        const Time duration = roofline_time(r, n);
        result_.compute[r] += duration;
        engine.post(t + duration, kNodeDone, g);
      } else {
        workload_done(engine, g, t, false);  // no work (metadata, tensor_size 0)
      }
    }
  }

  Time roofline_time(int r, const EtNode& n) const {
    const std::int64_t ns = roofline_.compute_ns(n.num_ops, n.tensor_size);
    if (ns < 0 || ns > kMaxStepTime / kPicosPerNano)
      throw Error(describe(workload_.ranks[r], n) + ": its roofline time (num_ops " +
                  std::to_string(n.num_ops) + ", tensor_size " + std::to_string(n.tensor_size) +
                  ") is undefined or more than the " +
                  std::to_string(kMaxStepTime / kPicosPerMicro) +
                  " us (2^50 ps) one node may take");
    return ns * kPicosPerNano;
  }

  // A workload node finished: its resource is free and its children ready; the rank scans
  // again unless the node finished inside a scan.
  void workload_done(detail::PortEngine& engine, std::uint32_t g, Time t, bool rescan) {
    const int r = rank_of_[g];
    node_end_[g] = t;
    ranks_[r].busy[static_cast<int>(resource_of(*node_of_[g]))] = false;
    release_children(g, [&](std::uint32_t c) { ranks_[r].ready.insert({node_of_[c]->id, c}); });
    if (rescan) scan(engine, r, t);
  }

  // A node's finish event. An algorithm node issues its ready children at once; the last one of
  // an instance ends its collective node in the same instant.
  void node_done(detail::PortEngine& engine, std::uint32_t g, Time t) {
    node_end_[g] = t;
    const std::uint32_t k = instance_of_[g];
    if (k == kNone) {
      workload_done(engine, g, t, true);
      return;
    }
    release_children(g, [&](std::uint32_t c) { issue_algorithm_node(engine, c, t); });
    if (--instances_[k].left == 0) workload_done(engine, instances_[k].workload_node, t, true);
  }

  const EtTrace& workload_;
  const std::vector<StepCollective>& collectives_;
  const Topology& topology_;
  const Roofline& roofline_;
  const int npus_;

  std::vector<std::uint32_t> offset_;  // per rank: its workload nodes' global begin
  std::uint32_t total_ = 0;
  std::vector<Instance> instances_;
  std::map<std::pair<int, std::uint64_t>, std::uint32_t> instance_at_;  // (rank, node id)
  std::vector<std::uint32_t> instance_of_coll_;  // per workload node: its instance or kNone
  std::vector<int> rank_of_;                     // per global node
  std::vector<std::uint32_t> instance_of_;       // per global node: kNone for workload nodes
  std::vector<const EtNode*> node_of_;           // per global node
  std::vector<std::uint32_t> pending_;
  detail::Groups<std::uint32_t, std::uint32_t> children_;
  std::vector<Message> messages_;
  std::vector<std::uint32_t> message_of_;  // per global node: its message or kNone

  StepPrediction result_;
  std::vector<Time> node_end_;
  std::vector<RankState> ranks_;
};

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
  if (topology.npus() != workload.npus())
    throw Error(workload.prefix + ": " + std::to_string(workload.npus()) +
                " ranks but the topology has " + std::to_string(topology.npus()) + " NPUs");
  return StepReplay(workload, collectives, collective_of_node, topology, roofline).run();
}

}  // namespace tacos
