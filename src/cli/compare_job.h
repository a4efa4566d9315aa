#pragma once
// One `tacos compare` run: the flags turned into the library's CompareRequest
// (tacos/synthesis/compare.h), and its rows as `--json` prints them. The command line and the
// Python module both call run_compare, so `tacos.compare(...)` returns exactly what
// `tacos compare --json` prints.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collective_options.h"
#include "common_options.h"
#include "report.h"
#include "tacos/synthesis/compare.h"

namespace tacos::cli {

struct CompareJob {
  TopologyOptions topology;
  SynthesisFlags flags;
  CollectiveOptions collective;
  std::string algorithms;  // empty: algorithms_for(the topology), every one it can run
  std::string plot;        // validated here (FILE.svg), drawn by the command
};

struct CompareOutcome {
  Topology network;  // what the algorithms ran on
  LinkModel link_model = LinkModel::kTacos;
  Comparison comparison;
  nlohmann::ordered_json json;  // the object `tacos compare --json` prints
};

// Validates every flag (same messages as the command line) before any algorithm runs, then runs
// the library's compare() on `full` and builds the --json object.
CompareOutcome run_compare(const CompareJob& job, const Topology& full);

}  // namespace tacos::cli
