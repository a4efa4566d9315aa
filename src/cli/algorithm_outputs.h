#pragma once
// Writing a synthesized algorithm to disk in tacos's formats, shared by `tacos synthesize --out`
// and the Python module's Result.write, so both produce the same files.
#include <nlohmann/json.hpp>
#include <string>

#include "tacos/algorithm/algorithm.h"
#include "tacos/io/msccl_xml.h"
#include "tacos/topology/topology.h"

namespace tacos::cli {

// Writes every format in `formats` (comma list of json, chakra, msccl, trace, html) into a fresh
// staging folder beside `out_dir` and moves the results in only when all of them succeeded, so a
// failure leaves no partial output. The target then holds exactly this run's formats: earlier tacos
// outputs (algorithm.json, chakra/, astra/, msccl/, trace.json, view.html) are replaced or removed;
// anything else in it is left alone. `msccl` shapes the MSCCL file (--msccl-max-steps,
// --msccl-protocol); `network` is what the algorithm runs on (switches unwound under --switch-model
// unwind; null: `full`), whose shared switch ports the MSCCL file keeps in the schedule's order.
void write_algorithm_outputs(const Algorithm& algorithm, const Topology& full,
                             const std::string& out_dir, const std::string& formats,
                             const MscclWriteOptions& msccl = {},
                             const Topology* network = nullptr);

// What ASTRA-sim will make of the bundle written by write_algorithm_outputs (the `astra_sim`
// object of --json): null unless `formats` included chakra.
nlohmann::ordered_json astra_sim_expectation(const Algorithm& algorithm, const Topology& full,
                                             const std::string& out_dir,
                                             const std::string& formats);

// What `tacos simulate` of the Chakra set written by write_algorithm_outputs gives on `network`
// (the topology the algorithm runs on) under `model` (the --json `chakra_replay` object: time_us,
// matches_reported and a note saying why it differs): null unless `formats` included chakra.
nlohmann::ordered_json chakra_replay(const Algorithm& algorithm, const Topology& network,
                                     LinkModel model, const std::string& out_dir,
                                     const std::string& formats);

// The MSCCL file write_algorithm_outputs writes under `out_dir`.
std::string msccl_file(const Algorithm& algorithm, const std::string& out_dir);

// What `tacos simulate` of the MSCCL file at `path`, written from `algorithm`, gives on `network`
// under `model` (the --json `msccl_replay` object: time_us, matches_reported against `reported`,
// and a note saying why it differs: what MSCCL cannot express).
nlohmann::ordered_json msccl_replay(const Algorithm& algorithm, const Topology& network,
                                    LinkModel model, const std::string& path, Time reported);
// The same for the file write_algorithm_outputs wrote under `out_dir` against the algorithm's
// time: null unless `formats` included msccl.
nlohmann::ordered_json msccl_replay(const Algorithm& algorithm, const Topology& network,
                                    LinkModel model, const std::string& out_dir,
                                    const std::string& formats);

// The one line on stderr when the file (or Chakra folder) at `path` replays to another time than
// `reported` (`replay`: a chakra_replay or msccl_replay object, or null).
void note_replay(const nlohmann::ordered_json& replay, const std::string& path, Time reported);

}  // namespace tacos::cli
