#pragma once
// The numbers every run is judged by: algorithm and bus bandwidth as nccl-tests reports them, and
// the distance to the lower bounds, both of them, with the larger valid one named as the one the
// run is judged against. synthesize, compare, simulate and bound all report through here.
#include <optional>
#include <string>

#include "tacos/bounds/lower_bound.h"
#include "tacos/collective/collective.h"
#include "tacos/common/link_model.h"
#include "tacos/common/types.h"
#include "tacos/synthesis/request.h"
#include "tacos/topology/topology.h"

namespace tacos {

// Bandwidths in nccl-tests' convention (its doc/PERFORMANCE.md and GetBw): GB/s meaning 1e9 B/s,
// algbw = the collective's size / time (tacos's size is the buffer nccl-tests counts: the output
// for All-Gather and Gather, the input for Reduce-Scatter, Scatter and All-to-All), busbw = algbw
// x the collective's bus factor. Link bandwidths given as input stay in 2^30 B/s (ASTRA-sim's
// convention).
inline constexpr double kNcclBytesPerGB = 1e9;

// nccl-tests' bus factor for n ranks: All-Reduce 2(n-1)/n; Reduce-Scatter, All-Gather,
// All-to-All, Gather, Scatter (n-1)/n; Broadcast, Reduce 1.
double bus_factor(CollectiveKind kind, int ranks);
// size / time in 1e9 B/s; 0 when time is not positive.
double algbw_gbps(Bytes size, Time time);

// Which bound a run is judged against: the larger of those that hold for its link model.
enum class BindingBound { kNone, kLowerBound, kStoreAndForward };
// "lower_bound" / "store_and_forward_bound" (the report keys' stems); "" for kNone.
std::string to_string(BindingBound bound);

struct Report {
  double algbw_gbps = 0;                 // size / collective time, GB/s (1e9 B/s, nccl-tests)
  double busbw_gbps = 0;                 // algbw x bus_factor, GB/s (1e9 B/s, nccl-tests)
  std::optional<double> lower_bound_us;  // the cut and latency bound (both link models)
  std::optional<double> bound_ratio;     // collective time / lower bound
  // Under the tacos link model where it applies (LowerBound::store_and_forward_bound_us).
  std::optional<double> store_and_forward_bound_us;
  std::optional<double> store_and_forward_ratio;  // collective time / that bound
  // The larger of the two bounds above (ties: the lower bound), and the time's ratio to it:
  // where the store-and-forward bound lies below the cut bound (fat-trees), it is reported but
  // does not bind.
  BindingBound binding = BindingBound::kNone;
  std::optional<double> binding_bound_us;
  std::optional<double> binding_ratio;
};

// The exact cut bound costs max-flows; beyond kBoundNpuLimit NPUs only `tacos bound` runs it.
inline constexpr int kBoundNpuLimit = 4096;
// `full`: the topology with its switch devices; `network`: what the run is timed on. The
// store-and-forward bound is dropped when `network` has no switch devices (switches unwound:
// direct links forward nothing). nullopt beyond kBoundNpuLimit NPUs.
std::optional<LowerBound> bound_if_affordable(const Topology& full, const Topology& network,
                                              const Collective& collective);

// `model`: the store-and-forward bound holds under the tacos link model only.
Report make_report(Time collective_time, const Collective& collective,
                   const std::optional<LowerBound>& bound, LinkModel model);
Report make_report(const SynthesisRun& run, const Collective& collective,
                   const std::optional<LowerBound>& bound);

// What `tacos bound` reports: the bounds, and the bandwidths a run at the bandwidth bound has.
struct BoundReport {
  Collective collective;
  LowerBound bound;                // store_and_forward_bound_us 0 where it does not hold
  double algbw_at_bound_gbps = 0;  // size / bandwidth bound; 0 when that bound is 0
  double busbw_at_bound_gbps = 0;  // algbw x the bus factor
};
// The bounds of `collective` on `full` (switch devices kept: they are cut vertices), with the
// store-and-forward bound kept only under the tacos link model with switches timed as devices.
BoundReport report_bound(const Topology& full, const Collective& collective, LinkModel model,
                         bool switches_unwound);

}  // namespace tacos
