#pragma once
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/topology/topology.h"

namespace tacos {

struct SimulationResult {
  Time collective_time = 0;        // last message arrival (0 without transfers)
  std::vector<Time> link_busy_ps;  // per link id of the topology
  std::vector<Time> start;         // per transfer, simulated
  std::vector<Time> end;           // per transfer, simulated
};

// Executes an algorithm in dependency order, ignoring its recorded times: a message starts when
// it is first in its link's queue (transfers on a link keep their recorded start order, ties by
// index), the link is free and every chunk it carries is present at its source. A message
// between NPUs without a direct link crosses switches (SwitchRoutes) hop by hop,
// store-and-forward: a switch's out-link serves the messages that reached it first come first
// served (ties by source, destination and first chunk, so a re-timed schedule replays exactly).
// A multicast group (Transfer::multicast; check_multicast_groups, else Error) is one message:
// its lowest-index transfer stands in its entry link's queue and starts every copy; the entry
// hop is taken once, and when the message reaches the multicast switch each copy queues at its
// own next hop. Link timing per
// `model`: a message takes latency + size/bandwidth to arrive; the link is busy for all of it
// (tacos) or for size/bandwidth only (astra). Deterministic; O(T log T) for T transfers.
//
// When is chunk c present at device u for a message x leaving u:
//  - copy collectives (all-gather, broadcast, gather, scatter, all-to-all; no reduce transfers):
//    at time 0 when u is one of c's sources, otherwise when the first transfer carrying c to u
//    arrives. So an algorithm whose recorded times are as early as possible
//    (start = max(link free, chunks present)) is reproduced exactly.
//  - reductions (or whenever a transfer has `reduce` set), the recorded times give the data
//    flow: when x is a copy and a copy of c was recorded to reach u by x's recorded start, x
//    forwards that finished value and waits for the first copy of c to arrive at u; otherwise,
//    when reduce transfers carrying c were recorded to reach u by x's recorded start, x waits
//    for all of them (u sends or keeps the sum of those partials); otherwise at time 0 when u
//    is a contributor, else at the first arrival of c at u.
//
// Throws Error on a transfer with a device, link or chunk the topology or collective does not
// have, and on a deadlock, naming one stuck transfer and the chunk it waits for.
SimulationResult simulate(const Algorithm& algorithm, const Topology& topology, LinkModel model);

// The same transfers with the simulated start and end times, sorted by start; provenance kept
// and collective_time set to the simulated one.
Algorithm with_simulated_times(const Algorithm& algorithm, const SimulationResult& simulated);

}  // namespace tacos
