// Justification of a copy schedule's message order (src/synthesis/justification.h): a
// hand-worked case, and where it does not apply.
#include "../src/synthesis/justification.h"

#include <gtest/gtest.h>

#include "generated_topology.h"
#include "tacos/algorithm/verify.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"

namespace tacos {
namespace {

struct ScatterOnALine {
  Topology line = generated("uniring:3");  // 0 -> 1 -> 2 -> 0
  Collective scatter = Collective::make(CollectiveKind::kScatter, 3, 3 << 20, 1, {}, 0);
  ChunkId to(NpuId npu) const {
    for (ChunkId c = 0; c < scatter.num_chunks(); ++c)
      if (scatter.destinations(c).size() == 1 && scatter.destinations(c)[0] == npu) return c;
    return -1;
  }
  // One message of one chunk on a 50 GB/s, 0.5 us link.
  Time step() const { return 500'000 + serialization_time(scatter.chunk_bytes(), 50.0); }
};

// Scatter from NPU 0 on a one-way ring of 3: NPU 1's chunk takes link 0->1, NPU 2's takes 0->1
// and then 1->2. Sending NPU 1's first makes NPU 2's chunk wait a step: 3 steps. Backwards, the
// message into NPU 2 starts last, so its chunk's first hop may start no later than step 0, while
// NPU 1's may wait a step: forwards again, NPU 2's chunk goes first and both arrive in 2 steps.
TEST(Justification, SendsTheChunkWithTheLongerWayFirst) {
  const ScatterOnALine c;
  ASSERT_GE(c.to(1), 0);
  ASSERT_GE(c.to(2), 0);
  const Time step = c.step();
  Algorithm poor(c.scatter);
  poor.add_transfer(0, 1, 0, step, c.to(1));
  poor.add_transfer(0, 1, step, 2 * step, c.to(2));
  poor.add_transfer(1, 2, 2 * step, 3 * step, c.to(2));
  poor.collective_time = 3 * step;
  ASSERT_TRUE(verify_algorithm(poor, c.line, LinkModel::kTacos).ok);

  const auto justified = detail::justify_copy_schedule(poor, c.line, LinkModel::kTacos);
  ASSERT_TRUE(justified.has_value());
  EXPECT_EQ(justified->collective_time, 2 * step);
  ASSERT_EQ(justified->transfers().size(), 3u);
  EXPECT_EQ(justified->chunks(justified->transfers()[0])[0], c.to(2));
  const VerifyResult check = verify_algorithm(*justified, c.line, LinkModel::kTacos);
  EXPECT_TRUE(check.ok) << check.error;
  EXPECT_EQ(check.collective_time, 2 * step);
  EXPECT_EQ(simulate(*justified, c.line, LinkModel::kTacos).collective_time, 2 * step);

  // Already in the best order: nothing to gain, nothing returned.
  EXPECT_FALSE(detail::justify_copy_schedule(*justified, c.line, LinkModel::kTacos).has_value());
}

TEST(Justification, NotForReductionsOrEmptySchedules) {
  const ScatterOnALine c;
  EXPECT_FALSE(detail::justify_copy_schedule(Algorithm(c.scatter), c.line, LinkModel::kTacos));
  const Collective reduce = Collective::make(CollectiveKind::kReduce, 3, 3 << 20, 1, {}, 0);
  Algorithm reduction(reduce);
  reduction.add_transfer(1, 2, 0, c.step(), ChunkId{0}, true);
  EXPECT_FALSE(detail::justify_copy_schedule(reduction, c.line, LinkModel::kTacos));
}

}  // namespace
}  // namespace tacos
