#pragma once
// Reduction collectives from copy schedules: Reduce-Scatter is the All-Gather of the transposed
// topology run backwards (Reduce likewise from Broadcast); every transfer then carries a
// partial sum that its receiver reduces.
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

// An empty schedule of `collective` with `from`'s synthesizer, seed and link model.
Algorithm with_provenance(Collective collective, const Algorithm& from);

// The same devices with every link reversed (bandwidth and latency kept).
Topology transpose(const Topology& topology);

// Keeps, for every (NPU, chunk), only the first delivery, and only where the NPU is one of the
// chunk's destinations or forwards the chunk later: the copy schedule becomes a tree per chunk.
Algorithm prune_to_trees(const Algorithm& copy);

// Runs a copy schedule on the transposed topology backwards in time and direction; the result
// implements `reduction` (same chunk numbering) with reduce transfers.
Algorithm reverse_into_reduction(const Algorithm& copy_on_transpose, const Collective& reduction);

// Re-times a schedule to start every transfer as early as its dependencies and its link's
// order allow (the simulator's rules). Never later than the recorded times.
// Returns the busiest link's total busy time: a link serves one message at a time, so no order
// of these same messages (re-timed by the simulator) finishes earlier than that.
Time compact(Algorithm& algorithm, const Topology& topology, LinkModel model);

// How long the transfers keep each link busy in all (per link id of `topology`), as the
// simulator counts it (a multicast message's entry hop once). Any timing of these transfers
// by the simulator, in any order, ends no earlier than the largest of them.
std::vector<Time> link_loads(const Algorithm& algorithm, const Topology& topology, LinkModel model);

// The same transfers with chunk ids renumbered through `map` (old id -> new id), as part of
// `target`'s collective; times shifted by `offset`.
Algorithm remap_chunks(const Algorithm& algorithm, const Collective& target,
                       const std::vector<ChunkId>& map, Time offset);

// Appends every transfer of `part` to `whole` (same chunk numbering), times shifted by `offset`.
void append(Algorithm& whole, const Algorithm& part, Time offset = 0);

}  // namespace tacos::detail
