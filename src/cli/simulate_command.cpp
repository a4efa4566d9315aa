// tacos simulate / tacos verify: run or check an algorithm file on a topology.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "file_run.h"
#include "report.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos::cli {
namespace {

struct SimulateCommand {
  FileRunOptions options;
  void run() const {
    const Outcome outcome = run_file(options);
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
  CLI::App* sub = app.add_subcommand(
      "simulate", "Simulate an algorithm file (tacos JSON, MSCCL XML, Chakra ET) on a topology");
  cmd->options.add_to(*sub);
  sub->add_flag("--json", cmd->options.json,
                "Print one JSON object (algbw_gbps, busbw_gbps: GB/s of 10^9 B/s, as nccl-tests)");
  sub->callback([cmd] { cmd->run(); });
}

void add_verify_command(CLI::App& app) {
  auto cmd = std::make_shared<VerifyCommand>();
  CLI::App* sub = app.add_subcommand(
      "verify", "Check that an algorithm file implements its collective (exit 1 if not)");
  cmd->options.add_to(*sub);
  sub->add_flag("--json", cmd->options.json, "Print one JSON object");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace tacos::cli
