#pragma once
// tacos astra-run on a bundle written by `tacos workload` (docs/workload.md).
#include <string>

namespace tacos::cli {

// Runs DIR/astra with tacos's algorithms (system.json) and with each of ASTRA-sim's native
// ring, direct and halving-doubling (native-*.json), and prints per rank the step time and the
// exposed communication (wall time - compute time), then the comparison. `alone`: each distinct
// collective also runs alone (DIR/astra/alone) against tacos's time for it. Throws Error when
// the tacos run has a [critical] line or an unfinished rank, and for what the binary cannot run.
void run_workload_bundle(const std::string& dir, const std::string& astra_sim, bool json,
                         bool alone);

}  // namespace tacos::cli
