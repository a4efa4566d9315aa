#include "compare_job.h"

#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos::cli {
namespace {

nlohmann::ordered_json row_json(const ComparisonRow& row, const std::optional<LowerBound>& bound) {
  const SynthesisRun& run = row.run;
  const std::string& name = run.name;
  KeyedJson json(compare_row_keys());
  json["algorithm"] = name;
  const bool skipped = run.skipped_reason.has_value();
  if (skipped) {
    json["chunks_per_npu"] = nullptr;
    json["collective_time_us"] = nullptr;
    json["algbw_gbps"] = nullptr;
    json["busbw_gbps"] = nullptr;
    json["lower_bound_us"] = bound ? nlohmann::ordered_json(bound->lower_bound_us) : nullptr;
    for (const char* key :
         {"bound_ratio", "store_and_forward_bound_us", "store_and_forward_ratio", "binding_bound",
          "binding_bound_us", "binding_ratio", "verified", "synthesis_seconds"})
      json[key] = nullptr;
    json["skipped_reason"] = *run.skipped_reason;
  } else {
    json["chunks_per_npu"] = run.result.algorithm.collective().chunks_per_npu();
    json["collective_time_us"] = to_micros(run.result.collective_time);
    put_report(json, row.report);
    json["verified"] = run.verified ? nlohmann::ordered_json(*run.verified) : nullptr;
    json["synthesis_seconds"] = run.result.seconds;
    json["skipped_reason"] = nullptr;
  }
  const bool ran = name == "tacos" && !run.portfolio_winner.empty();
  json["portfolio_winner"] = ran ? nlohmann::ordered_json(run.portfolio_winner) : nullptr;
  json["greedy_time_us"] = name == "tacos" && !skipped && run.greedy_time
                               ? nlohmann::ordered_json(to_micros(*run.greedy_time))
                               : nullptr;
  return json.take();
}

}  // namespace

CompareOutcome run_compare(const CompareJob& job, const Topology& full) {
  CompareOutcome out;
  out.network = job.topology.network(full);
  // Every flag is checked before any algorithm runs: the collective's and --portfolio by
  // request(), then --algorithms and --plot.
  CompareRequest request;
  request.settings = job.collective.request(out.network, job.flags, job.topology, "tacos");
  if (!job.algorithms.empty()) request.algorithms = split_list(job.algorithms);
  for (const std::string& name : request.algorithms) require_algorithm("--algorithms", name);
  const std::string& plot = job.plot;
  if (!plot.empty() && !(plot.size() > 4 && plot.substr(plot.size() - 4) == ".svg"))
    throw Error("--plot: expected a file name ending in .svg, got '" + plot + "'");
  out.link_model = request.settings.options.link_model;
  out.comparison = compare(full, out.network, request);

  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const ComparisonRow& row : out.comparison.rows)
    results.push_back(row_json(row, out.comparison.bound));
  nlohmann::ordered_json& json = out.json;
  json["topology"] = full.name();
  json["collective"] = to_string(out.comparison.collective.kind());
  json["size_bytes"] = out.comparison.collective.size();
  json["link_model"] = to_string(out.link_model);
  json["results"] = results;
  return out;
}

}  // namespace tacos::cli
