#pragma once
// Internal: devices grouped by their fast links, as the gossip bound (lower_bound.cpp) and the
// store-and-forward bound (store_and_forward_bound.cpp) take them.
#include <cstddef>
#include <vector>

#include "tacos/topology/topology.h"

namespace tacos::bounds_detail {

// Per device, its group when devices are joined by every link of at least `threshold` GB/s (a
// DGX node on its NVSwitch, a mesh row of fast links; +inf: every device alone). A group is
// named by one of its devices.
std::vector<int> groups_joined_by(const Topology& topology, double threshold);

// The thresholds to try: the `most` fastest distinct link bandwidths (past a few hundred the
// groups are single NPUs or nearly), then +inf.
std::vector<double> grouping_thresholds(const Topology& topology, std::size_t most);

// True when every reducing switch (Topology::is_reducing) is in a group that holds an NPU. The
// gossip arguments (a party combines what it holds for free; relays between parties only
// forward or copy) hold for such a grouping; a reducing switch between groups is a relay that
// combines, which they do not allow.
bool reductions_inside_groups(const Topology& topology, const std::vector<int>& group_of);

}  // namespace tacos::bounds_detail
