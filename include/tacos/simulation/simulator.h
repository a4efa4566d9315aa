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
// index), the link is free and every chunk it carries is present at its source. Link timing per
// `model`: a message takes latency + size/bandwidth to arrive; the link is busy for all of it
// (tacos) or for size/bandwidth only (astra). Deterministic; O(T log T) for T transfers.
//
// When is chunk c present at device u for a message x leaving u:
//  - if reduce transfers deliver c to u with a recorded end <= x's recorded start (u collects
//    partial sums before sending), once all of those have arrived;
//  - otherwise at time 0 when u is one of c's sources (contributors for reductions);
//  - otherwise when the first transfer carrying c to u arrives.
// For copy collectives only the last two apply, so an algorithm whose recorded times are as early
// as possible (start = max(link free, chunks present)) is reproduced exactly.
//
// Throws Error on a transfer with a device, link or chunk the topology or collective does not
// have, and on a deadlock, naming one stuck transfer and the chunk it waits for.
SimulationResult simulate(const Algorithm& algorithm, const Topology& topology, LinkModel model);

}  // namespace tacos
