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
  // The first --msccl-* flag given on the command line ("" when none), so that commands that
  // write no MSCCL file can say so instead of ignoring it.
  std::string given() const;

 private:
  CLI::Option* max_steps_option_ = nullptr;
  CLI::Option* protocol_option_ = nullptr;
};

}  // namespace tacos::cli
