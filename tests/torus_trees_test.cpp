// The torus-trees baseline (baseline_torus_trees.cpp): times worked by hand, every link in at
// most one tree carrying its tree's quarter of the chunks, Reduce as the reversal, where it does
// not apply, and the portfolio keeping it where latencies do not hold the links.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tacos/algorithm/verify.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/synthesis/request.h"
#include "tacos/topology/generators.h"
#include "test_printers.h"

namespace tacos {
namespace {

Topology torus(const std::string& spec) {
  return generate_topology(spec, parse_link_params("50", "0.5us"));
}

Algorithm trees(const Topology& topology, const Collective& collective, LinkModel model) {
  Algorithm algorithm = synthesize_baseline(Baseline::kTorusTrees, topology, collective, model);
  const VerifyResult check = verify_algorithm(algorithm, topology, model);
  EXPECT_TRUE(check.ok) << topology.name() << ": " << check.error;
  EXPECT_EQ(check.collective_time, algorithm.collective_time);
  return algorithm;
}

Collective rooted(CollectiveKind kind, const Topology& t, Bytes size, int k, NpuId root = 0) {
  return Collective::make(kind, t.npus(), size, k, {}, root);
}

// torus2d:3x3, 4 MiB, K = 8: two chunks of 0.5 MiB (9.765625 us at 50 GB/s) down each of four
// trees that share no link. The construction is W + H - 1 = 5 deep, the search makes it 4 (3 at
// least: the root's neighbour one way is 2 hops from the tree's first NPU the other way). The
// second chunk reaches depth 4 after m + D - 1 = 5 link times: under the tacos link model each
// holds the link for 0.5 us more (5 x 10.265625 = 51.328125 us); under the astra model
// latencies overlap, 5 x 9.765625 + 4 x 0.5 = 50.828125 us. Any root: the torus looks the same
// from every NPU.
TEST(TorusTrees, HandWorkedTimes) {
  const Topology t = torus("torus2d:3x3");
  for (const NpuId root : {0, 4, 8}) {
    const Collective c = rooted(CollectiveKind::kBroadcast, t, Bytes{4} << 20, 8, root);
    EXPECT_NEAR(to_micros(trees(t, c, LinkModel::kTacos).collective_time), 51.328125, 1e-6);
    EXPECT_NEAR(to_micros(trees(t, c, LinkModel::kAstra).collective_time), 50.828125, 1e-6);
  }
  // torus2d:16x16 at 64 MiB, K = 1024: 256 chunks of 64 KiB (1.220703125 us) per tree; the
  // search makes the trees 19 deep (the construction 31, 17 at least): (256 + 18) x 1.220703125
  // + 19 x 0.5 = 343.97 us under the astra model, 1.101 x the cut bound.
  const Topology big = torus("torus2d:16x16");
  const Collective c = rooted(CollectiveKind::kBroadcast, big, Bytes{64} << 20, 1024);
  EXPECT_NEAR(to_micros(trees(big, c, LinkModel::kAstra).collective_time),
              274 * 1.220703125 + 19 * 0.5, 1e-3);
  // Beyond 1,024 NPUs the construction as it is: torus2d:40x30, 1 MiB, K = 4, one chunk of 256
  // KiB (4.8828125 us, 4,882,813 ps as timed) per tree, W + H - 1 = 69 deep: 69 x 5.3828125 =
  // 371.4140625 us, and half a picosecond per hop.
  const Topology wide = torus("torus2d:40x30");
  EXPECT_NEAR(to_micros(trees(wide, rooted(CollectiveKind::kBroadcast, wide, Bytes{1} << 20, 4),
                              LinkModel::kTacos)
                            .collective_time),
              371.4140625 + 69 * 0.5e-6, 1e-9);
}

// Every link but the root's links in carries exactly the chunks of one tree, c mod 4 alike, as
// many as that tree has; Reduce (the reversal) too, as partial sums.
TEST(TorusTrees, EveryLinkInOneTree) {
  for (const std::string spec : {"torus2d:4x4", "torus2d:5x3", "torus2d:6x4", "torus2d:3x7"}) {
    const Topology t = torus(spec);
    for (const NpuId root : {0, 5, t.npus() - 1})
      for (const int k : {4, 8, 13})
        for (const CollectiveKind kind : {CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
          const Collective c = rooted(kind, t, Bytes{1} << 20, k, root);
          const Algorithm a = trees(t, c, LinkModel::kTacos);
          std::map<std::pair<DeviceId, DeviceId>, std::vector<ChunkId>> on_link;
          for (const Transfer& x : a.transfers()) {
            EXPECT_EQ(x.num_chunks, 1);
            EXPECT_EQ(x.reduce, kind == CollectiveKind::kReduce);
            for (const ChunkId chunk : a.chunks(x)) on_link[{x.src, x.dst}].push_back(chunk);
          }
          // Broadcast's links in to the root (Reduce's out of it) stay idle; all others are used.
          EXPECT_EQ(on_link.size(), static_cast<std::size_t>(4 * t.npus() - 4)) << spec;
          for (const auto& [link, chunks] : on_link) {
            const NpuId idle_end = kind == CollectiveKind::kBroadcast ? link.second : link.first;
            EXPECT_NE(idle_end, root);
            const int tree = chunks.front() % 4;
            EXPECT_EQ(static_cast<int>(chunks.size()), (k - tree + 3) / 4)
                << spec << " root " << root << " K " << k;
            for (const ChunkId chunk : chunks) EXPECT_EQ(chunk % 4, tree);
          }
        }
  }
}

// ring:5,ring:3 is torus2d:5x3 as ASTRA-sim dimensions: the same schedule.
TEST(TorusTrees, RingDimensionsAreATorus) {
  const Topology grid = torus("torus2d:5x3"), rings = torus("ring:5,ring:3");
  for (const NpuId root : {0, 7}) {
    const Algorithm a = trees(
        grid, rooted(CollectiveKind::kBroadcast, grid, Bytes{1} << 20, 8, root), LinkModel::kTacos);
    const Algorithm b =
        trees(rings, rooted(CollectiveKind::kBroadcast, rings, Bytes{1} << 20, 8, root),
              LinkModel::kTacos);
    EXPECT_EQ(a.collective_time, b.collective_time);
    ASSERT_EQ(a.transfers().size(), b.transfers().size());
    for (std::size_t i = 0; i < a.transfers().size(); ++i) {
      EXPECT_EQ(a.transfers()[i].src, b.transfers()[i].src);
      EXPECT_EQ(a.transfers()[i].dst, b.transfers()[i].dst);
      EXPECT_EQ(a.transfers()[i].start, b.transfers()[i].start);
    }
  }
}

TEST(TorusTrees, NotWhereItDoesNotApply) {
  const auto reason = [](const std::string& spec, CollectiveKind kind,
                         std::vector<NpuId> members = {}) {
    const Topology t = torus(spec);
    const auto why = baseline_inapplicable(
        Baseline::kTorusTrees, t, Collective::make(kind, t.npus(), Bytes{1} << 20, 4, members));
    return why.value_or("");
  };
  EXPECT_EQ(reason("torus2d:4x4", CollectiveKind::kBroadcast), "");
  EXPECT_EQ(reason("ring:4,ring:5", CollectiveKind::kReduce), "");
  EXPECT_EQ(reason("ring:4,fc:4", CollectiveKind::kBroadcast),
            "torus-trees needs both rings of the torus 3 NPUs long or more (ring:4,fc:4)");
  for (const auto& [spec, kind] : {std::pair{"ring:4,ring:4,ring:4", CollectiveKind::kBroadcast},
                                   std::pair{"mesh2d:4x4", CollectiveKind::kBroadcast},
                                   std::pair{"torus3d:3x3x3", CollectiveKind::kReduce},
                                   std::pair{"ring:8", CollectiveKind::kBroadcast}})
    EXPECT_EQ(reason(spec, kind),
              "torus-trees needs a 2D torus (such as torus2d:8x8 or ring:8,ring:8)")
        << spec;
  EXPECT_EQ(reason("torus2d:2x4", CollectiveKind::kBroadcast),
            "torus-trees needs both rings of the torus 3 NPUs long or more (torus2d:2x4)");
  EXPECT_EQ(reason("torus2d:4x4", CollectiveKind::kBroadcast, {0, 1, 2, 3}),
            "torus-trees needs every NPU of the torus in the collective");
  EXPECT_EQ(reason("torus2d:4x4", CollectiveKind::kAllGather),
            "torus-trees is defined for broadcast and reduce, not all-gather");
}

// Where a latency does not hold a link (the astra model) small chunks cost little, and the
// portfolio keeps the trees: torus2d:16x16 at 64 MiB with K = 4096, 1.05 x the cut bound.
TEST(TorusTrees, ThePortfolioKeepsItUnderTheAstraModel) {
  const Topology t = torus("torus2d:16x16");
  SynthesisRequest request;
  request.collective = CollectiveKind::kBroadcast;
  request.size = Bytes{64} << 20;
  request.chunks_per_npu = 4096;
  request.options.link_model = LinkModel::kAstra;
  request.options.trials = 1;
  const SynthesisRun run = synthesize(t, request);
  EXPECT_EQ(run.portfolio_winner, "torus-trees");
  // 1024 chunks per tree of 16 KiB (0.30517578125 us), 19 deep.
  EXPECT_NEAR(to_micros(run.result.collective_time), 1042 * 0.30517578125 + 19 * 0.5, 1e-3);
  ASSERT_TRUE(run.greedy_time.has_value());
  EXPECT_GT(*run.greedy_time, run.result.collective_time);
}

}  // namespace
}  // namespace tacos
