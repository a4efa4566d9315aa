#pragma once
// Flags shared by every subcommand that takes --topology.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "tacos/common/link_model.h"
#include "tacos/topology/topology.h"

namespace tacos::cli {

struct TopologyOptions {
  std::string topology = "torus2d:8x8";
  std::string bandwidth;  // empty: 50 GB/s (DGX kinds: their datasheet numbers)
  std::string latency;    // empty: 0.5us (DGX kinds: their datasheet numbers)
  std::string switch_model = "device";
  void add_to(CLI::App& command);
  // For commands that read an algorithm file: --topology is optional (no default shown) and
  // sets `given` when used; `given` must live as long as `command`.
  void add_optional_to(CLI::App& command, bool& given, const std::string& description);
  // Generator spec or YAML file -> topology (switch devices kept).
  Topology load() const;
  // What algorithms run on: `full` itself (switches as devices) or, with --switch-model
  // unwind, the TACOS paper's NPU-only unwinding.
  Topology network(const Topology& full) const;
  bool unwound() const { return switch_model == "unwind"; }
};

struct SynthesisFlags {
  std::string chunks_per_npu = "1";  // a whole number or "auto"
  std::uint64_t seed = 1;
  std::string link_model = "tacos";
  std::string portfolio = "on";   // --portfolio on|off (synthesize and compare only)
  std::string auto_budget = "0";  // --auto-budget SECONDS (synthesize only); 0: no limit
  void add_to(CLI::App& command);
  // --portfolio: for the commands that run `--algorithm tacos` (synthesize, compare).
  void add_portfolio_to(CLI::App& command);
  // true for "on", false for "off"; Error on anything else.
  bool portfolio_on() const;
  // --auto-budget: for `synthesize` (SynthesisRequest::auto_budget_seconds).
  void add_auto_budget_to(CLI::App& command);
  // The --auto-budget seconds (0: none); Error unless a number >= 0.
  double auto_budget_seconds() const;
  LinkModel model() const { return parse_link_model(link_model); }
  // --chunks-per-npu auto: the runner searches K (algorithm_runner.h).
  bool auto_chunks() const { return chunks_per_npu == "auto"; }
  // K as given (1 for auto, where the search starts); Error on anything else.
  int chunks() const;
};

}  // namespace tacos::cli
