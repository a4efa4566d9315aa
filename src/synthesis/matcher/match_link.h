#pragma once
// A link as the matcher sees it: from one NPU to another, either a direct link or a route
// through switches (then its physical hops are kept by SwitchPorts, switch_ports.h).
#include <cstdint>

#include "tacos/common/types.h"

namespace tacos::detail {

struct MatchLink {
  NpuId src, dst;
  Time arrival_delay;     // latency + serialization (every hop of a switch route)
  Time busy_delay;        // per link model (a switch route: its first hop)
  double bandwidth_gbps;  // a batched message's serialization is that of all its bytes
  std::uint16_t delay_rank;
  std::int32_t hops_begin = -1;  // switch routes: into SwitchPorts' hops, else -1
  std::int32_t hops_end = -1;
  bool switch_route() const { return hops_begin >= 0; }
};

}  // namespace tacos::detail
