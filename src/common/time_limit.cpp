#include "tacos/common/time_limit.h"

#include <string>

#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos {

void check_schedule_time(Time now, std::string_view what) {
  if (now <= kMaxScheduleTime) return;
  throw Error(std::string(what) + ": the schedule runs past " + format_micros(now) +
              " us, beyond the 2^60 ps (13.3 days) tacos times may reach (64-bit picoseconds): "
              "use fewer chunks, a smaller latency or a larger bandwidth");
}

}  // namespace tacos
