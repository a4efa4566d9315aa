#pragma once
// Runs one named algorithm (tacos or a baseline) and verifies what it produced.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tacos/synthesis/synthesizer.h"

namespace tacos::cli {

// "tacos", "ring", "direct", "rhd", "dbt", "hierarchical", "biring".
const std::vector<std::string>& algorithm_names();

struct AlgorithmRun {
  std::string name;
  std::optional<std::string> skipped_reason;  // set when the algorithm does not apply
  SynthesisResult result;
  std::optional<bool> verified;  // null when no transfers were kept (--time-only)
  // A `tacos` run with the portfolio (see Portfolio below): the candidate whose schedule was
  // kept, "tacos" (the greedy) or a baseline's name; empty when no portfolio ran.
  std::string portfolio_winner;
  // A `tacos` run: why the portfolio did not run ("--portfolio off", "--time-only", over the
  // budget); empty when it ran, and for baselines.
  std::string portfolio_skipped;
  // A `tacos` run: the TACOS greedy's own time (what --portfolio off reports); equal to
  // result.collective_time unless a baseline won.
  Time greedy_time = 0;
};

// The portfolio of `--algorithm tacos` (on unless --portfolio off): the TACOS greedy and every
// applicable baseline of the same collective are built, each is timed by the same simulator
// under the same link model (a baseline's time is its simulated time; the greedy's is checked
// against verify), and the fastest schedule is kept; ties go to the greedy, then to the earlier
// baseline in algorithm_names() order. With a fixed K every candidate runs at that K; with
// --chunks-per-npu auto every candidate searches its own K exactly as `--algorithm NAME
// --chunks-per-npu auto` (and tacos compare's row) does. A baseline's schedule that wins keeps
// its transfers; its Algorithm::synthesizer becomes "tacos/NAME".
//
// Skipped (the greedy alone, portfolio_skipped says why) with --time-only (baselines need
// transfer lists) and when the baselines would be large: more than kPortfolioBudget estimated
// transfers, N x N x K x H for N NPUs in the collective (N x K x H for Broadcast and Reduce;
// K = the first K tried, 1 under auto, where each search then keeps its own budget), H the mean
// number of NPU-to-NPU hops between members (switches relay for free: the direct baseline
// routes every pair's messages hop by hop). So beyond 512 NPUs it never runs (dgx-h100:128,
// torus2d:128x128), nor on a torus2d:16x16 (H = 8).
inline constexpr double kPortfolioBudget = 262144;

struct Portfolio {
  bool enabled = false;
  // Baseline runs already made with the same options and K (or K search), by name (tacos
  // compare's rows): taken instead of building them again. May be null.
  const std::map<std::string, const AlgorithmRun*>* known = nullptr;
};

// Why the portfolio would not run for this collective (K = the first K tried) on `network`,
// or nullopt.
std::optional<std::string> portfolio_skip_reason(const Topology& network,
                                                 const Collective& collective,
                                                 const SynthesisOptions& options);

// Throws Error for an unknown name, and when the result fails its own verification (a bug).
AlgorithmRun run_algorithm(const std::string& name, const Topology& network,
                           const Collective& collective, const SynthesisOptions& options,
                           const std::string& topology_spec);

// With `auto_chunks`, tries K = 1, 2, 4, ... (collective_for(K)) and keeps the fastest run (ties:
// the smaller K); stops after two doublings in a row without a gain of 0.5%, when a chunk would
// be smaller than a byte, or when the next K would pass a work budget of about 2M transfers.
// Otherwise runs collective_for(fixed_k). The chosen K is the result's collective's. With
// name "tacos" and portfolio.enabled, runs the portfolio (above) around the greedy's search.
AlgorithmRun run_algorithm_searching_chunks(const std::string& name, const Topology& network,
                                            const std::function<Collective(int)>& collective_for,
                                            bool auto_chunks, int fixed_k,
                                            const SynthesisOptions& options,
                                            const std::string& topology_spec,
                                            const Portfolio& portfolio = {});

}  // namespace tacos::cli
