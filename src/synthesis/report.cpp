#include "tacos/synthesis/report.h"

#include "tacos/common/units.h"

namespace tacos {

double bus_factor(CollectiveKind kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2 * (n - 1) / n;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
      return (n - 1) / n;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      return 1;
  }
  return 1;
}

double algbw_gbps(Bytes size, Time time) {
  if (time <= 0) return 0;
  return static_cast<double>(size) / kNcclBytesPerGB / (static_cast<double>(time) * 1e-12);
}

std::string to_string(BindingBound bound) {
  static constexpr const char* kNames[] = {"", "lower_bound", "store_and_forward_bound"};
  return kNames[static_cast<int>(bound)];
}

std::optional<LowerBound> bound_if_affordable(const Topology& full, const Topology& network,
                                              const Collective& collective) {
  if (full.npus() > kBoundNpuLimit) return std::nullopt;
  LowerBound bound = compute_lower_bound(full, collective);
  // Switches unwound into direct links (--switch-model unwind) forward nothing.
  if (network.switches() == 0 && full.switches() > 0) bound.store_and_forward_bound_us = 0;
  return bound;
}

Report make_report(Time time, const Collective& collective, const std::optional<LowerBound>& bound,
                   LinkModel model) {
  Report report;
  report.algbw_gbps = algbw_gbps(collective.size(), time);
  report.busbw_gbps = report.algbw_gbps * bus_factor(collective.kind(), collective.num_members());
  if (!bound) return report;
  const double us = to_micros(time);
  report.lower_bound_us = bound->lower_bound_us;
  if (bound->lower_bound_us > 0) {
    report.bound_ratio = us / bound->lower_bound_us;
    report.binding = BindingBound::kLowerBound;
    report.binding_bound_us = bound->lower_bound_us;
  }
  if (model == LinkModel::kTacos && bound->store_and_forward_bound_us > 0) {
    report.store_and_forward_bound_us = bound->store_and_forward_bound_us;
    report.store_and_forward_ratio = us / bound->store_and_forward_bound_us;
    if (bound->store_and_forward_bound_us > bound->lower_bound_us) {
      report.binding = BindingBound::kStoreAndForward;
      report.binding_bound_us = bound->store_and_forward_bound_us;
    }
  }
  if (report.binding_bound_us) report.binding_ratio = us / *report.binding_bound_us;
  return report;
}

Report make_report(const SynthesisRun& run, const Collective& collective,
                   const std::optional<LowerBound>& bound) {
  return make_report(run.result.collective_time, collective, bound,
                     run.result.algorithm.link_model);
}

BoundReport report_bound(const Topology& full, const Collective& collective, LinkModel model,
                         bool switches_unwound) {
  BoundReport r{collective, compute_lower_bound(full, collective), 0, 0};
  if (model != LinkModel::kTacos || switches_unwound) r.bound.store_and_forward_bound_us = 0;
  if (r.bound.bandwidth_bound_us > 0)
    r.algbw_at_bound_gbps = static_cast<double>(collective.size()) / kNcclBytesPerGB /
                            (r.bound.bandwidth_bound_us * 1e-6);
  r.busbw_at_bound_gbps =
      r.algbw_at_bound_gbps * bus_factor(collective.kind(), collective.num_members());
  return r;
}

}  // namespace tacos
