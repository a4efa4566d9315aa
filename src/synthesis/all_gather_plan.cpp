#include "all_gather_plan.h"

#include <algorithm>

#include "reduction.h"
#include "tacos/common/error.h"

namespace tacos::detail {

AllGatherPlan::AllGatherPlan(const Collective& collective, double budget,
                             const char* over_budget_format)
    : budget_(budget) {
  require_within_budget(collective, budget, over_budget_format);
}

void AllGatherPlan::require_within_budget(const Collective& collective, double budget,
                                          const char* over_budget_format) {
  const double n = collective.num_members();
  const double transfers = n * (n - 1) * collective.chunks_per_npu() *
                           (collective.kind() == CollectiveKind::kAllReduce ? 2 : 1);
  require_transfers_within(transfers, budget, over_budget_format);
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
  Algorithm stepped = build_by_steps(topology, timing, collective, name, model);
  if (collective.kind() == CollectiveKind::kAllGather) return stepped;
  Algorithm timed = build_time_reversed(topology, timing, collective, name, model);
  return timed.collective_time < stepped.collective_time ? std::move(timed) : std::move(stepped);
}

Algorithm AllGatherPlan::build_by_steps(const Topology& topology, const Topology& timing,
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
  return schedule.build(name, model, budget_);
}

// Reversing the steps alone lets the simulator start every partial sum at once (a member's own
// data is ready at time 0), and on dgx-h100:64 the first block across each NIC then waits
// behind later blocks' partial sums. Run backwards in time, the All-Gather's timed schedule on
// the transposed topology keeps its order on every port, and so its time (re-timing never makes
// a transfer later).
Algorithm AllGatherPlan::build_time_reversed(const Topology& topology, const Topology& timing,
                                             const Collective& collective, const std::string& name,
                                             LinkModel model) const {
  const Collective gather =
      Collective::make(CollectiveKind::kAllGather, collective.topology_npus(), collective.size(),
                       collective.chunks_per_npu(), collective.members());
  const Topology transposed = transpose(topology);
  const Topology transposed_timing = transpose(timing);
  Algorithm reduced = reverse_into_reduction(
      build_by_steps(transposed, transposed_timing, gather, name, model), collective);
  if (collective.kind() == CollectiveKind::kAllReduce)
    append(reduced, build_by_steps(topology, timing, gather, name, model), reduced.collective_time);
  compact(reduced, timing, model);
  reduced.synthesizer = name;
  reduced.link_model = model;
  return reduced;
}

}  // namespace tacos::detail
