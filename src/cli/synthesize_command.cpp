#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "algorithm_outputs.h"
#include "commands.h"
#include "msccl_options.h"
#include "progress.h"
#include "report.h"
#include "synthesize_job.h"
#include "tacos/common/units.h"

namespace tacos::cli {
namespace {

struct SynthesizeCommand {
  SynthesizeJob job;
  bool json = false;

  MscclOptions msccl;

  void run() {
    job.msccl = msccl.get();  // bad --msccl-* values fail before the synthesis, not after
    job.msccl_flag = msccl.given();
    const Topology full = job.topology.load();
    ProgressReporter progress("synthesize");
    job.progress = [&progress](double f) { progress.update(f); };
    job.progress_done = [&progress] { progress.finish(); };
    const SynthesizeOutcome outcome = run_synthesize(job, full);
    const Time reported = outcome.run.result.collective_time;
    note_replay(outcome.chakra_replay, job.out_dir + "/chakra", reported);
    note_replay(outcome.msccl_replay, msccl_file(outcome.run.result.algorithm, job.out_dir),
                reported);
    if (json) {
      std::cout << json_text(synthesize_json(job, full, outcome)) << std::endl;
      return;
    }
    const std::string& algorithm = job.algorithm;
    const Topology& network = outcome.network;
    const AlgorithmRun& run = outcome.run;
    const Report& report = outcome.report;
    const nlohmann::ordered_json& astra = outcome.astra;
    const Collective& coll = run.result.algorithm.collective();
    std::printf("%s %s on %s: %d NPUs, %d links, link model %s\n", algorithm.c_str(),
                to_string(coll.kind()).c_str(), full.name().c_str(), network.npus(),
                network.num_links(), to_string(outcome.options.link_model).c_str());
    if (coll.num_members() != network.npus() || has_root(coll.kind()))
      std::printf("  collective       %d NPUs%s\n", coll.num_members(),
                  has_root(coll.kind()) ? (", root " + std::to_string(coll.root())).c_str() : "");
    std::printf("  size             %s buffer, %d chunk(s) per NPU of %s\n",
                format_bytes(coll.size()).c_str(), coll.chunks_per_npu(),
                format_bytes(coll.chunk_bytes()).c_str());
    if (!run.auto_stopped.empty()) std::printf("  chunks search    %s\n", run.auto_stopped.c_str());
    if (!run.abandoned.empty()) std::printf("  abandoned        %s\n", run.abandoned.c_str());
    std::printf("  collective time  %s us\n", format_micros(run.result.collective_time).c_str());
    if (algorithm == "tacos") {
      // Over its budget the portfolio still tries a few baselines (portfolio_skipped says
      // which), and one of them can win.
      const bool greedy_won = run.portfolio_winner.empty() || run.portfolio_winner == "tacos";
      if (!run.portfolio_skipped.empty() && greedy_won)
        std::printf("  portfolio        not run (%s): the TACOS greedy's schedule\n",
                    run.portfolio_skipped.c_str());
      else if (!run.portfolio_skipped.empty())
        std::printf("  portfolio        not run (%s): %s's schedule (the TACOS greedy alone%s)\n",
                    run.portfolio_skipped.c_str(), run.portfolio_winner.c_str(),
                    greedy_alone_note(run, "").c_str());
      else if (run.portfolio_winner == "tacos")
        std::printf("  portfolio        the TACOS greedy's schedule (no baseline is faster)\n");
      else
        std::printf("  portfolio        %s's schedule (the TACOS greedy alone%s)\n",
                    run.portfolio_winner.c_str(), greedy_alone_note(run, "").c_str());
    }
    std::printf("  algbw / busbw    %.2f / %.2f GB/s (1e9 B/s, as nccl-tests)\n", report.algbw_gbps,
                report.busbw_gbps);
    // With both bounds shown, the larger one is named: it is the one the time is judged by.
    const bool both = report.lower_bound_us && report.store_and_forward_bound_us;
    const bool sf_binds = report.binding == BindingBound::kStoreAndForward;
    if (report.lower_bound_us && report.bound_ratio)
      std::printf("  lower bound      %.6g us (time = %.3f x bound%s)\n", *report.lower_bound_us,
                  *report.bound_ratio, both && !sf_binds ? "; the larger bound" : "");
    if (report.store_and_forward_bound_us)
      std::printf(
          "  s&f bound        %.6g us (time = %.3f x; store-and-forward, tacos link model%s)\n",
          *report.store_and_forward_bound_us, *report.store_and_forward_ratio,
          sf_binds ? "; the larger bound" : "; below the lower bound");
    std::printf("  transfers        %lld (%s)\n", static_cast<long long>(run.result.transfers),
                run.verified ? "verified" : "not kept: --time-only");
    if (algorithm == "tacos" && !run.portfolio_winner.empty() && run.portfolio_winner != "tacos")
      std::printf("  synthesis time   %.3f s (the greedy's %d trial(s) and the baselines)\n",
                  run.result.seconds, job.collective.trials);
    else if (algorithm == "tacos")
      std::printf("  synthesis time   %.3f s (%d trial(s), best seed %llu)\n", run.result.seconds,
                  job.collective.trials, static_cast<unsigned long long>(run.result.seed));
    else
      std::printf("  synthesis time   %.3f s\n", run.result.seconds);
    std::printf("  peak memory      %.1f MiB\n", peak_memory_mib());
    if (!job.out_dir.empty())
      std::printf("  wrote            %s (%s)\n", job.out_dir.c_str(), job.formats.c_str());
    if (!astra.is_null() && astra["expected_time_us"].is_number())
      std::printf("  ASTRA-sim        %s: %.6f us expected (%s)\n",
                  astra["backend"].get<std::string>().c_str(),
                  astra["expected_time_us"].get<double>(),
                  astra["matches_reported"].get<bool>() ? "= the time above"
                                                        : astra["note"].get<std::string>().c_str());
  }
};

}  // namespace

void add_synthesize_command(CLI::App& app) {
  auto cmd = std::make_shared<SynthesizeCommand>();
  CLI::App* sub = add_command(app, cmd, "synthesize",
                              "Synthesize a collective algorithm, verify it and report its time");
  cmd->job.topology.add_to(*sub);
  cmd->job.collective.add_to(*sub);
  cmd->job.flags.add_to(*sub);
  cmd->job.flags.add_portfolio_to(*sub);
  cmd->job.flags.add_auto_budget_to(*sub);
  sub->add_option("--algorithm", cmd->job.algorithm, algorithm_help())->capture_default_str();
  sub->add_flag("--json", cmd->json,
                "Print one JSON object on stdout instead of the summary (algbw_gbps, busbw_gbps: "
                "GB/s of 10^9 B/s, as nccl-tests)");
  sub->add_flag("--time-only", cmd->job.time_only,
                "Report time and statistics without keeping the transfer list (no verification, "
                "no --out, no baselines: the TACOS greedy, with batched messages where faster "
                "unless --portfolio off); for very large systems");
  sub->add_option("--out", cmd->job.out_dir,
                  "Write the algorithm into DIR in the --format(s): DIR/algorithm.json, "
                  "DIR/chakra/tacos.RANK.et with DIR/astra/ (ASTRA-sim run files), "
                  "DIR/msccl/NAME.xml, DIR/trace.json (Chrome trace: Perfetto, chrome://tracing), "
                  "DIR/view.html (the viewer, as tacos view)");
  sub->add_option("--format", cmd->job.formats,
                  "Comma list of json, chakra, msccl, trace, html (with --out)")
      ->capture_default_str()
      ->each([cmd](const std::string&) { cmd->job.formats_given = true; });
  cmd->msccl.add_to(*sub);
}

}  // namespace tacos::cli
