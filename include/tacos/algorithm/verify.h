#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/topology/topology.h"

namespace tacos {

struct VerifyResult {
  bool ok = false;
  std::string error;         // the first violation, one line; empty when ok
  Time collective_time = 0;  // last transfer end that the replay saw
};

// Replays the algorithm's own times on `topology` (the topology it was made for): every
// transfer uses a link or a path through switches (SwitchRoutes) and lasts at least its hops'
// time under `model`; a transfer starts only after each chunk it carries is at its source; no
// link carries two transfers at once (tacos: [start, end); astra: [start, start + size/bw);
// through switches the first hop is checked, the simulator replays the others; a multicast
// group, well formed per check_multicast_groups, occupies its entry link once);
// every postcondition holds at the end.
//
// Violations are looked for in this order and the first one found is reported: per transfer
// (in index order) bad device, missing link, bad or repeated chunk id, a reduce transfer in a
// copy collective, negative start, too short; then causality (copies: lowest transfer index;
// reductions: earliest in the replay, see below); then link overlap (earliest conflict); then
// postconditions (lowest chunk id). Copy collectives: O(T log T + C + N) time and O(T + C + N)
// memory for T transfers, C chunks and N devices.
//
// Reduction collectives (reduce-scatter, all-reduce, reduce) are replayed as partial sums. Each
// (device, chunk) holds a set of contributors (members of the collective): at time 0 each of the
// chunk's sources holds {itself}, every other device (relays, switches, non-members) nothing.
// Events are taken in time order, arrivals before starts at equal times (so a send at t sees
// arrivals at t; equal-time arrivals in transfer index order). A transfer carries its sender's
// set as of its start; at its end a reduce transfer adds it to the receiver's set, a copy
// replaces the receiver's set with it. Errors, in the order of the replay (earliest time, then
// lowest transfer index):
//   "chunk 5: NPU 3 receives NPU 1's contribution twice (transfer 17 (2 -> 3, chunk 5) at
//    12.5 us)" (a reduce transfer whose set overlaps the receiver's: a double count);
//   "transfer 17 (4 -> 5, chunk 5) starts at 12 us and sends chunk 5 from NPU 4, which holds no
//    partial of it (...)" (a transfer, reduce or copy, from a device holding nothing).
// Postcondition: every destination ends with the full set of the chunk's contributors:
//   "chunk 5 at NPU 2 lacks the contribution of NPU 7" (lowest chunk, first destination, lowest
//   member missing). Sets are bitsets of M bits (M members) made lazily per chunk and shared by
// reference count, so time is O(T log T + T x M / 64) and memory O(T + C + N + S x M / 8) for S
// the most sets alive at once within one chunk (at most devices + transfers of that chunk).
VerifyResult verify_algorithm(const Algorithm& algorithm, const Topology& topology,
                              LinkModel model);

// Multicast groups (Transfer::multicast) of an algorithm whose transfers all have valid devices
// and routes on `topology`: fills `leader` with, per transfer, the lowest transfer index of its
// group (itself for a unicast transfer) and returns "" when every group is well formed: two or
// more transfers with the same sender, start and chunk list, none a reduce transfer, distinct
// receivers, every route's first link entering the same switch, declared multicast. Otherwise
// returns the first problem (lowest group id), one line naming a transfer.
std::string check_multicast_groups(const Algorithm& algorithm, const Topology& topology,
                                   std::vector<std::uint32_t>& leader);

// "NPU 3" or "switch 9" (devices past the topology's NPUs are switches).
std::string describe_device(const Topology& topology, DeviceId device);
// "transfer 17 (3 -> 4, chunk 5)", "transfer 2 (0 -> 1, chunks 4, 5)", long lists shortened.
std::string describe_transfer(const Algorithm& algorithm, std::size_t index);

}  // namespace tacos
