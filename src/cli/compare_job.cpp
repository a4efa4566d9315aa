#include "compare_job.h"

#include <algorithm>

#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"

namespace tacos::cli {

ComparePlan plan_compare(const CompareJob& job, const Topology& full) {
  ComparePlan plan;
  plan.network = job.topology.network(full);
  plan.collective = job.collective.make(plan.network, job.flags);
  plan.names = job.algorithms.empty() ? algorithms_for(plan.network) : split_list(job.algorithms);
  for (const std::string& name : plan.names) require_algorithm("--algorithms", name);
  const std::string& plot = job.plot;
  if (!plot.empty() && !(plot.size() > 4 && plot.substr(plot.size() - 4) == ".svg"))
    throw Error("--plot: expected a file name ending in .svg, got '" + plot + "'");
  job.flags.portfolio_on();  // a bad --portfolio fails before any algorithm runs
  plan.options = job.collective.synthesis_options(job.flags, job.topology);
  plan.bound = bound_if_affordable(full, plan.network, plan.collective);
  return plan;
}

CompareRow compare_row(const CompareJob& job, const ComparePlan& plan, const std::string& name,
                       const KnownRuns* known) {
  CompareRow row;
  const Topology& network = plan.network;
  SynthesisRequest request = job.collective.request(network, job.flags, job.topology, name);
  request.options = plan.options;
  row.run = synthesize(network, request, known);
  AlgorithmRun& run = row.run;
  KeyedJson json(compare_row_keys());
  json["algorithm"] = name;
  const auto portfolio_json = [&] {
    const bool ran = name == "tacos" && !run.portfolio_winner.empty();
    json["portfolio_winner"] = ran ? nlohmann::ordered_json(run.portfolio_winner) : nullptr;
    json["greedy_time_us"] = name == "tacos" && !run.skipped_reason
                                 ? nlohmann::ordered_json(to_micros(run.greedy_time))
                                 : nullptr;
  };
  if (run.skipped_reason) {
    json["chunks_per_npu"] = nullptr;
    json["collective_time_us"] = nullptr;
    json["algbw_gbps"] = nullptr;
    json["busbw_gbps"] = nullptr;
    json["lower_bound_us"] =
        plan.bound ? nlohmann::ordered_json(plan.bound->lower_bound_us) : nullptr;
    json["bound_ratio"] = nullptr;
    json["store_and_forward_bound_us"] = nullptr;
    json["store_and_forward_ratio"] = nullptr;
    json["verified"] = nullptr;
    json["synthesis_seconds"] = nullptr;
    json["skipped_reason"] = *run.skipped_reason;
    portfolio_json();
    row.json = json.take();
    return row;
  }
  // Every algorithm is timed by the same simulator under the same link model.
  run.result.collective_time =
      simulate(run.result.algorithm, network, plan.options.link_model).collective_time;
  row.report = make_report(run, run.result.algorithm.collective(), plan.bound);
  json["chunks_per_npu"] = run.result.algorithm.collective().chunks_per_npu();
  json["collective_time_us"] = to_micros(run.result.collective_time);
  put_report(json, row.report);
  json["verified"] = run.verified ? nlohmann::ordered_json(*run.verified) : nullptr;
  json["synthesis_seconds"] = run.result.seconds;
  json["skipped_reason"] = nullptr;
  portfolio_json();
  row.json = json.take();
  return row;
}

std::vector<CompareRow> compare_rows(const CompareJob& job, const ComparePlan& plan) {
  std::vector<std::optional<CompareRow>> rows(plan.names.size());
  KnownRuns known;
  for (std::size_t i = 0; i < plan.names.size(); ++i) {
    if (plan.names[i] == "tacos") continue;
    rows[i] = compare_row(job, plan, plan.names[i]);
    known.emplace(plan.names[i], &rows[i]->run);
  }
  for (std::size_t i = 0; i < plan.names.size(); ++i)
    if (plan.names[i] == "tacos") rows[i] = compare_row(job, plan, "tacos", &known);
  std::vector<CompareRow> out;
  out.reserve(rows.size());
  for (auto& row : rows) out.push_back(std::move(*row));
  return out;
}

nlohmann::ordered_json compare_json(const Topology& full, const ComparePlan& plan,
                                    const nlohmann::ordered_json& results) {
  nlohmann::ordered_json out;
  out["topology"] = full.name();
  out["collective"] = to_string(plan.collective.kind());
  out["size_bytes"] = plan.collective.size();
  out["link_model"] = to_string(plan.options.link_model);
  out["results"] = results;
  return out;
}

}  // namespace tacos::cli
