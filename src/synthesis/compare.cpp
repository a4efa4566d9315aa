#include "tacos/synthesis/compare.h"

#include "../common/parallel_tasks.h"
#include "tacos/simulation/simulator.h"

namespace tacos {
namespace {

SynthesisRequest request_for(const CompareRequest& request, const std::string& name) {
  SynthesisRequest one = request.settings;
  one.algorithm = name;
  return one;
}

// The row's report; the tacos row re-timed first. Every algorithm is timed by the same
// simulator under the same link model. A baseline's time already is the simulator's
// (synthesize_baseline compacts under this model), so only the tacos row is simulated again.
void finish_row(ComparisonRow& row, const Topology& network, LinkModel model,
                const std::optional<LowerBound>& bound) {
  if (row.run.skipped_reason) return;
  SynthesisResult& result = row.run.result;
  if (row.run.name == "tacos")
    result.collective_time = simulate(result.algorithm, network, model).collective_time;
  row.report = make_report(row.run, result.algorithm.collective(), bound);
}

}  // namespace

Comparison compare(const Topology& full, const Topology& network, const CompareRequest& request) {
  const std::vector<std::string> names =
      request.algorithms.empty() ? algorithms_for(network) : request.algorithms;
  for (const std::string& name : names) find_algorithm(name);
  const SynthesisRequest& settings = request.settings;
  Comparison out{settings.collective_at(network.npus(), settings.chunks_per_npu), std::nullopt, {}};
  const LinkModel model = settings.options.link_model;

  // The bound and the baselines are independent of each other: they run side by side (the
  // bound first, then the baselines in order, as the threads come free), and the tacos row
  // after them takes the baselines' runs into its portfolio instead of building them again.
  std::vector<std::optional<ComparisonRow>> rows(names.size());
  std::vector<std::size_t> baselines;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] != "tacos") baselines.push_back(i);
  detail::run_tasks(baselines.size() + 1, settings.options.threads, [&](std::size_t task) {
    if (task == 0) {
      out.bound = bound_if_affordable(full, network, out.collective);
      return;
    }
    const std::size_t i = baselines[task - 1];
    ComparisonRow row;
    row.run = synthesize(network, request_for(request, names[i]));
    rows[i] = std::move(row);
  });
  KnownRuns known;
  for (const std::size_t i : baselines) {
    finish_row(*rows[i], network, model, out.bound);
    known.emplace(names[i], &rows[i]->run);
  }
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == "tacos") {
      rows[i].emplace();
      rows[i]->run = synthesize(network, request_for(request, "tacos"), &known);
      finish_row(*rows[i], network, model, out.bound);
    }
  out.rows.reserve(rows.size());
  for (auto& row : rows) out.rows.push_back(std::move(*row));
  return out;
}

}  // namespace tacos
