// The ring baseline (baselines.h): NCCL-style rings over the ring order of the members.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tacos/synthesis/baselines.h"

namespace tacos::detail {

Algorithm ring_baseline(const Topology& topology, const Collective& collective, LinkModel model,
                        const std::vector<GeneratorDimension>& dims) {
  const int n = collective.num_members();
  const int k_count = collective.chunks_per_npu();
  const auto& members = collective.members();
  std::vector<int> ring = ring_order(topology, collective, dims);  // member indices
  const CollectiveKind kind = collective.kind();
  if (has_root(kind)) {
    // Rotate so that the root comes first.
    const int root = collective.member_index(collective.root());
    std::size_t at = 0;
    while (ring[at] != root) ++at;
    std::rotate(ring.begin(), ring.begin() + static_cast<std::ptrdiff_t>(at), ring.end());
  }
  auto npu = [&](int position) { return members[ring[((position % n) + n) % n]]; };
  auto member = [&](int position) { return ring[((position % n) + n) % n]; };
  LogicalSchedule schedule(topology, collective);

  // Ring reduce-scatter (chunk of member P[b], piece k, starts at P[b+1] and ends at P[b]) and
  // all-gather (from P[a] round to P[a-1]): per piece N-1 steps, pieces one after another.
  auto reduce_scatter = [&](std::int64_t base) {
    for (int k = 0; k < k_count; ++k)
      for (int b = 0; b < n; ++b)
        for (int h = 0; h + 1 < n; ++h)
          schedule.send(npu(b + 1 + h), npu(b + 2 + h), base + std::int64_t{k} * (n - 1) + h,
                        member(b) * k_count + k, /*reduce=*/true);
    return base + std::int64_t{k_count} * (n - 1);
  };
  auto all_gather = [&](std::int64_t base) {
    for (int k = 0; k < k_count; ++k)
      for (int a = 0; a < n; ++a)
        for (int h = 0; h + 1 < n; ++h)
          schedule.send(npu(a + h), npu(a + h + 1), base + std::int64_t{k} * (n - 1) + h,
                        member(a) * k_count + k);
    return base + std::int64_t{k_count} * (n - 1);
  };

  switch (kind) {
    case CollectiveKind::kAllGather:
      all_gather(0);
      break;
    case CollectiveKind::kReduceScatter:
      reduce_scatter(0);
      break;
    case CollectiveKind::kAllReduce:
      all_gather(reduce_scatter(0));
      break;
    case CollectiveKind::kBroadcast:
      // Pipeline from the root P[0] along the ring: chunk k leaves P[h] at step k + h.
      for (int k = 0; k < k_count; ++k)
        for (int h = 0; h + 1 < n; ++h) schedule.send(npu(h), npu(h + 1), k + h, k);
      break;
    case CollectiveKind::kReduce:
      // Pipeline along the ring ending at the root: P[1] -> P[2] -> ... -> P[N-1] -> P[0].
      for (int k = 0; k < k_count; ++k)
        for (int h = 0; h + 1 < n; ++h)
          schedule.send(npu(1 + h), npu(2 + h), k + h, k, /*reduce=*/true);
      break;
    case CollectiveKind::kGather:
      // P[i]'s chunks travel P[i] -> ... -> P[0]; on each link own chunks first, then those
      // from one further back, and so on.
      for (int i = 1; i < n; ++i)
        for (int k = 0; k < k_count; ++k)
          for (int j = 0; i + j < n; ++j)
            schedule.send(npu(i + j), npu(i + j + 1), std::int64_t{j} * k_count + k,
                          member(i) * k_count + k);
      break;
    case CollectiveKind::kScatter:
      // The root sends the chunks of the farthest NPU first; each NPU passes on the rest.
      for (int i = 1; i < n; ++i)
        for (int k = 0; k < k_count; ++k)
          for (int j = 0; j < i; ++j)
            schedule.send(npu(j), npu(j + 1), std::int64_t{n - 1 - i} * k_count + k + j,
                          member(i) * k_count + k);
      break;
    case CollectiveKind::kAllToAll: {
      // Ring relay: P[a]'s chunks travel round the ring; on its h-th hop (step h) one message
      // per piece carries those still going further, N-1-h destinations' worth.
      std::vector<ChunkId> chunks;
      for (int h = 0; h + 1 < n; ++h)
        for (int k = 0; k < k_count; ++k)
          for (int a = 0; a < n; ++a) {
            chunks.clear();
            for (int d = h + 1; d < n; ++d)
              chunks.push_back((member(a) * n + member(a + d)) * k_count + k);
            schedule.send(npu(a + h), npu(a + h + 1), std::int64_t{h} * k_count + k, chunks);
          }
      break;
    }
  }
  return schedule.build("ring", model);
}

}  // namespace tacos::detail
