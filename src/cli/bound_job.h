#pragma once
// One `tacos bound` run: the flags turned into the library's report_bound
// (tacos/synthesis/report.h), shared by the command line and the Python module.
#include <nlohmann/json.hpp>
#include <string>

#include "common_options.h"
#include "tacos/synthesis/report.h"

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

// The library's report (tacos/synthesis/report.h) and its --json object.
struct BoundOutcome : BoundReport {
  nlohmann::ordered_json json;  // what `tacos bound --json` prints
};

// The flag checks run_bound starts with (same messages as the command line).
void check_bound_flags(const BoundJob& job);

// Validates like the command line (same messages) and computes the bounds on `full`.
BoundOutcome run_bound(const BoundJob& job, const Topology& full);

}  // namespace tacos::cli
