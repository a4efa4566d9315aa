// Batched messages in the greedy (src/synthesis/greedy_matcher.h): a free link sends several
// chunks in one message. A hand-worked ring, the switch that turns it off, and on larger
// direct-link fabrics the batched schedules verify, replay to their time and keep every message
// within the batch limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "../src/synthesis/greedy_matcher.h"
#include "tacos/algorithm/verify.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"

namespace tacos {
namespace {

SynthesisResult all_gather(const std::string& spec, Bytes size, int k, bool batch) {
  const Topology topology = generate_topology(spec, parse_link_params("50", "0.5us"));
  SynthesisOptions options;
  options.threads = 1;
  options.batch = batch;
  return synthesize_tacos(
      topology, Collective::make(CollectiveKind::kAllGather, topology.npus(), size, k), options);
}

TEST(MessageBatching, RingOfFourSendsEachNeighbourItsFourChunksAtOnce) {
  // ring:4, 64 KiB All-Gather, K = 4: 4 KiB chunks take 0.076 us against 0.5 us of latency.
  // Batched, each NPU sends its four chunks to both neighbours in one message of 16 KiB
  // (0.5 + 0.305176 us), then one neighbour forwards the four chunks of the NPU opposite in
  // one more: 2 x 0.805176 us, in 8 + 4 messages of 4 chunks. One chunk per message (coalesced
  // afterwards where that delays nothing) takes 2.457764 us.
  const Time message = 500'000 + serialization_time(16 << 10, 50);
  ASSERT_EQ(message, 805'176);
  const SynthesisResult batched = all_gather("ring:4", 64 << 10, 4, true);
  EXPECT_EQ(batched.collective_time, 2 * message);
  ASSERT_EQ(batched.algorithm.transfers().size(), 12u);
  for (const Transfer& t : batched.algorithm.transfers()) EXPECT_EQ(t.num_chunks, 4);
  EXPECT_EQ(all_gather("ring:4", 64 << 10, 4, false).collective_time, 2'457'764);
}

TEST(MessageBatching, LargeChunksAreNotBatched) {
  // 64 MiB on ring:4: 4 MiB chunks take 78 us against 0.5 us of latency, so no batch size
  // applies and the schedule is the greedy's, message for message.
  const SynthesisResult on = all_gather("ring:4", 64 << 20, 4, true);
  const SynthesisResult off = all_gather("ring:4", 64 << 20, 4, false);
  EXPECT_EQ(on.collective_time, off.collective_time);
  EXPECT_EQ(on.algorithm.transfers().size(), off.algorithm.transfers().size());
}

// Batched messages of different sizes started in different rounds can arrive together, so a
// round of arrivals is not grouped by receiver. Two threads must still give the schedule of
// one (rounds of two events and more go parallel here, as rounds of 2,048 do at scale; only
// beyond 1,024 NPUs, where picks do not count a chunk's holders).
TEST(MessageBatching, TwoThreadsGiveTheScheduleOfOne) {
  using Row = std::tuple<DeviceId, DeviceId, Time, Time, std::vector<ChunkId>>;
  for (const char* spec : {"torus2d:33x33"}) {
    const Topology topology = generate_topology(spec, parse_link_params("50", "0.5us"));
    const Collective collective =
        Collective::make(CollectiveKind::kAllGather, topology.npus(), 4 << 20, 1);
    auto rows = [&](int threads) {
      const ProgressCallback quiet;
      detail::GreedyMatcher matcher(topology, collective, LinkModel::kTacos, 3, true, quiet,
                                    threads, detail::GreedyMatcher::kBatchLatencies[0]);
      EXPECT_TRUE(matcher.batches()) << spec;
      matcher.set_parallel_round(2);
      matcher.run();
      const Algorithm algorithm = matcher.take_algorithm();
      std::vector<Row> out;
      for (const Transfer& t : algorithm.transfers()) {
        const auto chunks = algorithm.chunks(t);
        out.emplace_back(t.src, t.dst, t.start, t.end,
                         std::vector<ChunkId>(chunks.begin(), chunks.end()));
      }
      return out;
    };
    const std::vector<Row> one = rows(1);
    const std::vector<Row> two = rows(2);
    ASSERT_EQ(one.size(), two.size()) << spec;
    for (std::size_t i = 0; i < one.size(); ++i)
      ASSERT_EQ(one[i], two[i]) << spec << " transfer " << i;
  }
}

// Without a transfer list (--time-only) the batched runs are timed alone: the result is the
// fastest of the plain greedy and the three message sizes, run one by one here.
TEST(MessageBatching, TimeOnlyKeepsTheFastestOfPlainAndBatched) {
  const Topology topology = generate_topology("torus2d:16x16", parse_link_params("50", "0.5us"));
  // 64 KiB chunks (1.22 us against 0.5 us of latency): 2, 6 and 11 chunks per message.
  const Collective collective =
      Collective::make(CollectiveKind::kAllGather, topology.npus(), Bytes{64} << 20, 4);
  auto matcher_time = [&](int latencies) {
    const ProgressCallback quiet;
    detail::GreedyMatcher matcher(topology, collective, LinkModel::kTacos, 1, false, quiet, 1,
                                  latencies);
    matcher.run();
    return matcher.collective_time();
  };
  const Time plain = matcher_time(0);
  Time fastest = plain;
  for (const int latencies : detail::GreedyMatcher::kBatchLatencies)
    fastest = std::min(fastest, matcher_time(latencies));
  EXPECT_LT(fastest, plain);
  SynthesisOptions options;
  options.threads = 1;
  options.keep_transfers = false;
  EXPECT_EQ(synthesize_tacos(topology, collective, options).collective_time, fastest);
  options.batch = false;
  EXPECT_EQ(synthesize_tacos(topology, collective, options).collective_time, plain);
}

// The plain greedy's floor that lets --time-only skip it: ring:4, 64 MiB All-Gather, K = 1.
// Each NPU lacks 3 chunks of 16 MiB and has 2 in-links, each busy 0.5 + 312.5 us per message:
// 3 / (2 / 313 us) = 469.5 us. The greedy itself takes two steps, 626 us.
TEST(MessageBatching, OneChunkPerMessageMinimumByHandAndBelowThePlainGreedy) {
  const Topology ring = generate_topology("ring:4", parse_link_params("50", "0.5us"));
  const Collective c = Collective::make(CollectiveKind::kAllGather, 4, Bytes{64} << 20, 1);
  const Time minimum =
      detail::GreedyMatcher::one_chunk_per_message_minimum(ring, c, LinkModel::kTacos);
  EXPECT_NEAR(static_cast<double>(minimum), 469.5e6, 1.0);
  EXPECT_LE(minimum, 469'500'000);
  for (const char* spec : {"torus2d:6x6", "mesh2d:4x4", "hypercube:16", "fc:8", "ring:5"})
    for (const CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kBroadcast})
      for (const int k : {1, 4}) {
        const Topology t = generate_topology(spec, parse_link_params("50", "0.5us"));
        const Collective collective = Collective::make(kind, t.npus(), 1 << 20, k);
        const ProgressCallback quiet;
        detail::GreedyMatcher plain(t, collective, LinkModel::kTacos, 1, false, quiet);
        plain.run();
        const Time floor =
            detail::GreedyMatcher::one_chunk_per_message_minimum(t, collective, LinkModel::kTacos);
        EXPECT_GT(floor, 0) << spec;
        EXPECT_LE(floor, plain.collective_time()) << spec << " " << to_string(kind) << " K " << k;
      }
  // Chunks that go to one NPU each: no such floor.
  EXPECT_EQ(
      detail::GreedyMatcher::one_chunk_per_message_minimum(
          ring, Collective::make(CollectiveKind::kAllToAll, 4, 1 << 20, 1), LinkModel::kTacos),
      0);
}

class BatchedFabrics : public ::testing::TestWithParam<const char*> {};

TEST_P(BatchedFabrics, VerifyReplayAndNeverLoseToOneChunkPerMessage) {
  const std::string spec = GetParam();
  const Topology topology = generate_topology(spec, parse_link_params("50", "0.5us"));
  for (const CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                                    CollectiveKind::kAllReduce, CollectiveKind::kBroadcast}) {
    const std::string what = spec + " " + to_string(kind);
    const Collective c = Collective::make(kind, topology.npus(), 1 << 20, 8);
    SynthesisOptions options;
    options.threads = 1;
    const SynthesisResult batched = synthesize_tacos(topology, c, options);
    options.batch = false;
    const SynthesisResult plain = synthesize_tacos(topology, c, options);
    EXPECT_LE(batched.collective_time, plain.collective_time) << what;
    const VerifyResult check = verify_algorithm(batched.algorithm, topology, LinkModel::kTacos);
    ASSERT_TRUE(check.ok) << what << ": " << check.error;
    EXPECT_EQ(check.collective_time, batched.collective_time) << what;
    EXPECT_EQ(simulate(batched.algorithm, topology, LinkModel::kTacos).collective_time,
              batched.collective_time)
        << what;
    for (const Transfer& t : batched.algorithm.transfers()) ASSERT_LE(t.num_chunks, 32) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Fabrics, BatchedFabrics,
                         ::testing::Values("torus2d:6x6", "mesh2d:4x4", "hypercube:16", "fc:8"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (ch == ':') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace tacos
