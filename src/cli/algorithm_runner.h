#pragma once
// Runs one named algorithm (tacos or a baseline) and verifies what it produced.
#include <optional>
#include <string>
#include <vector>

#include "tacos/synthesis/synthesizer.h"

namespace tacos::cli {

// "tacos", "ring", "direct", "rhd", "dbt", "hierarchical".
const std::vector<std::string>& algorithm_names();

struct AlgorithmRun {
  std::string name;
  std::optional<std::string> skipped_reason;  // set when the algorithm does not apply
  SynthesisResult result;
  std::optional<bool> verified;  // null when no transfers were kept (--time-only)
};

// Throws Error for an unknown name, and when the result fails its own verification (a bug).
AlgorithmRun run_algorithm(const std::string& name, const Topology& network,
                           const Collective& collective, const SynthesisOptions& options,
                           const std::string& topology_spec);

}  // namespace tacos::cli
