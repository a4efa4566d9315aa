// tacos simulate / tacos verify: run or check an algorithm file on a topology.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "algorithm_files.h"
#include "commands.h"
#include "common_options.h"
#include "tacos/algorithm/verify.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"

namespace tacos::cli {
namespace {

struct FileRunOptions {
  std::string path;
  TopologyOptions topology;
  bool topology_given = false;
  std::string link_model = "tacos";
  std::string size;
  bool json = false;

  void add_to(CLI::App& command) {
    command
        .add_option("--algorithm", path,
                    "Algorithm file: tacos JSON (.json), MSCCL-IR XML (.xml) or a Chakra ET "
                    "prefix/directory")
        ->required();
    topology.add_to(command);
    command.get_option("--topology")
        ->default_str("")
        ->description(
            "Topology to run on (generator spec or YAML file); default: fully connected among "
            "the algorithm's NPUs")
        ->each([this](const std::string&) { topology_given = true; });
    command.add_option("--link-model", link_model, "tacos or astra")->capture_default_str();
    command.add_option("--size", size,
                       "Collective size for files that carry none (other tools' MSCCL XML, "
                       "Chakra without comm_size)");
  }
  std::optional<Bytes> size_bytes() const {
    if (size.empty()) return std::nullopt;
    return parse_size(size);
  }
};

struct Outcome {
  LoadedAlgorithm loaded;
  Time time = 0;
  std::optional<VerifyResult> check;  // absent when chunk identity is unknown
  // tacos JSON records times: they are checked as written too (causality and link occupancy
  // under the file's link model), not only the re-simulated schedule.
  std::optional<VerifyResult> recorded;
  std::int64_t messages = 0;
  std::int64_t compute_nodes = 0;
};

Outcome run_file(const FileRunOptions& o, bool nominal_size_if_missing = false) {
  const LinkModel model = parse_link_model(o.link_model);
  Outcome outcome;
  outcome.loaded = load_algorithm_file(o.path, o.topology, o.topology_given, model, o.size_bytes(),
                                       nominal_size_if_missing);
  const LoadedAlgorithm& loaded = outcome.loaded;
  if (loaded.trace) {
    const EtRunResult run = simulate_chakra(*loaded.trace, loaded.network, model, o.size_bytes());
    outcome.time = run.collective_time;
    outcome.messages = run.messages;
    outcome.compute_nodes = run.compute_nodes;
  }
  if (loaded.algorithm) {
    const SimulationResult sim = simulate(*loaded.algorithm, loaded.network, model);
    if (!loaded.trace) {
      outcome.time = sim.collective_time;
      outcome.messages = static_cast<std::int64_t>(loaded.algorithm->transfers().size());
    }
    // Semantics are checked on the simulated schedule, whatever times the file recorded.
    outcome.check =
        verify_algorithm(with_simulated_times(*loaded.algorithm, sim), loaded.network, model);
    if (loaded.format == AlgorithmFormat::kJson)
      outcome.recorded =
          verify_algorithm(*loaded.algorithm, loaded.network, loaded.algorithm->link_model);
  }
  return outcome;
}

nlohmann::ordered_json outcome_json(const Outcome& outcome, const std::string& model) {
  nlohmann::ordered_json out;
  out["format"] = to_string(outcome.loaded.format);
  out["topology"] = outcome.loaded.topology_spec;
  out["npus"] = outcome.loaded.network.npus();
  out["link_model"] = model;
  if (outcome.loaded.algorithm) {
    const Collective& c = outcome.loaded.algorithm->collective();
    out["collective"] = to_string(c.kind());
    out["size_bytes"] = c.size();
    out["chunk_bytes"] = c.chunk_bytes();
  }
  out["collective_time_us"] = to_micros(outcome.time);
  out["messages"] = outcome.messages;
  if (outcome.loaded.trace) out["compute_nodes"] = outcome.compute_nodes;
  out["verified"] =
      outcome.check.has_value() && outcome.check->ok && (!outcome.recorded || outcome.recorded->ok);
  if (outcome.loaded.algorithm) {
    out["recorded_times_checked"] = outcome.recorded.has_value();
    // What was checked, by name: the semantics on the simulated schedule always; the file's
    // own times (a transfer starts only once its source holds the chunk, no link carries two
    // transfers at once under the file's link model) when it records them.
    nlohmann::ordered_json checks = nlohmann::ordered_json::array({"postconditions"});
    if (outcome.recorded) {
      checks.push_back("causality");
      checks.push_back("link_occupancy");
      out["recorded_link_model"] = to_string(outcome.loaded.algorithm->link_model);
    }
    out["checks"] = checks;
  }
  if (outcome.recorded && !outcome.recorded->ok)
    out["verify_error"] = "recorded times: " + outcome.recorded->error;
  else if (!outcome.check)
    out["verify_error"] = "chunk identity is unknown (not a tacos-written Chakra set)";
  else if (!outcome.check->ok)
    out["verify_error"] = outcome.check->error;
  return out;
}

struct SimulateCommand {
  FileRunOptions options;
  void run() const {
    const Outcome outcome = run_file(options);
    if (options.json) {
      std::cout << outcome_json(outcome, options.link_model).dump(2) << std::endl;
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
    if (options.json) std::cout << outcome_json(outcome, options.link_model).dump(2) << std::endl;
    if (!outcome.check)
      throw Error("verify: " + options.path +
                  ": chunk identity is unknown, so its semantics cannot be checked");
    if (!outcome.check->ok) throw Error("verify: " + options.path + ": " + outcome.check->error);
    if (outcome.recorded && !outcome.recorded->ok)
      throw Error("verify: " + options.path + ": recorded times (link model " +
                  to_string(outcome.loaded.algorithm->link_model) +
                  "): " + outcome.recorded->error);
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
  sub->add_flag("--json", cmd->options.json, "Print one JSON object");
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
