#pragma once
// The command line runs algorithms through the library's one request (tacos/synthesis/request.h).
#include <string>

#include "tacos/common/error.h"
#include "tacos/synthesis/request.h"

namespace tacos::cli {

using AlgorithmRun = SynthesisRun;

// Error "FLAG: unknown algorithm 'x' (expected ...)" unless `name` is in the registry.
inline void require_algorithm(const std::string& flag, const std::string& name) {
  try {
    find_algorithm(name);
  } catch (const UnknownAlgorithm& e) {
    throw Error(flag + ": " + e.what());
  }
}

// The --algorithm help text, from the registry.
inline std::string algorithm_help() {
  std::string text = "tacos (synthesized) or a baseline:";
  for (const AlgorithmInfo& info : algorithm_registry())
    if (info.name != "tacos") text += " " + info.name + ",";
  text.pop_back();
  return text;
}

// Every registered name, comma-separated (compare's default --algorithms).
inline std::string algorithm_list() {
  std::string text;
  for (const AlgorithmInfo& info : algorithm_registry())
    text += (text.empty() ? "" : ",") + info.name;
  return text;
}

}  // namespace tacos::cli
