#pragma once
// One `tacos compare` run as functions: the command line and the Python module both call them,
// so `tacos.compare(...)` returns exactly the rows `tacos compare --json` prints.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "algorithm_runner.h"
#include "collective_options.h"
#include "common_options.h"
#include "report.h"
#include "tacos/bounds/lower_bound.h"

namespace tacos::cli {

struct CompareJob {
  TopologyOptions topology;
  SynthesisFlags flags;
  CollectiveOptions collective;
  std::string algorithms;  // empty: algorithms_for(the topology), every one it can run
  std::string plot;        // validated here (FILE.svg), drawn by the command
};

// Everything the rows share, validated up front.
struct ComparePlan {
  Topology network;
  Collective collective;
  std::vector<std::string> names;
  SynthesisOptions options;
  std::optional<LowerBound> bound;
};

struct CompareRow {
  AlgorithmRun run;  // collective_time re-timed by the simulator; unset when skipped
  Report report;
  nlohmann::ordered_json json;  // one element of --json's "results"
};

ComparePlan plan_compare(const CompareJob& job, const Topology& full);
// Runs one algorithm and times it with the same simulator and link model as every other row.
// The tacos row runs the portfolio (algorithm_runner.h) unless --portfolio off, taking the
// baseline runs in `known` instead of building them again.
CompareRow compare_row(const CompareJob& job, const ComparePlan& plan, const std::string& name,
                       const KnownRuns* known = nullptr);
// Every row of plan.names, in that order. The baseline rows run first, so the tacos row's
// portfolio reuses them (same options and K, or the same K search) rather than building them
// twice.
std::vector<CompareRow> compare_rows(const CompareJob& job, const ComparePlan& plan);
// The object `tacos compare --json` prints.
nlohmann::ordered_json compare_json(const Topology& full, const ComparePlan& plan,
                                    const nlohmann::ordered_json& results);

}  // namespace tacos::cli
