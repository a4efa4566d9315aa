#include "file_run.h"

#include "report.h"
#include "tacos/common/error.h"
#include "tacos/simulation/simulator.h"

namespace tacos::cli {

Outcome run_file(const FileRunOptions& o, bool nominal_size_if_missing) {
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
  if (outcome.loaded.algorithm) {
    const Report report = make_report(outcome.time, outcome.loaded.algorithm->collective(),
                                      std::nullopt, parse_link_model(model));
    out["algbw_gbps"] = report.algbw_gbps;
    out["busbw_gbps"] = report.busbw_gbps;
  } else {
    out["algbw_gbps"] = nullptr;  // the size of a foreign Chakra set is not known
    out["busbw_gbps"] = nullptr;
  }
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

void require_verified(const FileRunOptions& options, const Outcome& outcome) {
  if (!outcome.check)
    throw Error("verify: " + options.path +
                ": chunk identity is unknown, so its semantics cannot be checked");
  if (!outcome.check->ok) throw Error("verify: " + options.path + ": " + outcome.check->error);
  if (outcome.recorded && !outcome.recorded->ok)
    throw Error("verify: " + options.path + ": recorded times (link model " +
                to_string(outcome.loaded.algorithm->link_model) + "): " + outcome.recorded->error);
}

}  // namespace tacos::cli
