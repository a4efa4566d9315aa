#pragma once
// How a link is timed (docs/design.md, "Units and numbers").
#include <string>
#include <string_view>

#include "tacos/common/types.h"

namespace tacos {

enum class LinkModel {
  kTacos,  // the link is busy for latency + size/bandwidth (the TACOS paper's TEN)
  kAstra,  // busy for size/bandwidth only; the chunk arrives latency later (ASTRA-sim)
};

LinkModel parse_link_model(std::string_view text);  // "tacos" | "astra", else Error
std::string to_string(LinkModel model);

// How long a link with this latency and serialization time stays busy for one message.
inline Time link_busy_time(LinkModel model, Time latency_ps, Time serialization_ps) {
  return model == LinkModel::kTacos ? latency_ps + serialization_ps : serialization_ps;
}

}  // namespace tacos
