// The All-Reduce's wave counts (tacos_synthesizer.cpp, synthesize_all_reduce): planned one after
// the other on one core, side by side with cores to spare; the schedule kept is the same.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "schedule_rows.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"

namespace tacos {
namespace {

using tacos_test::rows_of;

TEST(AllReduceWaveCounts, SideBySideKeepsTheScheduleOfOneAfterTheOther) {
  // Through switches (fattree:4x2x2) and on direct links (mesh2d:3x3), K = 4: wave counts 1, 2
  // and 4; with and without a deadline that one of them cannot beat.
  for (const char* spec : {"fattree:4x2x2", "mesh2d:3x3"}) {
    const Topology topology = generate_topology(spec, LinkParams{});
    const Collective all_reduce =
        Collective::make(CollectiveKind::kAllReduce, topology.npus(), 1 << 20, 4, {}, 0);
    SynthesisOptions one_core;
    one_core.threads = 1;
    SynthesisOptions two_cores;
    two_cores.threads = 2;
    const SynthesisResult one = synthesize_tacos(topology, all_reduce, one_core);
    const SynthesisResult two = synthesize_tacos(topology, all_reduce, two_cores);
    ASSERT_TRUE(one.abandoned.empty());
    EXPECT_EQ(two.collective_time, one.collective_time) << spec;
    EXPECT_EQ(rows_of(two.algorithm), rows_of(one.algorithm)) << spec;

    one_core.deadline = two_cores.deadline = one.collective_time + 1;
    const SynthesisResult one_bounded = synthesize_tacos(topology, all_reduce, one_core);
    const SynthesisResult two_bounded = synthesize_tacos(topology, all_reduce, two_cores);
    EXPECT_EQ(one_bounded.collective_time, one.collective_time) << spec;
    EXPECT_EQ(rows_of(two_bounded.algorithm), rows_of(one.algorithm)) << spec;
  }
}

}  // namespace
}  // namespace tacos
