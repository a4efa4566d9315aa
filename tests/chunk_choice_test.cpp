// The chunk-picking rule's tie-break (src/synthesis/matcher/chunk_choice.h): one seeded draw
// among the best-scoring window entries, the same on every fabric.
#include "../src/synthesis/matcher/chunk_choice.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "tacos/collective/collective.h"

namespace tacos {
namespace {

using detail::ChunkChoice;
using detail::WindowSlot;

// All-to-All chunks are unicast: they rank by the remaining distance given here.
std::vector<int> picks(bool switch_routes, std::uint64_t seed, int links) {
  const Collective c = Collective::make(CollectiveKind::kAllToAll, 4, 1 << 20, 2);
  ChunkChoice choice;
  choice.init(c, 4, links, seed, /*unicast=*/true, /*topology_has_switches=*/switch_routes,
              switch_routes);
  const std::vector<WindowSlot> window = {{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}};
  // Chunks 1, 3 and 4 are farthest from their destinations: the ties.
  const auto distance = [](NpuId, ChunkId chunk) { return chunk == 1 || chunk >= 3 ? 3 : 1; };
  std::vector<int> out;
  for (int round = 0; round < 50; ++round)
    for (LinkId link = 0; link < links; ++link)
      out.push_back(
          choice.choose(link, 0, window.data(), static_cast<int>(window.size()), distance));
  return out;
}

TEST(ChunkChoice, TiesBreakAmongTheBestOnlyAndReachEachOfThem) {
  std::map<int, int> count;
  for (int index : picks(false, 7, 6)) ++count[index];
  EXPECT_EQ(count.size(), 3u);                                       // positions 1, 3, 4 only
  for (int index : {1, 3, 4}) EXPECT_GT(count[index], 60) << index;  // 300 picks, ~100 each
}

TEST(ChunkChoice, OneRuleOnSwitchFabricsAndDirectLinks) {
  EXPECT_EQ(picks(true, 7, 6), picks(false, 7, 6));
  EXPECT_EQ(picks(true, 7, 6), picks(true, 7, 6));  // seeded: the same again
  EXPECT_NE(picks(false, 7, 6), picks(false, 8, 6));
}

}  // namespace
}  // namespace tacos
