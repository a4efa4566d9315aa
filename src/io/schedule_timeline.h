#pragma once
// What a simulated schedule looks like over time, for the pictures that show it (the Chrome
// trace, the HTML viewer): which arrivals each message forwards or reduces, its step, and when
// each NPU completes its share of the collective. Internal to src/io.
#include <cstdint>
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/simulation/simulator.h"

namespace tacos::detail {

struct ScheduleTimeline {
  // Transfers by simulated (start, index).
  std::vector<std::uint32_t> order;
  // Per transfer x, in CSR form (feed_offsets has transfers + 1 entries): the transfers whose
  // arrival at x's sender x forwards or reduces, one entry per (chunk, arrival), by arrival.
  // For a chunk of x, following the simulator's rules (simulation/simulator.h): the first copy
  // of it to reach the sender by x's start when there is one (a finished value is forwarded),
  // else every partial sum of it that reached the sender by then; none when the sender held it
  // from the start.
  std::vector<std::uint32_t> feed_offsets;
  std::vector<std::uint32_t> feeds;
  // Per transfer: 0 when every chunk it carries was at its sender from the start, else one more
  // than the largest step among its feeds.
  std::vector<std::int32_t> step;
  // Per NPU, ascending: when each chunk it must end with (Collective::destinations) is
  // complete there: its first copy's arrival, else (a reduction's owner) its last partial
  // sum's arrival, else 0 (the NPU held it from the start).
  std::vector<std::vector<Time>> completions;
};

// `simulated` is simulate(algorithm, ...)'s result (per-transfer start and end).
ScheduleTimeline schedule_timeline(const Algorithm& algorithm, const SimulationResult& simulated);

}  // namespace tacos::detail
