#pragma once
// Internal: distances the bounds read (lower_bound.cpp, rooted_relay_bound.cpp).
#include <limits>
#include <vector>

#include "tacos/common/types.h"
#include "tacos/topology/topology.h"

namespace tacos::bounds_detail {

inline constexpr Time kUnreachable = std::numeric_limits<Time>::max();

// Shortest-path latency from one device (forward) or to one device (backward), kUnreachable
// where there is no path; plain BFS when every link has the same latency. The last distances
// each way are kept, so asking again for the same device costs nothing.
class Latencies {
 public:
  explicit Latencies(const Topology& t);
  const std::vector<Time>& from(DeviceId s) { return get(s, true); }
  const std::vector<Time>& to(DeviceId d) { return get(d, false); }

 private:
  struct Cached {
    DeviceId root = -1;
    std::vector<Time> dist;
  };
  const std::vector<Time>& get(DeviceId root, bool forward);
  std::vector<Time> bfs(DeviceId root, bool forward) const;
  std::vector<Time> dijkstra(DeviceId root, bool forward) const;

  const Topology& t_;
  bool uniform_ = true;
  Cached forward_, backward_;
};

// Links crossed from `source` to each device (forward: along the links; else: from each device
// to `source`), -1 where there is no path.
std::vector<int> hops_from(const Topology& t, DeviceId source, bool forward = true);

}  // namespace tacos::bounds_detail
