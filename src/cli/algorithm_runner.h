#pragma once
// Runs one named algorithm (tacos or a baseline) and verifies what it produced.
#include <functional>
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

// With `auto_chunks`, tries K = 1, 2, 4, ... (collective_for(K)) and keeps the fastest run (ties:
// the smaller K); stops after two doublings in a row without a gain of 0.5%, when a chunk would
// be smaller than a byte, or when the next K would pass a work budget of about 2M transfers.
// Otherwise runs collective_for(fixed_k). The chosen K is the result's collective's.
AlgorithmRun run_algorithm_searching_chunks(const std::string& name, const Topology& network,
                                            const std::function<Collective(int)>& collective_for,
                                            bool auto_chunks, int fixed_k,
                                            const SynthesisOptions& options,
                                            const std::string& topology_spec);

}  // namespace tacos::cli
