// The direct baseline (baselines.h): every NPU sends to every other, routed when not neighbours.
#include <cstdint>

#include "tacos/synthesis/baselines.h"

namespace tacos::detail {

Algorithm direct_baseline(const Topology& topology, const Topology& timing,
                          const Collective& collective, LinkModel model) {
  const int n = collective.num_members();
  const int k_count = collective.chunks_per_npu();
  const auto& members = collective.members();
  const int root = has_root(collective.kind()) ? collective.member_index(collective.root()) : -1;
  LogicalSchedule schedule(topology, timing, collective);
  // Member i sends to member j in round (j - i - 1) mod n: every round is a permutation, so no
  // receiver's port takes two messages at once (all senders starting with the same receiver
  // queue n - 1 messages on its port while the others idle).
  auto shift = [n](int i, int j) { return static_cast<std::int64_t>((j - i + n) % n - 1); };
  // One message per (sender, receiver, piece); piece k in steps base + k(n-1) + round.
  auto all_gather = [&](std::int64_t base) {
    for (int k = 0; k < k_count; ++k)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (i != j)
            schedule.send(members[i], members[j], base + k * (n - 1) + shift(i, j),
                          i * k_count + k);
    return base + k_count * (n - 1);
  };
  auto reduce_scatter = [&](std::int64_t base) {
    for (int k = 0; k < k_count; ++k)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (i != j)
            schedule.send(members[i], members[j], base + k * (n - 1) + shift(i, j), j * k_count + k,
                          /*reduce=*/true);
    return base + k_count * (n - 1);
  };
  if (run_phases(collective.kind(), all_gather, reduce_scatter))
    return schedule.build("direct", model);
  switch (collective.kind()) {
    case CollectiveKind::kAllGather:  // run_phases above
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllReduce:
      break;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce: {
      const bool reduce = collective.kind() == CollectiveKind::kReduce;
      for (int k = 0; k < k_count; ++k)
        for (int j = 0; j < n; ++j)
          if (j != root) {
            if (reduce)
              schedule.send(members[j], members[root], k, k, true);
            else
              schedule.send(members[root], members[j], k, k);
          }
      break;
    }
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter: {
      const bool gather = collective.kind() == CollectiveKind::kGather;
      for (int k = 0; k < k_count; ++k)
        for (int j = 0; j < n; ++j)
          if (j != root) {
            if (gather)
              schedule.send(members[j], members[root], k, j * k_count + k);
            else
              schedule.send(members[root], members[j], k, j * k_count + k);
          }
      break;
    }
    case CollectiveKind::kAllToAll:
      for (int k = 0; k < k_count; ++k)
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j)
            if (i != j)
              schedule.send(members[i], members[j], k * (n - 1) + shift(i, j),
                            (i * n + j) * k_count + k);
      break;
  }
  return schedule.build("direct", model);
}

}  // namespace tacos::detail
