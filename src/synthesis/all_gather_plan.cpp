#include "all_gather_plan.h"

#include <algorithm>
#include <cstdio>

#include "tacos/common/error.h"

namespace tacos::detail {

AllGatherPlan::AllGatherPlan(const Collective& collective) {
  const double n = collective.num_members();
  const double transfers = n * (n - 1) * collective.chunks_per_npu() *
                           (collective.kind() == CollectiveKind::kAllReduce ? 2 : 1);
  if (transfers > kBaselineTransferBudget) {
    char text[160];
    std::snprintf(text, sizeof text, "%.0f chunk transfers > %.0f, the baselines' budget",
                  transfers, kBaselineTransferBudget);
    throw BaselineOverBudget(text);
  }
}

void AllGatherPlan::send(NpuId from, NpuId to, std::int64_t step, std::span<const ChunkId> chunks) {
  if (chunks.empty()) return;
  const auto first = static_cast<std::uint32_t>(pool_.size());
  pool_.insert(pool_.end(), chunks.begin(), chunks.end());
  messages_.push_back({from, to, step, first, static_cast<std::uint32_t>(chunks.size())});
  end_ = std::max(end_, step + 1);
}

Algorithm AllGatherPlan::build(const Topology& topology, const Topology& timing,
                               const Collective& collective, const std::string& name,
                               LinkModel model) const {
  LogicalSchedule schedule(topology, timing, collective);
  auto chunks_of = [&](const Message& m) {
    return std::span<const ChunkId>(pool_.data() + m.first, m.count);
  };
  auto all_gather = [&](std::int64_t base) {
    for (const Message& m : messages_) schedule.send(m.from, m.to, base + m.step, chunks_of(m));
    return base + end_;
  };
  // Every chunk's spreading out-tree becomes an in-tree to its owner.
  auto reduce_scatter = [&](std::int64_t base) {
    for (const Message& m : messages_)
      schedule.send(m.to, m.from, base + end_ - 1 - m.step, chunks_of(m), /*reduce=*/true);
    return base + end_;
  };
  if (!run_phases(collective.kind(), all_gather, reduce_scatter))
    throw Error(name + " is defined for all-gather, reduce-scatter and all-reduce, not " +
                to_string(collective.kind()));
  return schedule.build(name, model);
}

}  // namespace tacos::detail
