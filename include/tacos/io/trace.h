#pragma once
// A schedule as a Chrome trace event file (the JSON object format read by Perfetto's UI and
// chrome://tracing), documented in docs/formats.md ("Chrome trace"). The times are the
// simulator's (simulate()), so the last slice ends at the collective time tacos prints.
#include <string>

#include "tacos/algorithm/algorithm.h"
#include "tacos/common/link_model.h"
#include "tacos/simulation/simulator.h"
#include "tacos/topology/topology.h"

namespace tacos {

// The trace of `algorithm` timed by `simulated` (simulate(algorithm, topology, model)):
//  - a process per sending device (pid = device + 1, named "NPU d" or "switch d") and a thread
//    per link it sends on (tid = receiving device + 1, named "s -> d");
//  - an "X" slice per message: ts/dur in microseconds, args with the exact start_ps/end_ps,
//    src, dst, chunks, bytes, collective, step (schedule_timeline), reduce and the transfer's
//    index in the algorithm;
//  - a flow ("s" on the arriving message, "f" with bp "e" on the one forwarding or reducing
//    it; both at the middle of their slice, so that each binds to its slice) per
//    (chunk, arrival) a message depends on;
//  - counters ("C"): "bytes in flight" on a "collective" process (pid = devices + 1) and, on
//    each NPU's process, "completed share" (fraction of its postcondition chunks complete);
//  - "M" names and sort indexes, and `otherData` naming the topology, collective, size, link
//    model, collective time and tacos version.
// Deterministic: equal inputs give byte-identical text.
std::string algorithm_trace(const Algorithm& algorithm, const Topology& topology,
                            const SimulationResult& simulated, LinkModel model);

// Simulates `algorithm` on `topology` under `model` and writes its trace to `path` atomically.
void write_trace(const Algorithm& algorithm, const Topology& topology, LinkModel model,
                 const std::string& path);

}  // namespace tacos
