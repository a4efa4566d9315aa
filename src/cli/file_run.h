#pragma once
// Loading an algorithm file and running it (simulate) or checking it (verify): shared by
// `tacos simulate`, `tacos verify` and the Python module, so both report the same JSON.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "algorithm_files.h"
#include "common_options.h"
#include "tacos/algorithm/verify.h"
#include "tacos/common/units.h"

namespace tacos::cli {

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
    topology.add_optional_to(command, topology_given,
                             "Topology to run on (generator spec or YAML file); default: fully "
                             "connected among the algorithm's NPUs");
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

// Loads the file and simulates it; checks semantics where chunk identity is known.
// `nominal_size_if_missing`: see load_algorithm_file.
Outcome run_file(const FileRunOptions& o, bool nominal_size_if_missing = false);

// The object `tacos simulate --json` and `tacos verify --json` print.
nlohmann::ordered_json outcome_json(const Outcome& outcome, const std::string& model);

// Throws the Error `tacos verify` fails with when the outcome is not a correct algorithm.
void require_verified(const FileRunOptions& options, const Outcome& outcome);

}  // namespace tacos::cli
