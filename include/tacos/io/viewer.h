#pragma once
// The interactive viewer (`tacos view`): one self-contained HTML page (inline script and style,
// no network) that shows one or two schedules on a topology: the topology drawn per family, a
// time slider and play button moving messages over links, per-link Gantt lanes, each NPU's
// completed share, a transfer's details on hover and a chunk's path on click; two schedules
// side by side on one time axis with both totals and their ratio. Documented in docs/view.md.
#include <string>
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/simulation/simulator.h"
#include "tacos/topology/topology.h"

namespace tacos {

// Above this many transfers a schedule is shown aggregated (each link's utilization over time
// as a heat map, each NPU's completed share per time bin) instead of message by message.
inline constexpr std::size_t kViewerDetailLimit = 5000;
// Time bins of the aggregated view.
inline constexpr int kViewerBins = 200;

struct ViewedSchedule {
  std::string label;           // "tacos", "ring", a file name
  const Algorithm* algorithm;  // not owned
  SimulationResult simulated;  // simulate(*algorithm, topology, model)
};

// The data the page embeds (a JSON object, documented in src/io/viewer.cpp), for the tests and
// for the page itself. `schedules` holds one or two, all on `topology`.
std::string viewer_data_json(const Topology& topology,
                             const std::vector<ViewedSchedule>& schedules);

// The whole page. Deterministic: equal inputs give byte-identical text.
std::string viewer_html(const Topology& topology, const std::vector<ViewedSchedule>& schedules);

}  // namespace tacos
