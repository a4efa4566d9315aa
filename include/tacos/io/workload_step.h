#pragma once
// tacos's own prediction of a whole training step the way ASTRA-sim (518bd51, analytical
// congestion-aware backend) runs a `tacos workload` bundle (docs/workload.md, "The step tacos
// predicts"): the workload's compute nodes timed by ASTRA-sim's roofline, each collective node
// replaced by the algorithm files the bundle gives it, every message timed by the one port
// engine under the astra link model with ASTRA-sim's whole-ns link times, all ranks at once so
// that collectives of different groups share links and switch ports as they do in ASTRA-sim.
#include <cstdint>
#include <map>
#include <vector>

#include "tacos/common/types.h"
#include "tacos/io/chakra.h"
#include "tacos/topology/topology.h"

namespace tacos {

// ASTRA-sim's roofline (system config keys peak-perf, TFLOPS, and local-mem-bw, GB/s of 10^9
// bytes per second).
struct Roofline {
  double peak_tflops = 900;
  double local_mem_gbps = 1600;
  // ASTRA-sim's duration of a GPU compute node, in whole ns: its operational intensity
  // num_ops / tensor_size gives the attainable rate min(local-mem-bw x intensity, peak-perf),
  // and num_ops at that rate is cut to whole ns. The same double arithmetic, so the same ns.
  std::int64_t compute_ns(std::int64_t num_ops, std::int64_t tensor_size) const;
};

// One distinct collective: its algorithm files (ranks = positions 0..k-1 in the group) and the
// group's sorted members (position p is rank members[p]).
struct StepCollective {
  const EtTrace* algorithm = nullptr;
  std::vector<NpuId> members;
};

struct StepPrediction {
  Time step_time = 0;             // the last rank's finish
  std::vector<Time> rank_finish;  // per rank: when its last workload node finished
  std::vector<Time> compute;      // per rank: its GPU compute nodes' time (ASTRA-sim's "compute")
  std::int64_t messages = 0;      // sends of every collective node's algorithm
};

// Runs `workload` (the bundle's workload.RANK.et, read with read_chakra) on `topology` (its
// NPUs are the ranks): a rank issues its dependency-free nodes in id order whenever one of its
// nodes finishes, at most one GPU compute node, one CPU node and one collective at a time (as
// ASTRA-sim's workload layer does); a GPU compute node takes Roofline::compute_ns (tensor_size
// 0: it finishes at once and its children wait for the rank's next event, as in ASTRA-sim), a
// CPU one its duration_micros (0: 1 ns); a collective node `id` runs
// collectives[collective_of_node[id]]'s algorithm at the rank's position, every ready node at
// once, its messages matched with the same node id on the peers, and finishes when all its
// algorithm's nodes have. Throws Error naming the node for a collective node without an
// algorithm or on a rank outside its group, a GPU compute node without num_ops / tensor_size,
// memory or point-to-point workload nodes, a message with no route, and a deadlock.
StepPrediction simulate_workload_step(const EtTrace& workload,
                                      const std::vector<StepCollective>& collectives,
                                      const std::map<std::uint64_t, int>& collective_of_node,
                                      const Topology& topology, const Roofline& roofline);

}  // namespace tacos
