#pragma once
#include <cstddef>
#include <string>

#include "tacos/algorithm/algorithm.h"
#include "tacos/topology/topology.h"

namespace tacos {

struct VerifyResult {
  bool ok = false;
  std::string error;         // the first violation, one line; empty when ok
  Time collective_time = 0;  // last transfer end that the replay saw
};

// Replays the algorithm's own times on `topology` (the topology it was made for, switches
// unwound): every transfer uses an existing link and lasts at least the link's time under
// `model`; a transfer starts only after each chunk it carries is at its source; no link
// carries two transfers at once (tacos: [start, end); astra: [start, start + size/bw));
// every postcondition holds at the end.
//
// Violations are looked for in this order and the first one found is reported: per transfer
// (in index order) bad device, missing link, bad or repeated chunk id, negative start, too
// short; then causality (lowest transfer index); then link overlap (earliest conflict); then
// postconditions (lowest chunk id). Runs in O(T log T + C + N) time and O(T + C + N) memory for
// T transfers, C chunks and N devices. Reduction collectives (partial sums) are not verified
// yet: they give ok = false with a message saying so.
VerifyResult verify_algorithm(const Algorithm& algorithm, const Topology& topology,
                              LinkModel model);

// "NPU 3" or "switch 9" (devices past the topology's NPUs are switches).
std::string describe_device(const Topology& topology, DeviceId device);
// "transfer 17 (3 -> 4, chunk 5)", "transfer 2 (0 -> 1, chunks 4, 5)", long lists shortened.
std::string describe_transfer(const Algorithm& algorithm, std::size_t index);

}  // namespace tacos
