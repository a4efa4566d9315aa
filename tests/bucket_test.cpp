// The bucket baseline (baseline_bucket.cpp): hand-worked times on a torus and a mesh, the
// reversal for Reduce-Scatter and All-Reduce, the budget, and that the portfolio and the K
// search reach it at 256 and 1,024 NPUs.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cli_support.h"
#include "tacos/algorithm/verify.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/synthesis/request.h"
#include "tacos/topology/generators.h"
#include "test_printers.h"

namespace tacos {
namespace {

Topology make(const std::string& spec) {
  return generate_topology(spec, parse_link_params("50", "0.5us"));
}

// What bucket says when `kind` at K = k (64 MiB) is over its budget, or "built".
std::string over_budget_message(const Topology& topology, CollectiveKind kind, int k) {
  try {
    synthesize_baseline(Baseline::kBucket, topology,
                        Collective::make(kind, topology.npus(), 64 << 20, k), LinkModel::kTacos);
  } catch (const BaselineOverBudget& over) {
    return over.what();
  }
  return "built";
}

// latency + bytes / bandwidth at 50 GB/s and 0.5 us, in us.
double message_us(double bytes) { return 0.5 + bytes / (50.0 * (1 << 30)) * 1e6; }

Algorithm bucket(const std::string& spec, CollectiveKind kind, Bytes size, int k) {
  const Topology topology = make(spec);
  const Collective collective = Collective::make(kind, topology.npus(), size, k);
  Algorithm algorithm =
      synthesize_baseline(Baseline::kBucket, topology, collective, LinkModel::kTacos);
  const VerifyResult check = verify_algorithm(algorithm, topology, LinkModel::kTacos);
  EXPECT_TRUE(check.ok) << spec << " " << to_string(kind) << " K=" << k << ": " << check.error;
  EXPECT_EQ(check.collective_time, algorithm.collective_time);
  return algorithm;
}

// torus2d:16x16, 64 MiB, K = 2: chunks of 128 KiB, piece 0 rows first, piece 1 columns first.
// Phase 1 on each ring of 16: 7 hops of one chunk each way, and the antipode's chunk from one
// side (the side alternating by position): 8 one-chunk messages end it, every link busy from 0.
// Phase 2: each NPU's block is its ring's 16 chunks; 7 hops of 16 chunks, then 8 to the antipode
// from each side, each message sent as its block arrives, on links the first phase has left:
// 8 x (0.5 + 2.441) + 7 x (0.5 + 16 x 2.441) + (0.5 + 8 x 2.441) = 320.5 us (each transfer
// rounded up to the ps: 6 ps more). The bound is 311.28 us: 255/256 x 64 MiB over 4 links.
TEST(Bucket, TorusAllGatherTimeWorkedByHand) {
  const double chunk = 128 * 1024;
  const double expected =
      8 * message_us(chunk) + 7 * message_us(16 * chunk) + message_us(8 * chunk);
  EXPECT_NEAR(expected, 320.5, 1e-9);
  const Algorithm ag = bucket("torus2d:16x16", CollectiveKind::kAllGather, 64 << 20, 2);
  EXPECT_NEAR(to_micros(ag.collective_time), expected, 1e-5);
  // Per piece each NPU sends 7 messages each way and its antipode's one in phase 1, 8 each way
  // in phase 2.
  EXPECT_EQ(ag.transfers().size(), 2u * 256 * (7 * 2 + 1 + 8 * 2));
  // Reduce-Scatter is the time reversal: the same time; All-Reduce both back to back.
  EXPECT_EQ(bucket("torus2d:16x16", CollectiveKind::kReduceScatter, 64 << 20, 2).collective_time,
            ag.collective_time);
}

// K = 1 has one dimension order: rows, then columns, each phase on half the links.
// ring:4 K = 1, 4 MiB: 1 MiB chunks, each block to its neighbours and the antipode's from one
// side: 2 messages of 1 MiB = 2 x (0.5 + 19.53) us.
TEST(Bucket, RingAndOneOrderWorkedByHand) {
  const Algorithm ring = bucket("ring:4", CollectiveKind::kAllGather, 4 << 20, 1);
  EXPECT_NEAR(to_micros(ring.collective_time), 2 * message_us(1 << 20), 1e-5);
  // mesh2d:2x2 (lines of 2) at K = 1: rows then columns, 1 chunk then 2 chunks of 1 MiB.
  const Algorithm mesh = bucket("mesh2d:2x2", CollectiveKind::kAllGather, 4 << 20, 1);
  EXPECT_NEAR(to_micros(mesh.collective_time), message_us(1 << 20) + message_us(2 << 20), 1e-5);
  // K = 2 spreads the halves over both orders: each link carries one message of one 512 KiB
  // chunk, then one of two: 0.5 + 9.77 and 0.5 + 19.53 us.
  const Algorithm both = bucket("mesh2d:2x2", CollectiveKind::kAllGather, 4 << 20, 2);
  EXPECT_NEAR(to_micros(both.collective_time), message_us(512 * 1024) + message_us(1 << 20), 1e-5);
}

TEST(Bucket, EveryShapeAndCollectiveVerifies) {
  for (const std::string spec : {"torus2d:3x4", "mesh2d:4x3", "torus3d:3x3x2", "mesh3d:2x3x2",
                                 "ring:5", "ring:2", "ring:3,ring:4"})
    for (const CollectiveKind kind :
         {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kAllReduce})
      for (const int k : {1, 2, 3, 5}) bucket(spec, kind, 3 << 20, k);
}

TEST(Bucket, SaysWhyItDoesNotApply) {
  auto reason = [](const std::string& spec, std::vector<NpuId> members = {}) {
    const Topology topology = make(spec);
    const Collective c =
        Collective::make(CollectiveKind::kAllGather, topology.npus(), 1 << 20, 1, members);
    return baseline_inapplicable(Baseline::kBucket, topology, c).value_or("applies");
  };
  EXPECT_EQ(reason("torus2d:4x4"), "applies");
  EXPECT_EQ(reason("fc:8"),
            "bucket needs ring or line dimensions (a torus, mesh or ring); fc:8 has others");
  EXPECT_EQ(reason("uniring:5"),
            "bucket needs ring or line dimensions (a torus, mesh or ring); uniring:5 has others");
  EXPECT_EQ(reason("switch:8"),
            "bucket needs a torus, mesh or ring generator topology (such as torus2d:8x8)");
  EXPECT_EQ(reason("torus2d:4x4", {0, 1, 2}),
            "bucket needs every NPU of the topology in the collective");
  const Topology ring = make("ring:4");
  EXPECT_THROW(synthesize_baseline(Baseline::kBucket, ring,
                                   Collective::make(CollectiveKind::kBroadcast, 4, 1 << 20, 1),
                                   LinkModel::kTacos),
               Error);
}

// N (N - 1) K chunk transfers (twice for All-Reduce), counted before anything is built, against
// bucket's own budget (2^25: torus2d:64x64 All-Gather at K = 2 fits, 4,096 x 4,095 x 2).
TEST(Bucket, OverTheBudgetSaysHowManyTransfers) {
  EXPECT_EQ(kBucketTransferBudget, 33554432);
  const Topology torus = make("torus2d:64x64");
  EXPECT_EQ(over_budget_message(torus, CollectiveKind::kAllGather, 4),
            "67092480 chunk transfers > 33554432, bucket's budget");
  EXPECT_EQ(over_budget_message(torus, CollectiveKind::kAllReduce, 2),
            "67092480 chunk transfers > 33554432, bucket's budget");
}

// Below one piece per dimension order (K = 1 on a 2D torus) some links idle in every phase, so
// there the baselines' budget holds; the `auto` search goes on past such a K and builds K = 2
// (torus2d:39x38: 1,482 x 1,481 = 2,194,842 chunk transfers at K = 1, just over 2^21).
TEST(Bucket, BelowOnePiecePerDimensionTheBaselinesBudgetHolds) {
  EXPECT_EQ(over_budget_message(make("torus2d:39x38"), CollectiveKind::kAllGather, 1),
            "2194842 chunk transfers > 2097152, the baselines' budget (bucket's own, 33554432, "
            "from one piece per dimension order on)");
  const nlohmann::json searched = tacos_test::run_json(
      "synthesize --algorithm bucket --topology torus2d:39x38 --chunks-per-npu auto --json");
  EXPECT_EQ(searched["chunks_per_npu"], 2);
  EXPECT_EQ(searched["verified"], true);
}

// Past the baselines' budget (2^21) bucket is still built: torus2d:32x32 All-Gather at K = 4,
// 4,190,208 chunk transfers (over the baselines' budget before bucket had its own), verified,
// its pieces pipelined two per dimension order: slower than K = 2 (1.052 x the bound), whose
// 8 one-chunk and 8 block messages per link pay less latency.
TEST(Bucket, BuiltPastTheBaselinesBudget) {
  const nlohmann::json four = tacos_test::run_json(
      "synthesize --algorithm bucket --topology torus2d:32x32 --chunks-per-npu 4 --json");
  EXPECT_EQ(four["verified"], true);
  EXPECT_EQ(four["chunks_per_npu"], 4);
  // Per NPU and piece: 16 hops each way round its row, then its column, the antipode's half
  // block one message from each side, except the first phase's one chunk (one side only).
  EXPECT_EQ(four["transfers"], 32 * 32 * 4 * (31 + 32));
  const nlohmann::json two = tacos_test::run_json(
      "synthesize --algorithm bucket --topology torus2d:32x32 --chunks-per-npu 2 --json");
  EXPECT_GT(four["collective_time_us"].get<double>(), two["collective_time_us"].get<double>());
}

// bucket's own budget builds it past the baselines': torus2d:32x32 All-Reduce at K = 2 is
// 4,190,208 chunk transfers (`compare` and the portfolio keep it: 1.052 x the bound, the greedy's
// best 1.110 x at K = 1). Its Reduce-Scatter and All-Gather each take, by hand (32 KiB chunks,
// 0.61 us at 50 GiB/s; blocks of a ring's 32 chunks, 19.53 us): 16 one-chunk steps round the
// first ring, then 15 blocks and the antipode's half block round the second,
// 16 x (0.5 + 0.6104) + 15 x (0.5 + 19.5313) + (0.5 + 9.7656) = 328.5 us, so 657.0 in all.
TEST(Bucket, AllReduceBuiltPastTheBaselinesBudgetByHand) {
  const nlohmann::json built = tacos_test::run_json(
      "synthesize --algorithm bucket --topology torus2d:32x32 --collective all-reduce "
      "--chunks-per-npu 2 --json");
  EXPECT_NEAR(built["collective_time_us"].get<double>(), 657.0, 1e-4);
  EXPECT_EQ(built["verified"], true);
}

// Over the portfolio's estimate (N x N x K x hops) the portfolio still tries bucket, and the K
// search still tries K = 2 at 1,024 NPUs (1,024 x 1,023 x 2 deliveries fit the budget).
TEST(Bucket, ThePortfolioAndTheKSearchReachItAtScale) {
  const nlohmann::json kept = nlohmann::json::parse(
      tacos_test::run_tacos("synthesize --topology torus2d:16x16 --collective all-gather --size "
                            "64MiB --chunks-per-npu 2 --json")
          .out);
  EXPECT_EQ(kept["portfolio_winner"], "bucket");
  EXPECT_NEAR(kept["collective_time_us"].get<double>(), 320.5, 1e-5);
  EXPECT_GT(kept["greedy_time_us"].get<double>(), 320.5);
  EXPECT_NE(kept["portfolio_skipped"].get<std::string>().find("tried only bucket"),
            std::string::npos);
  EXPECT_EQ(kept["verified"], true);
  // The summary names the baseline that won, not the greedy.
  const tacos_test::RunResult text = tacos_test::run_tacos(
      "synthesize --topology torus2d:16x16 --collective all-gather --size 64MiB "
      "--chunks-per-npu 2");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("tried only bucket"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("): bucket's schedule (the TACOS greedy alone: "), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("the TACOS greedy's schedule"), std::string::npos) << text.out;
  const nlohmann::json searched = nlohmann::json::parse(
      tacos_test::run_tacos("synthesize --topology torus2d:32x32 --collective all-gather --size "
                            "64MiB --chunks-per-npu auto --algorithm bucket --json")
          .out);
  EXPECT_EQ(searched["chunks_per_npu"], 2);
  EXPECT_LT(searched["binding_ratio"].get<double>(), 1.06);
}

// All-to-All on hypercube:4 (two dimensions of two), 64 MiB, K = 1: chunks of 16 MiB. The
// diagonal pair's chunk takes one order, the two neighbours' the other, so each phase loads
// every link with one chunk; the diagonal chunk's second hop starts as its first arrives:
// 2 x (0.5 + 312.5) = 626 us against the bound of 625 (three chunks, two links, whole chunks).
TEST(Bucket, AllToAllOnAHypercubeWorkedByHand) {
  const Algorithm a2a = bucket("hypercube:4", CollectiveKind::kAllToAll, 64 << 20, 1);
  EXPECT_NEAR(to_micros(a2a.collective_time), 2 * message_us(16 << 20), 1e-5);
  EXPECT_NEAR(to_micros(a2a.collective_time), 626.0, 1e-5);
  // 8 directed links, each one message per phase.
  EXPECT_EQ(a2a.transfers().size(), 16u);
}

// The order and the antipode's side go by the offset between sender and receiver, so every
// directed link of a torus carries the same bytes in the same number of messages, and each
// direction of each dimension about as much in both phases. torus2d:8x8, 64 MiB, K = 1: chunks
// of 1 MiB; a ring of 8 moves 8 x (1 + 2 + 3 + 4 / 2) = 64 chunk hops per direction per row,
// one chunk hop per link for each of the 8 rows' worth: 64 MiB per link in 4 messages per phase,
// and no link ever waits: 64 x 19.53 + 8 x 0.5 = 1254 us against the cut bound of 1250.
TEST(Bucket, AllToAllLoadsEveryTorusLinkAlike) {
  for (const int k : {1, 2}) {
    const Algorithm a2a = bucket("torus2d:8x8", CollectiveKind::kAllToAll, 64 << 20, k);
    std::map<std::pair<DeviceId, DeviceId>, std::pair<int, int>> per_link;  // messages, chunks
    for (const Transfer& t : a2a.transfers()) {
      auto& [messages, chunks] = per_link[{t.src, t.dst}];
      ++messages;
      chunks += t.num_chunks;
    }
    ASSERT_EQ(per_link.size(), 256u) << "K=" << k;
    for (const auto& [link, load] : per_link) {
      EXPECT_EQ(load.second, 64 * k) << "K=" << k << " link " << link.first << "->" << link.second;
      EXPECT_EQ(load.first, 8 * k) << "K=" << k << " link " << link.first << "->" << link.second;
    }
    if (k == 1) {
      EXPECT_NEAR(to_micros(a2a.collective_time), 64 * message_us(1 << 20) - 56 * 0.5, 1e-5);
      EXPECT_NEAR(to_micros(a2a.collective_time), 1254.0, 1e-5);
    }
  }
}

TEST(Bucket, AllToAllVerifiesOnEveryShape) {
  for (const std::string spec : {"torus2d:3x4", "mesh2d:4x3", "torus3d:3x3x2", "mesh3d:2x3x2",
                                 "ring:5", "ring:2", "ring:3,ring:4", "hypercube:8", "torus2d:4x4"})
    for (const int k : {1, 2, 3}) bucket(spec, CollectiveKind::kAllToAll, 3 << 20, k);
}

// At 512 NPUs, K = 1: near the bound where the greedy alone is 1.271 and 1.341 x (docs/quality.md,
// quality at scale).
TEST(Bucket, AllToAllNearTheBoundAt512Npus) {
  const Algorithm torus = bucket("torus3d:8x8x8", CollectiveKind::kAllToAll, 64 << 20, 1);
  EXPECT_NEAR(to_micros(torus.collective_time), 1258.441413, 1e-5);
  EXPECT_LT(to_micros(torus.collective_time), 1.01 * 1250.0);  // the cut bound
  const Algorithm cube = bucket("hypercube:512", CollectiveKind::kAllToAll, 64 << 20, 1);
  EXPECT_NEAR(to_micros(cube.collective_time), 631.94141, 1e-5);
  EXPECT_LT(to_micros(cube.collective_time), 1.02 * 625.0);
}

// Every chunk's hops along each dimension, counted before anything is built: on torus2d:32x32
// each ring of 32 has 8,192 position-pair hops, times 32 x 32 pairs of the other coordinate:
// 16,777,216 at K = 1, bucket's All-to-All budget itself (built: 1.0032 x the bound in the
// at-scale table); K = 2 is over it.
TEST(Bucket, AllToAllOverTheBudgetSaysHowManyTransfers) {
  EXPECT_EQ(over_budget_message(make("torus2d:32x32"), CollectiveKind::kAllToAll, 2),
            "33554432 chunk transfers > 16777216, the budget of bucket's All-to-All");
  EXPECT_EQ(kBucketAllToAllBudget, 16777216);
}

// Over the portfolio's estimate (torus2d:16x16 All-to-All: N x N x K x hops = 526,344) bucket is
// 2508 us, 1.0032 x the bound of 2500: within kGreedyNeedlessRatio, so the greedy is not run;
// both outputs say why.
TEST(Bucket, NearTheBoundTheGreedyIsNotRun) {
  const std::string args =
      "synthesize --topology torus2d:16x16 --collective all-to-all --size 64MiB --chunks-per-npu 1";
  const nlohmann::json kept = nlohmann::json::parse(tacos_test::run_tacos(args + " --json").out);
  EXPECT_EQ(kept["portfolio_winner"], "bucket");
  EXPECT_NEAR(kept["collective_time_us"].get<double>(), 2508.000006, 1e-5);
  EXPECT_TRUE(kept["greedy_time_us"].is_null());
  const std::string note = "bucket's schedule is 1.0032 x the lower bound (2500 us)";
  EXPECT_NE(kept["portfolio_skipped"].get<std::string>().find("the TACOS greedy not run: " + note),
            std::string::npos)
      << kept["portfolio_skipped"];
  EXPECT_EQ(kept["verified"], true);
  const tacos_test::RunResult text = tacos_test::run_tacos(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("(the TACOS greedy alone: not run, " + note + ")"), std::string::npos)
      << text.out;
  EXPECT_DOUBLE_EQ(kGreedyNeedlessRatio, 1.005);
}

}  // namespace
}  // namespace tacos
