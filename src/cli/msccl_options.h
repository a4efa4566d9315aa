#pragma once
// Flags for commands that write MSCCL-IR XML (synthesize --format msccl, convert OUT.xml).
#include <CLI/CLI.hpp>
#include <string>

#include "tacos/io/msccl_xml.h"

namespace tacos::cli {

struct MscclOptions {
  int max_steps = 64;  // msccl-executor-nccl's default MSCCL_MAX_NUM_STEPS
  std::string protocol = "Simple";
  void add_to(CLI::App& command);
  // Error on a bad protocol or step count.
  MscclWriteOptions get() const;
};

}  // namespace tacos::cli
