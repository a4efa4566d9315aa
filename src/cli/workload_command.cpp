// tacos workload: reads a training-step workload (Chakra ET per rank plus its process groups),
// synthesizes each distinct collective on the NPUs of its group and writes the ASTRA-sim bundle
// that runs the step with those algorithms (docs/workload.md).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.h"
#include "report.h"
#include "tacos/common/units.h"
#include "workload_job.h"

namespace tacos::cli {
namespace {

void print_summary(const WorkloadOutcome& outcome, const WorkloadJob& job) {
  const ChakraWorkload& w = outcome.workload;
  std::printf("workload %s: %d ranks, %zu distinct collectives on %s (link model astra)\n",
              w.prefix.c_str(), w.ranks, outcome.rows.size(), job.topology.topology.c_str());
  std::printf("  %-3s %-14s %10s  %-16s %5s  %12s  %12s  %-22s %10s\n", "#", "collective", "size",
              "ranks", "xrank", "tacos us", "in ASTRA us", "best baseline us", "bound us");
  for (std::size_t i = 0; i < outcome.rows.size(); ++i) {
    const WorkloadRow& r = outcome.rows[i];
    std::string members;
    for (NpuId m : r.collective.members) {
      if (!members.empty()) members += ',';
      members += std::to_string(m);
    }
    char baseline[64] = "-";
    if (!r.best_baseline.empty())
      std::snprintf(baseline, sizeof baseline, "%.3f (%s)", to_micros(r.baseline_time),
                    r.best_baseline.c_str());
    std::printf("  c%-2zu %-14s %10s  %-16s %5d  %12.3f  %12.3f  %-22s %10.3f\n", i,
                to_string(r.collective.kind).c_str(), format_bytes(r.collective.comm_size).c_str(),
                members.c_str(), r.per_rank, to_micros(r.time), to_micros(r.astra_time), baseline,
                r.bound_us);
  }
  double most = 0;
  for (const auto& v : outcome.json["serial_communication_us"])
    most = std::max(most, v.get<double>());
  std::printf("  communication per rank, collectives one after another: up to %.3f us\n", most);
  // The whole step as the bundle runs in ASTRA-sim (io/workload_step.h).
  const StepPrediction& p = outcome.prediction;
  Time compute = 0;
  for (Time t : p.compute) compute = std::max(compute, t);
  std::printf(
      "step predicted by tacos (roofline compute, collectives as the bundle runs them): %.3f us "
      "(last rank), compute up to %.3f us\n",
      to_micros(p.step_time), to_micros(compute));
  if (!job.out_dir.empty())
    std::printf("bundle: %s/astra (run it: tacos astra-run %s)\n", job.out_dir.c_str(),
                job.out_dir.c_str());
}

}  // namespace

void add_workload_command(CLI::App& app) {
  auto job = std::make_shared<WorkloadJob>();
  auto json = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand(
      "workload",
      "Synthesize every collective of a training-step workload (Chakra ET) and write the "
      "ASTRA-sim bundle that runs the step with them");
  sub->add_option("--et", job->et_prefix, "The workload's PREFIX (files PREFIX.RANK.et)")
      ->required();
  sub->add_option("--comm-groups", job->comm_groups,
                  "Process-group JSON {\"id\": [ranks]} (default: PREFIX.json)");
  sub->add_option("--topology", job->topology.topology,
                  "1-D network: switch:N, ring:N or fc:N (or an ASTRA-sim network YAML)")
      ->required();
  sub->add_option("--bandwidth", job->topology.bandwidth, "Link bandwidth in GB/s (2^30 B/s)");
  sub->add_option("--latency", job->topology.latency, "Link latency (ns, us or ms; bare = us)");
  sub->add_option("--out", job->out_dir, "Write the ASTRA-sim bundle to DIR/astra");
  sub->add_option("--algorithm", job->algorithm, algorithm_help())->capture_default_str();
  sub->add_option("--chunks-per-npu", job->chunks_per_npu, "K (a whole number or auto)")
      ->capture_default_str();
  sub->add_option("--seed", job->seed, "Random seed")->capture_default_str();
  sub->add_option("--peak-tflops", job->peak_tflops, "ASTRA-sim roofline: peak TFLOPS")
      ->capture_default_str();
  sub->add_option("--local-mem-bw", job->local_mem_gbps, "ASTRA-sim roofline: memory GB/s")
      ->capture_default_str();
  sub->add_flag("--json", *json, "Print one JSON object");
  sub->callback([job, json] {
    const WorkloadOutcome outcome = run_workload(*job);
    if (*json)
      std::cout << json_text(outcome.json) << std::endl;
    else
      print_summary(outcome, *job);
  });
}

}  // namespace tacos::cli
