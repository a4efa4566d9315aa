// NPUs all alike (src/bounds/npu_symmetry.cpp): which topologies qualify, and the bounds that
// use it (one anchor, one search) equal the bounds computed NPU by NPU on the same links.
#include "../src/bounds/npu_symmetry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tacos/bounds/lower_bound.h"
#include "tacos/common/units.h"
#include "tacos/topology/generators.h"

namespace tacos {
namespace {

Topology gen(const std::string& spec, const std::string& bandwidth = "50",
             const std::string& latency = "0.5us") {
  return generate_topology(spec, parse_link_params(bandwidth, latency));
}

// The same devices and links without a shape: nothing says the NPUs are alike.
Topology unshaped(const Topology& t) { return Topology(t.npus(), t.switches(), t.links(), ""); }

TEST(NpuSymmetry, ToriRingsHypercubesAndFullyConnectedDimensionsAreAlike) {
  for (const std::string spec : {"torus2d:4x4", "torus2d:3x5", "torus3d:2x3x4", "ring:8",
                                 "hypercube:16", "fc:8", "ring:4,fc:2", "ring:2"})
    EXPECT_TRUE(bounds_detail::npus_are_all_alike(gen(spec))) << spec;
  // Links alike along each dimension, different across dimensions: still every NPU alike.
  EXPECT_TRUE(bounds_detail::npus_are_all_alike(gen("torus2d:4x4", "50,25", "0.5us,1us")));
}

TEST(NpuSymmetry, MeshesSwitchesPodsAndOddLinksAreNot) {
  for (const std::string spec :
       {"mesh2d:4x4", "mesh3d:2x2x3", "switch:8", "dgx-h100:2", "fattree:4x2x2", "ring:4,switch:2"})
    EXPECT_FALSE(bounds_detail::npus_are_all_alike(gen(spec))) << spec;
  EXPECT_FALSE(bounds_detail::npus_are_all_alike(unshaped(gen("torus2d:4x4"))));
  // One slower link breaks the symmetry.
  const Topology torus = gen("torus2d:4x4");
  std::vector<Link> links = torus.links();
  links[5].bandwidth_gbps /= 2;
  Topology slowed(torus.npus(), 0, links, "slowed");
  slowed.set_shape(torus.shape());
  EXPECT_FALSE(bounds_detail::npus_are_all_alike(slowed));
  // A longer latency on one link, too.
  links = torus.links();
  links[7].latency_ps += 1;
  Topology late(torus.npus(), 0, links, "late");
  late.set_shape(torus.shape());
  EXPECT_FALSE(bounds_detail::npus_are_all_alike(late));
}

// The shortcut's bounds equal the NPU-by-NPU computation on the same links, exactly.
TEST(NpuSymmetry, BoundsEqualTheNpuByNpuComputation) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"torus2d:4x6", "50"},  {"torus2d:4x4", "50,25"},  {"torus3d:2x3x4", "40"},
      {"hypercube:16", "50"}, {"ring:4,fc:3", "100,25"}, {"ring:9", "50"}};
  for (const auto& [spec, bandwidth] : cases) {
    const Topology shaped = gen(spec, bandwidth);
    ASSERT_TRUE(bounds_detail::npus_are_all_alike(shaped)) << spec;
    const Topology plain = unshaped(shaped);
    for (const CollectiveKind kind :
         {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kAllReduce}) {
      for (const int k : {1, 3}) {
        const Collective c = Collective::make(kind, shaped.npus(), Bytes{64} << 20, k);
        const LowerBound fast = compute_lower_bound(shaped, c);
        const LowerBound full = compute_lower_bound(plain, c);
        EXPECT_EQ(fast.lower_bound_us, full.lower_bound_us) << spec << " " << to_string(kind);
        EXPECT_EQ(fast.latency_bound_us, full.latency_bound_us) << spec << " " << to_string(kind);
        EXPECT_EQ(fast.bandwidth_bound_us, full.bandwidth_bound_us)
            << spec << " " << to_string(kind);
        EXPECT_GT(fast.latency_bound_us, 0) << spec;
      }
    }
  }
}

// Hand-worked: torus2d:8x8 All-Gather, 64 MiB, 50 GB/s, 0.5 us: the farthest NPU is 4 + 4 = 8
// hops away (4 us), and a single NPU takes in 63/64 of the buffer over 4 links.
TEST(NpuSymmetry, TorusAllGatherBoundWorkedByHand) {
  const LowerBound b = compute_lower_bound(
      gen("torus2d:8x8"), Collective::make(CollectiveKind::kAllGather, 64, Bytes{64} << 20, 1));
  EXPECT_DOUBLE_EQ(b.latency_bound_us, 4.0);
  const double bytes = 64.0 * (1 << 20) * 63 / 64;
  EXPECT_NEAR(b.bandwidth_bound_us, bytes / (4 * 50 * kBytesPerGB) * 1e6, 1e-9);
}

}  // namespace
}  // namespace tacos
