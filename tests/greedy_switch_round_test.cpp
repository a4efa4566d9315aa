// A large switch round taken port by port (GreedyMatcher::match_switch_round_by_port) makes the
// schedule of the round sorted whole (src/synthesis/greedy_matcher.cpp).
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "../src/synthesis/greedy_matcher.h"
#include "tacos/algorithm/verify.h"
#include "tacos/topology/generators.h"

namespace tacos {
namespace {

using TransferRow = std::tuple<DeviceId, DeviceId, Time, Time, std::vector<ChunkId>, int>;

struct MatcherRun {
  Time time = 0;
  std::int64_t transfers = 0;
  std::vector<TransferRow> rows;
  Algorithm algorithm;
};

MatcherRun run(const Topology& topology, const Collective& collective, std::size_t grouped_round,
               LinkModel model = LinkModel::kTacos) {
  const ProgressCallback quiet;
  detail::GreedyMatcher matcher(topology, collective, model, 7, true, quiet);
  matcher.set_grouped_round(grouped_round);
  matcher.run();
  MatcherRun result;
  result.time = matcher.collective_time();
  result.transfers = matcher.transfers();
  result.algorithm = matcher.take_algorithm();
  for (const Transfer& t : result.algorithm.transfers()) {
    const auto chunks = result.algorithm.chunks(t);
    result.rows.emplace_back(t.src, t.dst, t.start, t.end,
                             std::vector<ChunkId>(chunks.begin(), chunks.end()), t.multicast);
  }
  return result;
}

struct Case {
  std::string topology;
  CollectiveKind kind;
  int chunks_per_npu;
  LinkModel model;
};

TEST(GreedySwitchRound, PortByPortMakesTheSortedRoundsSchedule) {
  // Fat trees (one port per host), DGX pods (eight NICs and an NVSwitch port per GPU: several
  // first hops per NPU), a multicast NVSwitch (copies added after the round) and a broadcast
  // (a sole holder's port first), each with every round grouped and with none.
  const std::vector<Case> cases = {
      {"fattree:8x4x2", CollectiveKind::kAllGather, 2, LinkModel::kTacos},
      {"fattree:8x4x2", CollectiveKind::kAllGather, 1, LinkModel::kAstra},
      {"fattree:4x4x2", CollectiveKind::kBroadcast, 8, LinkModel::kTacos},
      {"dgx-h100:4", CollectiveKind::kAllGather, 2, LinkModel::kTacos},
      {"dgx-h100:2:nvls", CollectiveKind::kAllGather, 2, LinkModel::kTacos},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.topology);
    const Topology topology = generate_topology(c.topology, LinkParams{});
    const Collective collective =
        Collective::make(c.kind, topology.npus(), 1 << 20, c.chunks_per_npu, {}, 0);
    const MatcherRun sorted = run(topology, collective, static_cast<std::size_t>(-1), c.model);
    const MatcherRun grouped = run(topology, collective, 0, c.model);
    EXPECT_EQ(grouped.time, sorted.time);
    EXPECT_EQ(grouped.transfers, sorted.transfers);
    EXPECT_EQ(grouped.rows, sorted.rows);
    // A schedule of the collective: each chunk reached every NPU but its source.
    EXPECT_GT(grouped.transfers, 0);
    EXPECT_GE(static_cast<std::int64_t>(grouped.rows.size()),
              static_cast<std::int64_t>(collective.num_chunks()) * (topology.npus() - 1));
    const VerifyResult check = verify_algorithm(grouped.algorithm, topology, c.model);
    EXPECT_TRUE(check.ok) << check.error;
  }
}

}  // namespace
}  // namespace tacos
