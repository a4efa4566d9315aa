#include "msccl_options.h"

#include "tacos/common/error.h"

namespace tacos::cli {

void MscclOptions::add_to(CLI::App& command) {
  max_steps_option_ =
      command
          .add_option(
              "--msccl-max-steps", max_steps,
              "Steps per MSCCL thread block (nops included) that the executor was built "
              "with (MSCCL_MAX_NUM_STEPS: 64 in msccl-executor-nccl, 256 in the older msccl "
              "runtime); longer links are split over channels. 2 .. 256")
          ->capture_default_str();
  protocol_option_ = command
                         .add_option("--msccl-protocol", protocol,
                                     "NCCL protocol written to the MSCCL file: Simple, LL or LL128")
                         ->capture_default_str();
}

std::string MscclOptions::given() const {
  if (max_steps_option_ != nullptr && max_steps_option_->count() > 0) return "--msccl-max-steps";
  if (protocol_option_ != nullptr && protocol_option_->count() > 0) return "--msccl-protocol";
  return "";
}

MscclWriteOptions MscclOptions::get() const {
  MscclWriteOptions options;
  if (max_steps < 2 || max_steps > 256)
    throw Error("--msccl-max-steps: expected 2 .. 256, got " + std::to_string(max_steps));
  options.max_steps = max_steps;
  try {
    options.protocol = parse_msccl_protocol(protocol);
  } catch (const Error& e) {
    throw Error(std::string("--msccl-protocol: ") + e.what());
  }
  return options;
}

}  // namespace tacos::cli
