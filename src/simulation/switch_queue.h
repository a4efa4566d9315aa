#pragma once
// The order in which a link leaving a switch serves the messages that reached the switch: first
// come first served, ties by (source, destination, first chunk), never by the order the messages
// were made in, so that a re-timed (re-sorted) schedule and a Chakra replay of it serve them
// alike. Used by the port engine (port_engine.h) for the simulator and both replays.
#include <cstdint>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

#include "tacos/common/types.h"

namespace tacos::detail {

struct SwitchArrival {
  Time arrival;
  DeviceId src, dst;
  ChunkId chunk;
  std::uint32_t id;  // the caller's message: last tie-break only
  bool operator>(const SwitchArrival& o) const {
    return std::tie(arrival, src, dst, chunk, id) >
           std::tie(o.arrival, o.src, o.dst, o.chunk, o.id);
  }
};

using SwitchQueue =
    std::priority_queue<SwitchArrival, std::vector<SwitchArrival>, std::greater<SwitchArrival>>;

}  // namespace tacos::detail
