#pragma once
// One comparison, decided in the library: every requested algorithm run at the same settings,
// each timed by the same simulator under the same link model, against the same bounds. The
// command line's `tacos compare`, `tacos.compare` in Python and the sweep all call compare().
#include <optional>
#include <string>
#include <vector>

#include "tacos/bounds/lower_bound.h"
#include "tacos/synthesis/report.h"
#include "tacos/synthesis/request.h"
#include "tacos/topology/topology.h"

namespace tacos {

struct CompareRequest {
  // The collective and how to run it; `algorithm` is ignored (see `algorithms`).
  SynthesisRequest settings;
  // Empty: algorithms_for(network), every registered algorithm the topology can run.
  std::vector<std::string> algorithms;
};

struct ComparisonRow {
  // As synthesize() returns it, with result.collective_time re-timed by the simulator under
  // settings.options.link_model. skipped_reason set: the algorithm does not apply.
  SynthesisRun run;
  Report report;  // empty when skipped
};

struct Comparison {
  Collective collective;            // at the first K tried
  std::optional<LowerBound> bound;  // nullopt beyond kBoundNpuLimit NPUs
  std::vector<ComparisonRow> rows;  // in the order of the request's algorithms
};

// `full`: the topology with its switch devices (the bounds are computed on it); `network`: what
// the algorithms run on (the same, or its switches unwound). Baselines run first so that the
// `tacos` row's portfolio takes their runs instead of building them twice. Throws
// UnknownAlgorithm for a name not in the registry (before anything runs), Error as synthesize().
Comparison compare(const Topology& full, const Topology& network, const CompareRequest& request);

}  // namespace tacos
