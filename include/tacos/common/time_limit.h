#pragma once
// The one ceiling on times inside tacos. Every single duration is bounded where it enters (a
// message at most 2^50 ps, a latency at most 1000 s, a compute node at most 2^50 ps), so a clock
// that is checked against this limit before each step can add one more duration, or the two
// phases of an All-Reduce can be summed, without leaving 64-bit picoseconds.
#include <string_view>

#include "tacos/common/types.h"

namespace tacos {

// 2^60 ps, about 13.3 days of simulated time.
inline constexpr Time kMaxScheduleTime = Time{1} << 60;
// The longest one message, latency or compute node may take: 2^50 ps, about 1126 s.
inline constexpr Time kMaxStepTime = Time{1} << 50;

// Throws Error "WHAT: the schedule runs past 2^60 ps (13.3 days of simulated time), ..." when
// `now` exceeds kMaxScheduleTime. Called by every event loop once per step.
void check_schedule_time(Time now, std::string_view what);

}  // namespace tacos
