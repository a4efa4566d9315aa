#pragma once
// An All-Gather plan whose Reduce-Scatter is its time reversal, for the baselines whose every
// message goes to a neighbour (or over one switch route) and whose every NPU gets every other
// NPU's chunks once: bucket and node-direct. The plan is collected once; build() turns it into
// the requested collective (All-Reduce: the Reduce-Scatter, then the All-Gather), for the
// reductions the faster of two timings (build_by_steps, build_time_reversed).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tacos/synthesis/baselines.h"

namespace tacos::detail {

inline constexpr const char* kBaselinesBudgetFormat =
    "%.0f chunk transfers > %.0f, the baselines' budget";

class AllGatherPlan {
 public:
  // Throws BaselineOverBudget when N (N - 1) K chunk transfers (twice for All-Reduce) are over
  // `budget`, before anything is planned; its message is `over_budget_format` with the count
  // and the budget (two %.0f).
  static void require_within_budget(const Collective& collective,
                                    double budget = kBaselineTransferBudget,
                                    const char* over_budget_format = kBaselinesBudgetFormat);
  // Checks the budget (require_within_budget), which also bounds the routed schedule.
  explicit AllGatherPlan(const Collective& collective, double budget = kBaselineTransferBudget,
                         const char* over_budget_format = kBaselinesBudgetFormat);

  // One All-Gather message at logical step `step` (dependencies at smaller steps).
  void send(NpuId from, NpuId to, std::int64_t step, std::span<const ChunkId> chunks);

  // The collective's schedule, routed and compacted; Error for collectives other than
  // All-Gather, Reduce-Scatter and All-Reduce.
  Algorithm build(const Topology& topology, const Topology& timing, const Collective& collective,
                  const std::string& name, LinkModel model) const;

 private:
  // The messages in step order, reversed for Reduce-Scatter; each port keeps the steps' order.
  Algorithm build_by_steps(const Topology& topology, const Topology& timing,
                           const Collective& collective, const std::string& name,
                           LinkModel model) const;
  // Reduce-Scatter as the All-Gather's timed schedule on the transposed topology, run backwards;
  // All-Reduce as that Reduce-Scatter, then the All-Gather.
  Algorithm build_time_reversed(const Topology& topology, const Topology& timing,
                                const Collective& collective, const std::string& name,
                                LinkModel model) const;

  struct Message {
    NpuId from, to;
    std::int64_t step;
    std::uint32_t first, count;  // into pool_
  };
  std::vector<Message> messages_;
  std::vector<ChunkId> pool_;
  std::int64_t end_ = 0;  // one past the last step
  double budget_;
};

}  // namespace tacos::detail
