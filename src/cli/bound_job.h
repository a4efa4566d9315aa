#pragma once
// One `tacos bound` run as a function, shared by the command line and the Python module.
#include <nlohmann/json.hpp>
#include <string>

#include "common_options.h"
#include "tacos/bounds/lower_bound.h"

namespace tacos::cli {

struct BoundJob {
  TopologyOptions topology;
  SynthesisFlags flags;
  std::string collective = "all-gather";
  NpuId root = 0;
  bool root_given = false;
  std::string npus;
  std::string size = "64MiB";
};

struct BoundOutcome {
  Collective collective;
  LowerBound bound;
  // nccl-tests' units (report.h): GB/s of 1e9 B/s; 0 when the bandwidth bound is 0.
  double algbw_at_bound_gbps = 0;  // size / bandwidth bound
  double busbw_at_bound_gbps = 0;  // algbw x the collective's bus factor
  nlohmann::ordered_json json;     // what `tacos bound --json` prints
};

// The flag checks run_bound starts with (same messages as the command line).
void check_bound_flags(const BoundJob& job);

// Validates like the command line (same messages) and computes the bounds on `full`.
BoundOutcome run_bound(const BoundJob& job, const Topology& full);

}  // namespace tacos::cli
