#pragma once
// One `tacos synthesize` run as a function: the command line and the Python module both call it,
// so `tacos.synthesize(...)` returns exactly the fields `tacos synthesize --json` prints.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "algorithm_runner.h"
#include "collective_options.h"
#include "common_options.h"
#include "report.h"
#include "tacos/io/msccl_xml.h"

namespace tacos::cli {

struct SynthesizeJob {
  TopologyOptions topology;
  SynthesisFlags flags;
  CollectiveOptions collective;
  std::string algorithm = "tacos";
  bool time_only = false;
  std::string out_dir;  // empty: write nothing
  std::string formats = "json";
  bool formats_given = false;
  MscclWriteOptions msccl;  // --msccl-max-steps, --msccl-protocol
  std::string msccl_flag;   // the first --msccl-* flag given ("" when none): needs an MSCCL file
  std::function<void(double)> progress;  // fraction done; may be empty
  std::function<void()> progress_done;   // called once synthesis ends; may be empty
};

struct SynthesizeOutcome {
  Topology network;  // what the algorithm runs on (switches unwound under --switch-model unwind)
  AlgorithmRun run;
  SynthesisOptions options;
  Report report;
  nlohmann::ordered_json astra;  // the --json `astra_sim` object, null without a Chakra bundle
  // The --json `chakra_replay` object (what `tacos simulate` of the Chakra files gives), null
  // without Chakra files.
  nlohmann::ordered_json chakra_replay;
  // The --json `msccl_replay` object (what `tacos simulate` of the MSCCL file gives), null
  // without an MSCCL file.
  nlohmann::ordered_json msccl_replay;
};

// Validates the job against `full` (the loaded --topology), synthesizes, verifies, writes
// --out when given and computes the report. Throws Error with the command line's messages.
SynthesizeOutcome run_synthesize(const SynthesizeJob& job, const Topology& full);

// The object `tacos synthesize --json` prints (peak_memory_mib is measured now).
nlohmann::ordered_json synthesize_json(const SynthesizeJob& job, const Topology& full,
                                       const SynthesizeOutcome& outcome);

}  // namespace tacos::cli
