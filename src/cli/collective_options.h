#pragma once
// Flags that define a collective and how to synthesize it, shared by synthesize and compare.
#include <CLI/CLI.hpp>
#include <string>

#include "common_options.h"
#include "tacos/collective/collective.h"
#include "tacos/synthesis/request.h"
#include "tacos/synthesis/synthesizer.h"

namespace tacos::cli {

struct CollectiveOptions {
  std::string collective = "all-gather";
  std::string size = "64MiB";
  NpuId root = 0;
  bool root_given = false;
  std::string npus;
  bool npus_given = false;
  std::string all_reduce_mode = "pipelined";
  int trials = 1;
  int threads = 0;

  void add_to(CLI::App& command);
  // Validates the flags against the (unwound) topology and builds the collective.
  Collective make(const Topology& network, const SynthesisFlags& flags) const;
  Collective make(const Topology& network, int chunks_per_npu) const;
  SynthesisOptions synthesis_options(const SynthesisFlags& flags,
                                     const TopologyOptions& topology) const;
  // The library request for `algorithm` on `network`, validated as make() does.
  SynthesisRequest request(const Topology& network, const SynthesisFlags& flags,
                           const TopologyOptions& topology, const std::string& algorithm) const;
};

}  // namespace tacos::cli
