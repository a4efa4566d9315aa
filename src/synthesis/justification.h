#pragma once
// Forward-backward improvement ("justification", from resource-constrained project scheduling)
// of a copy schedule's message order. The messages and their routes stay; only the order in
// which each NPU's port sends them changes. The schedule is list-scheduled backwards in time
// (every message waits for the messages that need its chunks, the one that arrived last going
// first), which tells how late each message may start, and then forwards again with the
// earliest latest start first; a few rounds, each re-timed by the simulator, the fastest kept.
//
// Why: the greedy and the domain relay pick a port's next message by local rules (rarest
// chunk, relayed chunks first), so a message that a long chain of relays waits for can queue
// behind one that nothing needs soon (gains: docs/quality.md, "Measured choices").
#include <optional>

#include "tacos/algorithm/algorithm.h"
#include "tacos/common/link_model.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

// Beyond this many chunk deliveries the pass is not run: each round schedules every message
// twice and simulates once, and on the large tori the greedy's order had nothing to gain
// (docs/performance.md, "Measured costs").
constexpr double kJustifyMaxDeliveries = 262144;

// The justified schedule with the simulator's times, or nullopt where it does not apply (reduce
// or multicast transfers, too large) or does not finish earlier than `copy`.
std::optional<Algorithm> justify_copy_schedule(const Algorithm& copy, const Topology& topology,
                                               LinkModel model);

}  // namespace tacos::detail
