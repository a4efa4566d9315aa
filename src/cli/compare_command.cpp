// tacos compare: every applicable algorithm through the same simulator, in one table.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "algorithm_runner.h"
#include "collective_options.h"
#include "commands.h"
#include "common_options.h"
#include "report.h"
#include "tacos/common/atomic_file.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/svg.h"
#include "tacos/simulation/simulator.h"

namespace tacos::cli {
namespace {

struct CompareCommand {
  TopologyOptions topology;
  SynthesisFlags flags;
  CollectiveOptions collective;
  std::string algorithms = "tacos,ring,direct,rhd,dbt,hierarchical";
  bool json = false;
  std::string plot;

  void run() const {
    const Topology full = topology.load();
    const Topology network = topology.network(full);
    const Collective coll = collective.make(network, flags);
    std::vector<std::string> names = split_list(algorithms);
    for (const std::string& name : names)
      if (std::find(algorithm_names().begin(), algorithm_names().end(), name) ==
          algorithm_names().end())
        throw Error("--algorithms: unknown algorithm '" + name +
                    "' (expected tacos, ring, direct, rhd, dbt or hierarchical)");
    if (!plot.empty() && !(plot.size() > 4 && plot.substr(plot.size() - 4) == ".svg"))
      throw Error("--plot: expected a file name ending in .svg, got '" + plot + "'");
    const SynthesisOptions options = collective.synthesis_options(flags);
    const std::optional<LowerBound> bound = bound_if_affordable(full, coll);

    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    std::vector<std::pair<std::string, double>> bars;
    if (!json)
      std::printf("%s on %s (%d NPUs), %s, link model %s\n", to_string(coll.kind()).c_str(),
                  full.name().c_str(), network.npus(), format_bytes(coll.size()).c_str(),
                  to_string(options.link_model).c_str());
    if (!json && bound)
      std::printf("lower bound %.6g us (latency %.6g us, bandwidth %.6g us)\n",
                  bound->lower_bound_us, bound->latency_bound_us, bound->bandwidth_bound_us);
    if (!json) std::printf("algbw and busbw in GB/s of 1e9 B/s, as nccl-tests reports them\n\n");
    if (!json)
      std::printf("%-13s %5s %14s %8s %8s %9s %13s  %s\n", "algorithm", "K", "time (us)", "algbw",
                  "busbw", "vs bound", "synthesis (s)", "verified");
    for (const std::string& name : names) {
      AlgorithmRun run = run_algorithm_searching_chunks(
          name, network, [&](int k) { return collective.make(network, k); }, flags.auto_chunks(),
          coll.chunks_per_npu(), options, topology.topology);
      nlohmann::ordered_json row;
      row["algorithm"] = name;
      if (run.skipped_reason) {
        row["chunks_per_npu"] = nullptr;
        row["collective_time_us"] = nullptr;
        row["algbw_gbps"] = nullptr;
        row["busbw_gbps"] = nullptr;
        row["lower_bound_us"] = bound ? nlohmann::ordered_json(bound->lower_bound_us) : nullptr;
        row["bound_ratio"] = nullptr;
        row["verified"] = nullptr;
        row["synthesis_seconds"] = nullptr;
        row["skipped_reason"] = *run.skipped_reason;
        bars.emplace_back(name, std::nan(""));
        if (!json)
          std::printf("%-13s %5s %14s %8s %8s %9s %13s  skipped: %s\n", name.c_str(), "-", "-", "-",
                      "-", "-", "-", run.skipped_reason->c_str());
        results.push_back(row);
        continue;
      }
      // Every algorithm is timed by the same simulator under the same link model.
      run.result.collective_time =
          simulate(run.result.algorithm, network, options.link_model).collective_time;
      const Report report = make_report(run, run.result.algorithm.collective(), bound);
      row["chunks_per_npu"] = run.result.algorithm.collective().chunks_per_npu();
      row["collective_time_us"] = to_micros(run.result.collective_time);
      row["algbw_gbps"] = report.algbw_gbps;
      row["busbw_gbps"] = report.busbw_gbps;
      row["lower_bound_us"] = json_or_null(report.lower_bound_us);
      row["bound_ratio"] = json_or_null(report.bound_ratio);
      row["verified"] = run.verified ? nlohmann::ordered_json(*run.verified) : nullptr;
      row["synthesis_seconds"] = run.result.seconds;
      row["skipped_reason"] = nullptr;
      results.push_back(row);
      bars.emplace_back(name, to_micros(run.result.collective_time));
      if (!json)
        std::printf(
            "%-13s %5d %14s %8.2f %8.2f %9s %13.3f  %s\n", name.c_str(),
            run.result.algorithm.collective().chunks_per_npu(),
            format_micros(run.result.collective_time).c_str(), report.algbw_gbps, report.busbw_gbps,
            report.bound_ratio ? (std::to_string(*report.bound_ratio).substr(0, 5) + "x").c_str()
                               : "-",
            run.result.seconds, run.verified && *run.verified ? "yes" : "no");
    }
    if (!plot.empty())
      write_file_atomically(
          plot, bar_chart_svg(to_string(coll.kind()) + " on " + full.name() + ", " +
                                  format_bytes(coll.size()) + ": collective time",
                              bars, "us", "collective time",
                              bound ? std::optional<BarChartMark>(
                                          BarChartMark{"lower bound", bound->lower_bound_us})
                                    : std::nullopt));
    if (json) {
      nlohmann::ordered_json out;
      out["topology"] = full.name();
      out["collective"] = to_string(coll.kind());
      out["size_bytes"] = coll.size();
      out["link_model"] = to_string(options.link_model);
      out["results"] = results;
      std::cout << out.dump(2) << std::endl;
    } else if (!plot.empty()) {
      std::printf("\nwrote %s\n", plot.c_str());
    }
  }
};

}  // namespace

void add_compare_command(CLI::App& app) {
  auto cmd = std::make_shared<CompareCommand>();
  CLI::App* sub = app.add_subcommand(
      "compare", "Run TACOS and the baselines through the same simulator and compare them");
  cmd->topology.add_to(*sub);
  cmd->collective.add_to(*sub);
  cmd->flags.add_to(*sub);
  sub->add_option("--algorithms", cmd->algorithms, "Comma list of algorithms to compare")
      ->capture_default_str();
  sub->add_flag("--json", cmd->json,
                "Print one JSON object {\"results\": [...]} (algbw_gbps, busbw_gbps: GB/s of 10^9 "
                "B/s, as nccl-tests)");
  sub->add_option("--plot", cmd->plot, "Also draw the comparison as a bar chart (FILE.svg)");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace tacos::cli
