#include "report.h"

#include <sys/resource.h>

#include "tacos/common/units.h"

namespace tacos::cli {

std::optional<LowerBound> bound_if_affordable(const Topology& full, const Collective& collective) {
  if (full.npus() > kBoundNpuLimit) return std::nullopt;
  return compute_lower_bound(full, collective);
}

Report make_report(const AlgorithmRun& run, const Collective& collective,
                   const std::optional<LowerBound>& bound) {
  Report report;
  const Time time = run.result.collective_time;
  if (time > 0)
    report.algbw_gbps =
        static_cast<double>(collective.size()) / kBytesPerGB / (static_cast<double>(time) * 1e-12);
  if (bound) {
    report.lower_bound_us = bound->lower_bound_us;
    if (bound->lower_bound_us > 0) report.bound_ratio = to_micros(time) / bound->lower_bound_us;
  }
  return report;
}

double peak_memory_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace tacos::cli
