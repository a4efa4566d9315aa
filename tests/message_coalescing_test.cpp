// Message coalescing (src/synthesis/message_coalescing.h): hand-worked merges, and on a set of
// direct-link fabrics every collective still verifies, replays to its time and is never slower
// than the greedy alone.
#include "../src/synthesis/message_coalescing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tacos/algorithm/verify.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"
#include "test_printers.h"

namespace tacos {
namespace {

constexpr Time kLatency = 500'000;  // 0.5 us

Topology make(const std::string& spec, const std::string& bandwidth = "50") {
  return generate_topology(spec, parse_link_params(bandwidth, "0.5us"));
}

SynthesisResult synthesize(const Topology& topology, CollectiveKind kind, Bytes size, int k,
                           bool coalesce, LinkModel model = LinkModel::kTacos) {
  SynthesisOptions options;
  options.threads = 1;
  options.coalesce = coalesce;
  options.link_model = model;
  return synthesize_tacos(topology, Collective::make(kind, topology.npus(), size, k), options);
}

TEST(MessageCoalescing, TwoChunksForOneReceiverGoAsOneMessage) {
  // fc:2, 1 MiB All-Gather, K = 2: each NPU owes the other its two 256 KiB chunks. The greedy
  // sends them one after the other, 2 x (0.5 + 4.8828125) us; the first arrives with nothing
  // waiting for it, so both go in one message: 0.5 + 2 x 4.8828125 us.
  const Topology fc2 = make("fc:2");
  const Collective c = Collective::make(CollectiveKind::kAllGather, 2, 1 << 20, 2);
  Algorithm greedy(c);
  for (NpuId u = 0; u < 2; ++u) {
    const Time step = kLatency + serialization_time(262144, 50);
    greedy.add_transfer(u, 1 - u, 0, step, 2 * u);
    greedy.add_transfer(u, 1 - u, step, 2 * step, 2 * u + 1);
  }
  const std::optional<Algorithm> merged = detail::coalesce_messages(greedy, fc2, LinkModel::kTacos);
  ASSERT_TRUE(merged.has_value());
  ASSERT_EQ(merged->transfers().size(), 2u);
  EXPECT_EQ(merged->collective_time, kLatency + serialization_time(524288, 50));
  for (const Transfer& t : merged->transfers()) EXPECT_EQ(t.num_chunks, 2);
  const VerifyResult v = verify_algorithm(*merged, fc2, LinkModel::kTacos);
  EXPECT_TRUE(v.ok) << v.error;
}

TEST(MessageCoalescing, OnlyChunksAlreadyThereJoinAMessage) {
  // uniring:3, 3 KiB All-Gather, K = 1 (1 KiB chunks): NPU u sends its own chunk at 0, then the
  // chunk it has just received from u - 1. That chunk was not at u when the first message
  // started, so nothing merges and the pass reports no gain.
  const Topology ring = make("uniring:3");
  const SynthesisResult greedy = synthesize(ring, CollectiveKind::kAllGather, 3 << 10, 1, false);
  EXPECT_FALSE(detail::coalesce_messages(greedy.algorithm, ring, LinkModel::kTacos).has_value());
}

TEST(MessageCoalescing, FullyConnectedSendsEachShareInOneMessage) {
  // fc:8, 64 MiB, K = 4: the greedy needs K = 4 steps of 2 MiB (4 x 39.5625 us); every chunk
  // is at its source from the start and nothing forwards, so the rounds merge each link's four
  // messages into one: 0.5 + 4 x 39.0625 = 156.75 us (K = 1's time).
  const Topology fc8 = make("fc:8");
  const SynthesisResult greedy = synthesize(fc8, CollectiveKind::kAllGather, 64 << 20, 4, false);
  const SynthesisResult merged = synthesize(fc8, CollectiveKind::kAllGather, 64 << 20, 4, true);
  EXPECT_EQ(greedy.collective_time, 4 * (kLatency + serialization_time(2 << 20, 50)));
  EXPECT_EQ(merged.collective_time, kLatency + 4 * serialization_time(2 << 20, 50));
  EXPECT_EQ(merged.algorithm.transfers().size(), 56u);  // one per link
}

TEST(MessageCoalescing, NotAppliedUnderTheAstraModelNorThroughSwitches) {
  // Under the astra model a link is busy for the bytes alone: a merge saves nothing.
  const Topology fc8 = make("fc:8");
  const SynthesisResult a =
      synthesize(fc8, CollectiveKind::kAllGather, 64 << 20, 4, false, LinkModel::kAstra);
  EXPECT_FALSE(detail::coalesce_messages(a.algorithm, fc8, LinkModel::kAstra).has_value());
  // Switch devices: the domain relay sizes messages there.
  const Topology s8 = make("switch:8");
  const SynthesisResult s = synthesize(s8, CollectiveKind::kAllGather, 64 << 20, 4, false);
  EXPECT_FALSE(detail::coalesce_messages(s.algorithm, s8, LinkModel::kTacos).has_value());
}

TEST(MessageCoalescing, GatherFlowsToOneRootShareMessages) {
  // mesh2d:8x8 Gather, 1 MiB, K = 1: 16 KiB chunks (0.31 us) against 0.5 us per message, all
  // converging on the root's 2 in-links. The routed flows are coalesced too; measured 25.77 ->
  // 17.96 us.
  const Topology mesh = make("mesh2d:8x8");
  const SynthesisResult greedy = synthesize(mesh, CollectiveKind::kGather, 1 << 20, 1, false);
  const SynthesisResult merged = synthesize(mesh, CollectiveKind::kGather, 1 << 20, 1, true);
  EXPECT_LT(static_cast<double>(merged.collective_time),
            0.75 * static_cast<double>(greedy.collective_time));
  const VerifyResult v = verify_algorithm(merged.algorithm, mesh, LinkModel::kTacos);
  EXPECT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.collective_time, merged.collective_time);
}

struct Case {
  std::string spec, bandwidth;
};

TEST(MessageCoalescing, EveryCollectiveVerifiesReplaysAndIsNeverSlower) {
  const std::vector<Case> cases = {{"torus2d:4x4", "50"},   {"mesh2d:4x4", "50,25"},
                                   {"ring:8", "50"},        {"hypercube:16", "50"},
                                   {"torus3d:3x3x3", "50"}, {"ring:4,fc:4", "50"}};
  const CollectiveKind kinds[] = {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                                  CollectiveKind::kAllReduce, CollectiveKind::kBroadcast,
                                  CollectiveKind::kReduce,    CollectiveKind::kGather,
                                  CollectiveKind::kScatter,   CollectiveKind::kAllToAll};
  int faster = 0;
  for (const Case& c : cases) {
    const Topology t = make(c.spec, c.bandwidth);
    for (CollectiveKind kind : kinds)
      for (int k : {1, 4}) {
        const std::string what = c.spec + " " + to_string(kind) + " K=" + std::to_string(k);
        const SynthesisResult greedy = synthesize(t, kind, 1 << 20, k, false);
        const SynthesisResult merged = synthesize(t, kind, 1 << 20, k, true);
        const VerifyResult v = verify_algorithm(merged.algorithm, t, LinkModel::kTacos);
        ASSERT_TRUE(v.ok) << what << ": " << v.error;
        EXPECT_EQ(v.collective_time, merged.collective_time) << what;
        EXPECT_EQ(simulate(merged.algorithm, t, LinkModel::kTacos).collective_time,
                  merged.collective_time)
            << what;
        EXPECT_LE(merged.collective_time, greedy.collective_time) << what;
        faster += merged.collective_time < greedy.collective_time ? 1 : 0;
      }
  }
  // Measured: most of the 96 cases gain (1 MiB: small chunks, latency matters).
  EXPECT_GE(faster, 24);
}

}  // namespace
}  // namespace tacos
