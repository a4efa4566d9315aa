// Unicast collectives as flows routed against each other's load (src/synthesis/routed_unicast.h).
#include "../src/synthesis/routed_unicast.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "generated_topology.h"
#include "tacos/algorithm/verify.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"

namespace tacos {
namespace {

Collective make(CollectiveKind kind, const Topology& topology, Bytes size, int k) {
  return Collective::make(kind, topology.npus(), size, k, {}, 0);
}

// mesh2d:2x2 at 50,25: 0-1 and 2-3 at 50 GB/s, 0-2 and 1-3 at 25. Gather to 0 of 1 MiB chunks
// (19.53125 us at 50, 39.0625 us at 25, +0.5 us latency each). Chunk 1 takes 1->0, chunk 2 takes
// 2->0 (39.5625 us); chunk 3 goes 3->1 (39.5625) then 1->0 after chunk 1 (20.03125): 59.59375 us.
// Through 2 it would queue behind chunk 2 on the slow 2->0 and end at 79.125 us.
TEST(RoutedUnicast, GatherAvoidsTheBusySlowLinkHandWorked) {
  const Topology mesh = generated("mesh2d:2x2", {50, 25});
  ASSERT_EQ(mesh.link(mesh.find_link(1, 0)).bandwidth_gbps, 50);
  ASSERT_EQ(mesh.link(mesh.find_link(2, 0)).bandwidth_gbps, 25);
  const Collective gather = make(CollectiveKind::kGather, mesh, 4 << 20, 1);
  for (std::uint64_t seed : {1, 2, 3, 4}) {
    const auto flows = detail::routed_unicast(mesh, gather, LinkModel::kTacos, seed);
    ASSERT_TRUE(flows.has_value());
    EXPECT_EQ(flows->collective_time, 59'593'750) << "seed " << seed;
    EXPECT_EQ(flows->transfers().size(), 4u);
    bool through_1 = false;
    for (const Transfer& t : flows->transfers()) through_1 |= t.src == 3 && t.dst == 1;
    EXPECT_TRUE(through_1) << "seed " << seed;
  }
  SynthesisOptions options;
  EXPECT_LE(synthesize_tacos(mesh, gather, options).collective_time, 59'593'750);
}

TEST(RoutedUnicast, OnlyForUnicastWithoutSwitches) {
  const Topology mesh = generated("mesh2d:2x2");
  EXPECT_FALSE(detail::routed_unicast(mesh, make(CollectiveKind::kAllGather, mesh, 1 << 20, 1),
                                      LinkModel::kTacos, 1));
  const Topology sw = generated("switch:4");
  EXPECT_FALSE(detail::routed_unicast(sw, make(CollectiveKind::kAllToAll, sw, 1 << 20, 1),
                                      LinkModel::kTacos, 1));
}

// Every flow schedule implements its collective and replays to its time, both link models.
TEST(RoutedUnicast, VerifiesAndReplays) {
  for (const char* spec : {"mesh2d:3x3", "torus2d:3x4", "dgx1", "hypercube:8"})
    for (CollectiveKind kind :
         {CollectiveKind::kAllToAll, CollectiveKind::kGather, CollectiveKind::kScatter})
      for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra}) {
        const Topology topology = generated(spec);
        const Collective collective = make(kind, topology, 8 << 20, 2);
        const auto flows = detail::routed_unicast(topology, collective, model, 5);
        ASSERT_TRUE(flows.has_value()) << spec;
        const VerifyResult check = verify_algorithm(*flows, topology, model);
        EXPECT_TRUE(check.ok) << spec << " " << to_string(kind) << ": " << check.error;
        EXPECT_EQ(check.collective_time, flows->collective_time) << spec;
        EXPECT_EQ(simulate(*flows, topology, model).collective_time, flows->collective_time);
      }
}

// The issue's cases ("Near-optimal everywhere", 64 MiB, 8 trials): dgx1 All-to-All was 1.50 x
// the bound (direct 1.56); Gather on the unequal mesh at K = 4 was 1.72 (direct 1.23).
TEST(RoutedUnicast, IssueCasesNearBoundAndAheadOfDirect) {
  struct Case {
    const char* spec;
    std::vector<double> bandwidth;
    CollectiveKind kind;
  };
  for (const Case& c : {Case{"dgx1", {50}, CollectiveKind::kAllToAll},
                        Case{"mesh2d:4x4", {50, 25}, CollectiveKind::kGather}}) {
    const Topology topology = generated(c.spec, c.bandwidth);
    const Collective collective = make(c.kind, topology, 64 << 20, 4);
    SynthesisOptions options;
    options.trials = 8;
    const SynthesisResult result = synthesize_tacos(topology, collective, options);
    const double bound = compute_lower_bound(topology, collective).lower_bound_us;
    EXPECT_LE(to_micros(result.collective_time) / bound, 1.10) << c.spec;
    const Algorithm direct =
        synthesize_baseline(Baseline::kDirect, topology, collective, LinkModel::kTacos);
    EXPECT_LE(result.collective_time, direct.collective_time) << c.spec;
  }
}

}  // namespace
}  // namespace tacos
