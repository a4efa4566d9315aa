#pragma once
// A one-way ring of 3 NPUs, 1 GB/s (2^30 B/s) and 1 us links, All-Gather of 3 MiB: a chunk
// (1 MiB) takes 1 us + 2^20 / 2^30 s = 977.5625 us per hop, and the ring's two steps end at
// 977.5625 and 1955.125 us. Shared by the trace and the viewer tests.
#include "tacos/algorithm/algorithm.h"
#include "tacos/collective/collective.h"
#include "tacos/topology/topology.h"

namespace tacos_test {

struct OneWayRing {
  tacos::Topology topology;
  tacos::Algorithm algorithm;
  OneWayRing()
      : topology(3, 0,
                 {tacos::Link{0, 1, 1.0, 1000000}, tacos::Link{1, 2, 1.0, 1000000},
                  tacos::Link{2, 0, 1.0, 1000000}},
                 "one-way-ring:3"),
        algorithm(tacos::Collective::make(tacos::CollectiveKind::kAllGather, 3, 3 << 20, 1)) {
    for (int step = 0; step < 2; ++step)
      for (int u = 0; u < 3; ++u)
        algorithm.add_transfer(u, (u + 1) % 3, 0, 0,
                               static_cast<tacos::ChunkId>((u + 3 - step) % 3));
  }
};

}  // namespace tacos_test
