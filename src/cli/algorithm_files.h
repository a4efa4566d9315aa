#pragma once
// Reading algorithms from files in any format tacos speaks, for simulate, verify and convert.
#include <optional>
#include <string>

#include "common_options.h"
#include "tacos/algorithm/algorithm.h"
#include "tacos/io/chakra.h"

namespace tacos::cli {

enum class AlgorithmFormat { kJson, kMsccl, kChakra };
// .json -> tacos JSON, .xml -> MSCCL-IR XML, anything else -> a Chakra ET prefix or directory.
AlgorithmFormat detect_format(const std::string& path);
std::string to_string(AlgorithmFormat format);

struct LoadedAlgorithm {
  AlgorithmFormat format = AlgorithmFormat::kJson;
  Topology network;                    // unwound topology the algorithm runs on
  std::string topology_spec;           // as given, or "fc:N" when none was given
  std::optional<Algorithm> algorithm;  // absent for Chakra sets without chunk identity
  std::optional<EtTrace> trace;        // Chakra only
  bool nominal_size = false;           // sized 1 MiB per MSCCL chunk: times are not the real ones
  bool both_calls = false;  // MSCCL file for in-place and out-of-place calls: both were executed
};

// `topology` may be empty (no --topology): a fully connected topology of the file's NPU count is
// used then, which checks semantics but not the links of any real system.
// `nominal_size_if_missing`: an MSCCL file without sizes and no `size` gets 1 MiB per MSCCL
// chunk (for checks that do not depend on the size) instead of an error.
LoadedAlgorithm load_algorithm_file(const std::string& path, const TopologyOptions& topology,
                                    bool topology_given, LinkModel model, std::optional<Bytes> size,
                                    bool nominal_size_if_missing = false);

}  // namespace tacos::cli
