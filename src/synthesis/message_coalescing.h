#pragma once
// Message coalescing: a pass over a copy schedule (no reduce transfers) on direct links that
// merges a link's next message into the one before it where the merge delays nothing. Run on the
// greedy's copy schedules and on the routed unicast flows (tacos_synthesizer.cpp).
//
// Why: the greedy sends one chunk per message, and under the tacos link model every message holds
// its link for the latency as well. Where chunks are small next to the latency (many NPUs,
// All-Gather at K = 1: torus2d:32x32 moves 64 KiB chunks in 1.22 us against 0.5 us of latency) the
// links spend a third of their time in latency. Two messages of one link become one when the
// second's chunks were already at the sender when the first started and the first's chunks, now
// arriving a serialization later, still arrive before anything waits for them (their free slack,
// counting that every later message may itself be merged forward); the link then frees a latency
// earlier. A few rounds, each re-timed by the simulator (gains: docs/quality.md, "Measured
// choices").
#include <optional>

#include "tacos/algorithm/algorithm.h"
#include "tacos/common/link_model.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

// Beyond these the pass is not run (its tables hold NPUs x chunks entries and a few words per
// transfer, and each round simulates the schedule).
constexpr double kCoalesceMaxPresence = 16e6;
constexpr double kCoalesceMaxTransfers = 4e6;

// The coalesced schedule with the simulator's times, or nullopt where it does not apply (switch
// devices, reduce or multicast transfers, the astra link model, where a link is busy for the
// bytes only and merging saves nothing) or does not finish earlier than `copy` simulates.
std::optional<Algorithm> coalesce_messages(const Algorithm& copy, const Topology& topology,
                                           LinkModel model);

}  // namespace tacos::detail
