// tacos simulate / tacos verify: run or check an algorithm file on a topology.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "file_run.h"
#include "report.h"
#include "tacos/common/atomic_file.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/trace.h"
#include "tacos/simulation/simulator.h"

namespace tacos::cli {
namespace {

// `tacos simulate --format trace --out DIR`: DIR/trace.json, the file's schedule as the
// simulator times it. A note on stderr when that is not the printed time (a Chakra set's own
// replay follows its ET dependencies).
void write_simulated_trace(const FileRunOptions& options, const Outcome& outcome,
                           const std::string& out_dir) {
  if (!outcome.loaded.algorithm)
    throw Error("--format trace: " + options.path +
                ": chunk identity is unknown (not a tacos-written Chakra set), no trace to write");
  const Algorithm& algorithm = *outcome.loaded.algorithm;
  const LinkModel model = parse_link_model(options.link_model);
  const SimulationResult simulated = simulate(algorithm, outcome.loaded.network, model);
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) throw Error("--out " + out_dir + ": cannot create it (" + error.message() + ")");
  const std::string path = (std::filesystem::path(out_dir) / "trace.json").string();
  write_file_atomically(path, algorithm_trace(algorithm, outcome.loaded.network, simulated, model));
  if (simulated.collective_time != outcome.time)
    std::fprintf(stderr,
                 "tacos: note: %s times the schedule as tacos simulates its transfers (%s us), "
                 "not as the Chakra set's dependencies replay (%s us)\n",
                 path.c_str(), format_micros(simulated.collective_time).c_str(),
                 format_micros(outcome.time).c_str());
}

struct SimulateCommand {
  FileRunOptions options;
  std::string out_dir;
  std::string formats;

  void run() const {
    if (!formats.empty() && formats != "trace")
      throw Error("--format: expected trace, got '" + formats + "'");
    if (formats.empty() != out_dir.empty())
      throw Error(formats.empty() ? "--out needs --format trace (what to write)"
                                  : "--format trace needs --out DIR (where to write trace.json)");
    if (!out_dir.empty() && std::filesystem::exists(out_dir) &&
        !std::filesystem::is_directory(out_dir))
      throw Error("--out: " + out_dir + " exists and is not a directory");
    const Outcome outcome = run_file(options);
    if (!out_dir.empty()) write_simulated_trace(options, outcome, out_dir);
    if (options.json) {
      std::cout << json_text(outcome_json(outcome, options.link_model)) << std::endl;
      return;
    }
    std::printf("%s algorithm %s on %s (%d NPUs), link model %s\n",
                to_string(outcome.loaded.format).c_str(), options.path.c_str(),
                outcome.loaded.topology_spec.c_str(), outcome.loaded.network.npus(),
                options.link_model.c_str());
    if (outcome.loaded.algorithm)
      std::printf("  collective       %s, %s\n",
                  to_string(outcome.loaded.algorithm->collective().kind()).c_str(),
                  format_bytes(outcome.loaded.algorithm->collective().size()).c_str());
    std::printf("  collective time  %s us\n", format_micros(outcome.time).c_str());
    if (outcome.loaded.algorithm) {
      const Report report = make_report(outcome.time, outcome.loaded.algorithm->collective(),
                                        std::nullopt, parse_link_model(options.link_model));
      std::printf("  algbw / busbw    %.2f / %.2f GB/s (1e9 B/s, as nccl-tests)\n",
                  report.algbw_gbps, report.busbw_gbps);
    }
    std::printf("  messages         %lld\n", static_cast<long long>(outcome.messages));
    if (outcome.loaded.trace)
      std::printf("  compute nodes    %lld\n", static_cast<long long>(outcome.compute_nodes));
    if (!outcome.check)
      std::printf("  verified         unknown: chunk identity is not recorded\n");
    else
      std::printf("  verified         %s\n",
                  outcome.check->ok ? "yes" : ("NO: " + outcome.check->error).c_str());
    if (!out_dir.empty())
      std::printf("  wrote            %s\n",
                  (std::filesystem::path(out_dir) / "trace.json").string().c_str());
  }
};

struct VerifyCommand {
  FileRunOptions options;
  void run() const {
    const Outcome outcome = run_file(options, /*nominal_size_if_missing=*/true);
    if (options.json)
      std::cout << json_text(outcome_json(outcome, options.link_model)) << std::endl;
    require_verified(options, outcome);
    if (!options.json) {
      std::printf("%s: a correct %s (%d NPUs, %lld messages, %s us)\n", options.path.c_str(),
                  to_string(outcome.loaded.algorithm->collective().kind()).c_str(),
                  outcome.loaded.network.npus(), static_cast<long long>(outcome.messages),
                  format_micros(outcome.time).c_str());
      if (outcome.loaded.nominal_size)
        std::printf(
            "  the file carries no sizes: checked with 1 MiB per MSCCL chunk (the time "
            "above is for that size; give --size for the real one)\n");
      if (outcome.recorded)
        std::printf(
            "  checked: postconditions on the simulated schedule, and the recorded times "
            "(causality, link occupancy, link model %s)\n",
            to_string(outcome.loaded.algorithm->link_model).c_str());
      else if (outcome.loaded.both_calls)
        std::printf(
            "  checked: postconditions on the simulated schedule of an out-of-place and an "
            "in-place call (the file records no times of its own)\n");
      else
        std::printf(
            "  checked: postconditions on the simulated schedule (the file records no "
            "times of its own)\n");
    }
  }
};

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto cmd = std::make_shared<SimulateCommand>();
  CLI::App* sub =
      add_command(app, cmd, "simulate",
                  "Simulate an algorithm file (tacos JSON, MSCCL XML, Chakra ET) on a topology");
  cmd->options.add_to(*sub);
  sub->add_flag("--json", cmd->options.json,
                "Print one JSON object (algbw_gbps, busbw_gbps: GB/s of 10^9 B/s, as nccl-tests)");
  sub->add_option("--format", cmd->formats,
                  "trace: write DIR/trace.json, a Chrome trace of the simulated schedule "
                  "(Perfetto, chrome://tracing; with --out)");
  sub->add_option("--out", cmd->out_dir, "Folder for the --format's file");
}

void add_verify_command(CLI::App& app) {
  auto cmd = std::make_shared<VerifyCommand>();
  CLI::App* sub = add_command(
      app, cmd, "verify", "Check that an algorithm file implements its collective (exit 1 if not)");
  cmd->options.add_to(*sub);
  sub->add_flag("--json", cmd->options.json, "Print one JSON object");
}

}  // namespace tacos::cli
