#pragma once
// A directed multigraph-free network: devices 0..npus-1 are NPUs, npus..devices-1 are switches.
// Links are stored once, sorted by (src, dst), with CSR indexes for out- and in-edges.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tacos/common/types.h"
#include "tacos/topology/shape.h"

namespace tacos {

class SwitchRoutes;

// The routes of one Topology object, built on first use (thread-safe) and kept. A copy or a
// moved-to topology starts with none of its own: routes refer to the object they were built for.
class SwitchRoutesCache {
 public:
  SwitchRoutesCache();
  SwitchRoutesCache(const SwitchRoutesCache&);
  SwitchRoutesCache& operator=(const SwitchRoutesCache&);
  ~SwitchRoutesCache();
  const SwitchRoutes& get(const class Topology& topology) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct Link {
  DeviceId src = 0;
  DeviceId dst = 0;
  double bandwidth_gbps = 0;  // GB/s, 2^30 B/s
  Time latency_ps = 0;
};

class Topology {
 public:
  Topology() = default;
  // Validates (ids in range, bandwidth > 0, latency >= 0, no self loops, no duplicate
  // src->dst pair) and builds the CSR indexes. Throws Error naming the first bad link.
  Topology(int npus, int switches, std::vector<Link> links, std::string name = "");

  int npus() const { return npus_; }
  int switches() const { return switches_; }
  int devices() const { return npus_ + switches_; }
  bool is_switch(DeviceId d) const { return d >= npus_; }
  int num_links() const { return static_cast<int>(links_.size()); }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // What built it (shape.h); copies, transposed, unwound and switch-route views keep it.
  const TopologyShape& shape() const { return shape_; }
  void set_shape(TopologyShape shape) { shape_ = std::move(shape); }

  // Multicast switches (NVLink SHARP, InfiniBand multicast): a message entering one is copied
  // to several out-ports (docs/design.md "Switch fabrics", Transfer::multicast). Switches are
  // unicast unless set; a copy keeps the flags, a transposed or unwound topology does not.
  bool is_multicast(DeviceId d) const {
    return is_switch(d) && !multicast_.empty() && multicast_[d - npus_] != 0;
  }
  // Throws Error when `d` is not a switch of this topology.
  void set_multicast(DeviceId d, bool multicast = true);
  int multicast_switches() const;

  // Reducing switches (NVLink SHARP, InfiniBand SHARP; docs/design.md "Switch fabrics"): such a
  // switch is a device that holds data for the collective. Partial sums sent to it are added up
  // inside it, and it sends what it holds on any out-port, to as many receivers as the schedule
  // says. Switches do not reduce unless set; a copy keeps the flag, an unwound topology does not.
  bool is_reducing(DeviceId d) const {
    return is_switch(d) && !reducing_.empty() && reducing_[d - npus_] != 0;
  }
  // Throws Error when `d` is not a switch of this topology.
  void set_reducing(DeviceId d, bool reducing = true);
  int reducing_switches() const;

  const Link& link(LinkId id) const { return links_[id]; }
  const std::vector<Link>& links() const { return links_; }
  // Link ids leaving / entering a device (out-links are sorted by dst).
  std::span<const LinkId> out_links(DeviceId d) const;
  std::span<const LinkId> in_links(DeviceId d) const;
  // The link src -> dst, or -1 (binary search over src's out-links).
  LinkId find_link(DeviceId src, DeviceId dst) const;

  // latency + bytes / bandwidth, in picoseconds (rounded up).
  Time transfer_time(LinkId id, Bytes bytes) const;

  // NPU-only topology for synthesis: every switch with P attached NPUs, port bandwidth B and
  // latency L becomes a direct link between every ordered NPU pair with bandwidth B/(P-1) and
  // latency 2L (the TACOS paper's unwinding). A pair that already has a direct link keeps the
  // faster of the two. Returns a copy when there are no switches.
  Topology unwind_switches() const;

  // Routes between NPUs through switches (switch_routes.h), computed once per object.
  const SwitchRoutes& switch_routes() const { return routes_cache_.get(*this); }

  // Per device: 1 if it can be reached from `from` (forward) or can reach it (!forward).
  std::vector<char> reachable(DeviceId from, bool forward) const;

  // Throws Error naming an NPU that cannot reach (or be reached from) NPU 0 when the NPUs are
  // not strongly connected (switches may relay).
  void require_strongly_connected() const;

 private:
  // Sets one switch's entry of a per-switch capability list (allocated on first use).
  void set_switch_flag(std::vector<char>& flags, DeviceId d, bool on, const char* capability);

  int npus_ = 0;
  int switches_ = 0;
  std::string name_;
  TopologyShape shape_;
  std::vector<Link> links_;
  std::vector<char> multicast_;      // per switch (index d - npus), empty when none is multicast
  std::vector<char> reducing_;       // per switch (index d - npus), empty when none reduces
  std::vector<LinkId> out_offsets_;  // devices + 1
  std::vector<LinkId> in_offsets_;   // devices + 1
  std::vector<LinkId> out_index_;    // 0..links-1: out-links are contiguous after sorting
  std::vector<LinkId> in_index_;     // link ids grouped by dst
  SwitchRoutesCache routes_cache_;
};

}  // namespace tacos
