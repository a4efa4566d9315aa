#include "tacos/synthesis/compare.h"

#include "tacos/simulation/simulator.h"

namespace tacos {
namespace {

ComparisonRow run_row(const Topology& network, const CompareRequest& request,
                      const std::string& name, const std::optional<LowerBound>& bound,
                      const KnownRuns* known) {
  SynthesisRequest one = request.settings;
  one.algorithm = name;
  ComparisonRow row;
  row.run = synthesize(network, one, known);
  if (row.run.skipped_reason) return row;
  SynthesisResult& result = row.run.result;
  // Every algorithm is timed by the same simulator under the same link model. A baseline's
  // time already is the simulator's (synthesize_baseline compacts under this model), so only
  // the tacos row is simulated again.
  if (name == "tacos")
    result.collective_time =
        simulate(result.algorithm, network, one.options.link_model).collective_time;
  row.report = make_report(row.run, result.algorithm.collective(), bound);
  return row;
}

}  // namespace

Comparison compare(const Topology& full, const Topology& network, const CompareRequest& request) {
  const std::vector<std::string> names =
      request.algorithms.empty() ? algorithms_for(network) : request.algorithms;
  for (const std::string& name : names) find_algorithm(name);
  const SynthesisRequest& settings = request.settings;
  Comparison out{settings.collective_at(network.npus(), settings.chunks_per_npu), std::nullopt, {}};
  out.bound = bound_if_affordable(full, network, out.collective);

  std::vector<std::optional<ComparisonRow>> rows(names.size());
  KnownRuns known;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "tacos") continue;
    rows[i] = run_row(network, request, names[i], out.bound, nullptr);
    known.emplace(names[i], &rows[i]->run);
  }
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == "tacos") rows[i] = run_row(network, request, "tacos", out.bound, &known);
  out.rows.reserve(rows.size());
  for (auto& row : rows) out.rows.push_back(std::move(*row));
  return out;
}

}  // namespace tacos
