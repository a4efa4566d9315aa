#pragma once
// One `tacos workload` run as a function (the command line calls it; Python can too): read a
// training-step workload, synthesize each distinct collective on the NPUs of its group, and
// write the ASTRA-sim bundle that runs the step with those algorithms (docs/workload.md).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common_options.h"
#include "tacos/io/chakra_workload.h"
#include "tacos/io/workload_step.h"
#include "tacos/topology/topology.h"

namespace tacos::cli {

struct WorkloadJob {
  std::string et_prefix;    // PREFIX of the workload's PREFIX.RANK.et files
  std::string comm_groups;  // the process-group JSON; empty: PREFIX.json
  TopologyOptions topology;
  std::string algorithm = "tacos";
  std::string chunks_per_npu = "16";  // K of every collective; "auto" searches (see docs)
  std::uint64_t seed = 1;
  std::string out_dir;  // empty: the summary only
  // ASTRA-sim's roofline for the compute nodes (system config keys peak-perf, local-mem-bw).
  double peak_tflops = 900;
  double local_mem_gbps = 1600;
};

// One distinct collective: what was synthesized for it, the best baseline and the bound, all
// timed by tacos's simulator under ASTRA-sim's link model on the NPUs of its group.
struct WorkloadRow {
  WorkloadCollective collective;
  int group_id = 0;    // its process group in the bundle
  int per_rank = 0;    // how many times each member runs it in one step
  std::string winner;  // the schedule kept ("tacos", or tacos/BASELINE when one won)
  int chunks_per_npu = 1;
  Time time = 0;              // the algorithm's time
  Time astra_time = 0;        // what its Chakra files take in ASTRA-sim (their replay)
  std::string best_baseline;  // "" when no baseline applies
  Time baseline_time = 0;
  double bound_us = 0;  // lower bound
};

struct WorkloadOutcome {
  Topology full;
  ChakraWorkload workload;
  std::vector<WorkloadRow> rows;
  StepPrediction prediction;    // the whole step, as the bundle runs in ASTRA-sim
  nlohmann::ordered_json json;  // what `tacos workload --json` prints (also DIR/workload.json)
};

WorkloadOutcome run_workload(const WorkloadJob& job);

}  // namespace tacos::cli
