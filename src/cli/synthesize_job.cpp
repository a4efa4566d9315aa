#include "synthesize_job.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "algorithm_outputs.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos::cli {

SynthesizeOutcome run_synthesize(const SynthesizeJob& job, const Topology& full) {
  SynthesizeOutcome outcome;
  outcome.network = job.topology.network(full);
  const Topology& network = outcome.network;
  job.collective.make(network, job.flags);  // the collective's flags are checked first
  require_algorithm("--algorithm", job.algorithm);
  if (job.time_only && !job.out_dir.empty())
    throw Error("--out cannot be combined with --time-only (no transfers are kept)");
  if (job.formats_given && job.out_dir.empty())
    throw Error("--format " + job.formats + " needs --out DIR (where to write the files)");
  if (!job.out_dir.empty() && std::filesystem::exists(job.out_dir) &&
      !std::filesystem::is_directory(job.out_dir))
    throw Error("--out: " + job.out_dir + " exists and is not a directory");
  if (!job.msccl_flag.empty()) {
    const auto listed = split_list(job.formats);
    if (job.out_dir.empty() || std::find(listed.begin(), listed.end(), "msccl") == listed.end())
      throw Error(job.msccl_flag +
                  " needs --out DIR --format msccl (it shapes the MSCCL file only)");
  }

  job.flags.portfolio_on();  // a bad --portfolio fails before synthesis
  outcome.options = job.collective.synthesis_options(job.flags, job.topology);
  outcome.options.keep_transfers = !job.time_only;
  if (job.progress) outcome.options.progress = job.progress;
  SynthesisRequest request =
      job.collective.request(network, job.flags, job.topology, job.algorithm);
  request.options = outcome.options;
  outcome.run = synthesize(network, request);
  if (job.progress_done) job.progress_done();
  const AlgorithmRun& run = outcome.run;
  if (run.skipped_reason) throw Error("--algorithm " + job.algorithm + ": " + *run.skipped_reason);

  const Collective& coll = run.result.algorithm.collective();
  if (!job.out_dir.empty())
    write_algorithm_outputs(run.result.algorithm, full, job.out_dir, job.formats, job.msccl,
                            &network);
  outcome.chakra_replay = chakra_replay(run.result.algorithm, network, outcome.options.link_model,
                                        job.out_dir, job.formats);
  outcome.msccl_replay = msccl_replay(run.result.algorithm, network, outcome.options.link_model,
                                      job.out_dir, job.formats);
  outcome.astra = astra_sim_expectation(run.result.algorithm, full, job.out_dir, job.formats);
  const std::optional<LowerBound> bound = bound_if_affordable(full, network, coll);
  outcome.report = make_report(run, coll, bound);
  return outcome;
}

nlohmann::ordered_json synthesize_json(const SynthesizeJob& job, const Topology& full,
                                       const SynthesizeOutcome& outcome) {
  const AlgorithmRun& run = outcome.run;
  const Collective& coll = run.result.algorithm.collective();
  KeyedJson out(synthesize_keys());
  out["topology"] = full.name();
  out["npus"] = outcome.network.npus();
  out["links"] = outcome.network.num_links();
  out["collective"] = to_string(coll.kind());
  out["npus_in_collective"] = coll.num_members();
  if (has_root(coll.kind())) out["root"] = coll.root();
  if (coll.kind() == CollectiveKind::kAllReduce && job.algorithm == "tacos")
    out["all_reduce_mode"] = job.collective.all_reduce_mode;
  out["size_bytes"] = coll.size();
  out["chunks_per_npu"] = coll.chunks_per_npu();
  out["chunk_bytes"] = coll.chunk_bytes();
  if (job.flags.auto_chunks())
    out["auto_stopped"] = run.auto_stopped.empty() ? nlohmann::ordered_json()
                                                   : nlohmann::ordered_json(run.auto_stopped);
  out["algorithm"] = job.algorithm;
  const bool tacos = job.algorithm == "tacos";
  if (tacos) {
    out["portfolio_winner"] = run.portfolio_winner.empty()
                                  ? nlohmann::ordered_json()
                                  : nlohmann::ordered_json(run.portfolio_winner);
    out["portfolio_skipped"] = run.portfolio_skipped.empty()
                                   ? nlohmann::ordered_json()
                                   : nlohmann::ordered_json(run.portfolio_skipped);
  }
  out["link_model"] = to_string(outcome.options.link_model);
  out["seed"] = run.result.seed;
  out["trials"] = job.collective.trials;
  out["collective_time_us"] = to_micros(run.result.collective_time);
  if (tacos)
    out["greedy_time_us"] =
        run.greedy_time ? nlohmann::ordered_json(to_micros(*run.greedy_time)) : nullptr;
  put_report(out, outcome.report);
  out["transfers"] = run.result.transfers;
  out["wasted_transfers"] = run.result.wasted_transfers;
  out["verified"] = run.verified ? nlohmann::ordered_json(*run.verified) : nullptr;
  out["synthesis_seconds"] = run.result.seconds;
  out["peak_memory_mib"] = peak_memory_mib();
  if (!job.out_dir.empty()) out["out"] = job.out_dir;
  if (!outcome.astra.is_null()) out["astra_sim"] = outcome.astra;
  if (!outcome.chakra_replay.is_null()) out["chakra_replay"] = outcome.chakra_replay;
  if (!outcome.msccl_replay.is_null()) out["msccl_replay"] = outcome.msccl_replay;
  return out.take();
}

}  // namespace tacos::cli
