#include "algorithm_runner.h"

#include <chrono>

#include "tacos/algorithm/verify.h"
#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"

namespace tacos::cli {

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> names{"tacos", "ring", "direct",
                                              "rhd",   "dbt",  "hierarchical"};
  return names;
}

AlgorithmRun run_algorithm(const std::string& name, const Topology& network,
                           const Collective& collective, const SynthesisOptions& options,
                           const std::string& topology_spec) {
  AlgorithmRun run;
  run.name = name;
  if (name == "tacos") {
    run.result = synthesize_tacos(network, collective, options);
  } else {
    const Baseline baseline = parse_baseline(name);
    if (!options.keep_transfers) throw Error("--time-only applies to --algorithm tacos only");
    run.skipped_reason = baseline_inapplicable(baseline, network, collective, topology_spec);
    if (run.skipped_reason) return run;
    const auto started = std::chrono::steady_clock::now();
    run.result.algorithm =
        synthesize_baseline(baseline, network, collective, options.link_model, topology_spec);
    run.result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    run.result.collective_time = run.result.algorithm.collective_time;
    run.result.transfers = static_cast<std::int64_t>(run.result.algorithm.transfers().size());
    run.result.seed = options.seed;
  }
  if (options.keep_transfers) {
    const VerifyResult check = verify_algorithm(run.result.algorithm, network, options.link_model);
    if (!check.ok || check.collective_time != run.result.collective_time)
      throw Error(
          name + ": internal check failed, the algorithm does not verify: " +
          (check.ok ? std::string("replayed time differs from the reported time") : check.error));
    run.verified = true;
  }
  return run;
}

AlgorithmRun run_algorithm_searching_chunks(const std::string& name, const Topology& network,
                                            const std::function<Collective(int)>& collective_for,
                                            bool auto_chunks, int fixed_k,
                                            const SynthesisOptions& options,
                                            const std::string& topology_spec) {
  if (!auto_chunks)
    return run_algorithm(name, network, collective_for(fixed_k), options, topology_spec);
  constexpr double kTransferBudget = 2e6;
  // A doubling must win at least this much to count as a gain.
  constexpr double kMinGain = 0.005;
  std::optional<AlgorithmRun> best;
  double seconds = 0;
  int without_gain = 0;
  const Collective probe = collective_for(1);
  const bool rooted =
      probe.kind() == CollectiveKind::kBroadcast || probe.kind() == CollectiveKind::kReduce;
  for (int k = 1; k <= (1 << 20); k *= 2) {
    const double pieces = rooted ? k : static_cast<double>(probe.num_members()) * k;
    if (k > 1 && static_cast<double>(probe.size()) / pieces < 1) break;
    // Transfers grow with members x chunks (every member needs nearly every chunk).
    const double estimate = static_cast<double>(probe.num_members()) * pieces;
    if (k > 1 && estimate > kTransferBudget) break;
    AlgorithmRun run = run_algorithm(name, network, collective_for(k), options, topology_spec);
    seconds += run.result.seconds;
    if (run.skipped_reason) return run;
    const bool gain =
        !best || static_cast<double>(run.result.collective_time) <
                     (1 - kMinGain) * static_cast<double>(best->result.collective_time);
    if (!best || run.result.collective_time < best->result.collective_time) best = std::move(run);
    if (gain)
      without_gain = 0;
    else if (++without_gain == 2)
      break;
  }
  best->result.seconds = seconds;
  return std::move(*best);
}

}  // namespace tacos::cli
