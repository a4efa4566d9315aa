// The recursive halving-doubling baseline (baselines.h), for a power-of-two member count.
#include <cstdint>
#include <vector>

#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"

namespace tacos::detail {

Algorithm rhd_baseline(const Topology& topology, const Topology& timing,
                       const Collective& collective, LinkModel model) {
  const int n = collective.num_members();
  const int k_count = collective.chunks_per_npu();
  const auto& members = collective.members();
  if ((n & (n - 1)) != 0)
    throw Error("rhd needs a power-of-two NPU count (N = " + std::to_string(n) + ")");
  int rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  LogicalSchedule schedule(topology, timing, collective);
  std::vector<ChunkId> chunks;
  // The blocks (member indices) whose low `bits` bits equal those of `like`, piece k.
  auto blocks = [&](int like, int bits, int k) {
    chunks.clear();
    const int mask = (1 << bits) - 1;
    for (int b = 0; b < n; ++b)
      if ((b & mask) == (like & mask)) chunks.push_back(b * k_count + k);
    return std::span<const ChunkId>(chunks);
  };
  // Reduce-scatter, round t: i and i ^ 2^t swap halves; i sends the blocks that agree with its
  // partner on the low t+1 bits and keeps its own. Member i ends with block i.
  auto reduce_scatter = [&](std::int64_t base) {
    for (int t = 0; t < rounds; ++t)
      for (int k = 0; k < k_count; ++k)
        for (int i = 0; i < n; ++i) {
          const int partner = i ^ (1 << t);
          schedule.send(members[i], members[partner], base + std::int64_t{t} * k_count + k,
                        blocks(partner, t + 1, k), /*reduce=*/true);
        }
    return base + std::int64_t{rounds} * k_count;
  };
  // All-gather, the same rounds in reverse: i sends everything it holds to i ^ 2^t.
  auto all_gather = [&](std::int64_t base) {
    for (int r = 0; r < rounds; ++r) {
      const int t = rounds - 1 - r;
      for (int k = 0; k < k_count; ++k)
        for (int i = 0; i < n; ++i)
          schedule.send(members[i], members[i ^ (1 << t)], base + std::int64_t{r} * k_count + k,
                        blocks(i, t + 1, k));
    }
    return base + std::int64_t{rounds} * k_count;
  };
  if (!run_phases(collective.kind(), all_gather, reduce_scatter))
    throw Error("rhd is defined for all-gather, reduce-scatter and all-reduce, not " +
                to_string(collective.kind()));
  return schedule.build("rhd", model);
}

}  // namespace tacos::detail
