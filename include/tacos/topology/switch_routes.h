#pragma once
// Where a message between two NPUs goes when switches are devices (docs/design.md "Switch
// fabrics"): over the direct link when there is one, otherwise up the sender's port, through
// switches only, and down the receiver's port, store-and-forward at every switch. Among equally
// short switch paths (spines of a fat-tree) the choice is spread by a hash of (sender, receiver),
// the way ECMP spreads flows, and is the same every run.
#include <cstdint>
#include <span>
#include <vector>

#include "tacos/topology/topology.h"

namespace tacos {

// Build it through Topology::switch_routes(), which computes it once per topology object.
class SwitchRoutes {
 public:
  // Throws Error when the routes would not fit in memory (too many NPU pairs through switches).
  explicit SwitchRoutes(const Topology& topology);

  // The links a message from `src` to `dst` (NPUs, src != dst) crosses in order; empty when
  // neither a direct link nor a switch-only path joins them.
  std::span<const LinkId> route(NpuId src, NpuId dst) const;

  // NPUs `src` reaches through switches only (no direct link), ascending; switch_route(src, i)
  // is the route to the i-th of them.
  std::span<const NpuId> switch_peers(NpuId src) const;
  std::span<const LinkId> switch_route(NpuId src, int peer_index) const;

  std::int64_t num_switch_pairs() const { return static_cast<std::int64_t>(peer_.size()); }

 private:
  const Topology* topology_ = nullptr;
  std::vector<std::int64_t> src_begin_;    // npus + 1, into peer_
  std::vector<NpuId> peer_;                // per (src, peer)
  std::vector<std::int64_t> route_begin_;  // per (src, peer) + 1, into links_
  std::vector<LinkId> links_;
  std::vector<LinkId> direct_;  // direct_[l] == l: a direct link's one-link route points here
};

// The NPUs alone, with a link for every direct link and every switch route (bandwidth of the
// route's slowest hop, latency of all hops together): what NPU-level planners (the baselines)
// route over. Times are then taken on the real topology, where routes share switch ports.
Topology switch_route_view(const Topology& topology);

}  // namespace tacos
