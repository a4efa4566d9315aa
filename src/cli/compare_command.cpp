// tacos compare: every applicable algorithm through the same simulator, in one table.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "compare_job.h"
#include "report.h"
#include "tacos/common/atomic_file.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/svg.h"

namespace tacos::cli {
namespace {

struct CompareCommand {
  CompareJob job;
  bool json = false;

  void run() const {
    const Topology full = job.topology.load();
    const CompareOutcome outcome = run_compare(job, full);
    const Comparison& comparison = outcome.comparison;
    const Collective& coll = comparison.collective;
    const std::optional<LowerBound>& bound = comparison.bound;
    const std::string& plot = job.plot;
    std::vector<std::pair<std::string, double>> bars;
    if (!json)
      std::printf("%s on %s (%d NPUs), %s, link model %s\n", to_string(coll.kind()).c_str(),
                  full.name().c_str(), outcome.network.npus(), format_bytes(coll.size()).c_str(),
                  to_string(outcome.link_model).c_str());
    if (!json && bound)
      std::printf("lower bound %.6g us (latency %.6g us, bandwidth %.6g us)\n",
                  bound->lower_bound_us, bound->latency_bound_us, bound->bandwidth_bound_us);
    if (!json && bound && outcome.link_model == LinkModel::kTacos &&
        bound->store_and_forward_bound_us > 0)
      std::printf(
          "store-and-forward bound %.6g us (tacos link model: whole messages through %s; %s)\n",
          bound->store_and_forward_bound_us, store_and_forward_relays(full),
          bound->store_and_forward_bound_us > bound->lower_bound_us
              ? "the larger bound: 'vs bound' is against it"
              : "below the lower bound, so it does not bind");
    if (!json) std::printf("algbw and busbw in GB/s of 1e9 B/s, as nccl-tests reports them\n\n");
    if (!json)
      std::printf("%-13s %5s %14s %8s %8s %9s %13s  %s\n", "algorithm", "K", "time (us)", "algbw",
                  "busbw", "vs bound", "synthesis (s)", "verified");
    std::string portfolio_note;
    for (const ComparisonRow& row : comparison.rows) {
      const std::string& name = row.run.name;
      const SynthesisRun& run = row.run;
      const Report& report = row.report;
      if (run.skipped_reason) {
        bars.emplace_back(name, std::nan(""));
        if (!json)
          std::printf("%-13s %5s %14s %8s %8s %9s %13s  skipped: %s\n", name.c_str(), "-", "-", "-",
                      "-", "-", "-", run.skipped_reason->c_str());
        continue;
      }
      bars.emplace_back(name, to_micros(run.result.collective_time));
      if (name == "tacos" && !run.portfolio_winner.empty() && run.portfolio_winner != "tacos")
        portfolio_note = "tacos: the portfolio kept " + run.portfolio_winner +
                         "'s schedule; the TACOS greedy alone" +
                         greedy_alone_note(run, " (--portfolio off)") + "\n";
      else if (name == "tacos" && !run.portfolio_skipped.empty() &&
               run.portfolio_skipped != "--portfolio off")
        portfolio_note =
            "tacos: the TACOS greedy alone (portfolio not run: " + run.portfolio_skipped + ")\n";
      if (!json)
        std::printf("%-13s %5d %14s %8.2f %8.2f %9s %13.3f  %s\n", name.c_str(),
                    run.result.algorithm.collective().chunks_per_npu(),
                    format_micros(run.result.collective_time).c_str(), report.algbw_gbps,
                    report.busbw_gbps,
                    report.binding_ratio
                        ? (std::to_string(*report.binding_ratio).substr(0, 5) + "x").c_str()
                        : "-",
                    run.result.seconds, run.verified && *run.verified ? "yes" : "no");
    }
    if (!json && !portfolio_note.empty()) std::printf("\n%s", portfolio_note.c_str());
    if (!plot.empty())
      write_file_atomically(
          plot, bar_chart_svg(to_string(coll.kind()) + " on " + full.name() + ", " +
                                  format_bytes(coll.size()) + ": collective time",
                              bars, "us", "collective time",
                              bound ? std::optional<BarChartMark>(
                                          BarChartMark{"lower bound", bound->lower_bound_us})
                                    : std::nullopt));
    if (json) {
      std::cout << json_text(outcome.json) << std::endl;
    } else if (!plot.empty()) {
      std::printf("\nwrote %s\n", plot.c_str());
    }
  }
};

}  // namespace

void add_compare_command(CLI::App& app) {
  auto cmd = std::make_shared<CompareCommand>();
  CLI::App* sub =
      add_command(app, cmd, "compare",
                  "Run TACOS and the baselines through the same simulator and compare them");
  cmd->job.topology.add_to(*sub);
  cmd->job.collective.add_to(*sub);
  cmd->job.flags.add_to(*sub);
  cmd->job.flags.add_portfolio_to(*sub);
  sub->add_option("--algorithms", cmd->job.algorithms,
                  "Comma list of algorithms to compare (default: " + algorithm_list() +
                      "; nvls, nvls-tree and collnet only where a switch reduces)");
  sub->add_flag("--json", cmd->json,
                "Print one JSON object {\"results\": [...]} (algbw_gbps, busbw_gbps: GB/s of "
                "10^9 B/s, as nccl-tests)");
  sub->add_option("--plot", cmd->job.plot, "Also draw the comparison as a bar chart (FILE.svg)");
}

}  // namespace tacos::cli
