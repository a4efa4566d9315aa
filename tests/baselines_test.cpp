// Baselines (ring, direct, rhd, dbt, hierarchical, biring, bucket, node-direct): hand-worked times,
// verification of every baseline for every collective on a set of topologies, subsets, and
// inapplicable cases.
#include "tacos/synthesis/baselines.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "tacos/algorithm/verify.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"
#include "tacos/topology/generators.h"
#include "test_printers.h"

namespace tacos {
namespace {

Topology make(const std::string& spec) {
  return generate_topology(spec, parse_link_params("50", "0.5us")).unwind_switches();
}

constexpr Baseline kAllBaselines[] = {Baseline::kRing,   Baseline::kDirect,       Baseline::kRhd,
                                      Baseline::kDbt,    Baseline::kHierarchical, Baseline::kBiring,
                                      Baseline::kBucket, Baseline::kNodeDirect};
constexpr CollectiveKind kAllKinds[] = {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                                        CollectiveKind::kAllReduce, CollectiveKind::kBroadcast,
                                        CollectiveKind::kReduce,    CollectiveKind::kGather,
                                        CollectiveKind::kScatter,   CollectiveKind::kAllToAll};

// latency + bytes / bandwidth at 50 GB/s and 0.5 us.
Time step(Bytes bytes) { return 500'000 + serialization_time(bytes, 50.0); }

Algorithm run(Baseline baseline, const std::string& spec, CollectiveKind kind, Bytes size,
              int k = 1, LinkModel model = LinkModel::kTacos) {
  const Topology topology = make(spec);
  const Collective collective = Collective::make(kind, topology.npus(), size, k);
  return synthesize_baseline(baseline, topology, collective, model);
}

TEST(BaselineNames, ParseAndPrint) {
  for (Baseline b : kAllBaselines) EXPECT_EQ(parse_baseline(to_string(b)), b);
  EXPECT_EQ(to_string(Baseline::kHierarchical), "hierarchical");
  EXPECT_EQ(to_string(Baseline::kBiring), "biring");
  EXPECT_THROW(parse_baseline("tree"), Error);
  EXPECT_THROW(parse_baseline("Ring"), Error);
}

// ---- Hand-worked times ------------------------------------------------------------------------

TEST(BaselineHandWorked, RingAllReduceOnRing8) {
  // 2 x 7 steps, each one chunk of 1 MiB / 8 = 128 KiB to the ring successor.
  const Algorithm a = run(Baseline::kRing, "ring:8", CollectiveKind::kAllReduce, 1 << 20);
  EXPECT_EQ(a.collective_time, 14 * step(131072));
  EXPECT_NEAR(to_micros(a.collective_time), 41.1796875, 1e-4);  // 14 ps of rounding
  EXPECT_EQ(a.synthesizer, "ring");
  EXPECT_EQ(a.transfers().size(), 2u * 7 * 8);
}

TEST(BaselineHandWorked, DirectAllGatherOnFc8) {
  const Algorithm a = run(Baseline::kDirect, "fc:8", CollectiveKind::kAllGather, 1 << 20);
  EXPECT_EQ(a.collective_time, step(131072));
  EXPECT_NEAR(to_micros(a.collective_time), 2.94140625, 1e-5);
  EXPECT_EQ(a.transfers().size(), 56u);
}

TEST(BaselineHandWorked, RhdAllReduceOnHypercube8) {
  // Halving: 512, 256, 128 KiB; doubling: 128, 256, 512 KiB.
  const Time expected = 2 * (step(512 * 1024) + step(256 * 1024) + step(128 * 1024));
  const Algorithm a = run(Baseline::kRhd, "hypercube:8", CollectiveKind::kAllReduce, 1 << 20);
  EXPECT_EQ(a.collective_time, expected);
  EXPECT_NEAR(to_micros(a.collective_time), 37.1796875, 1e-5);
  EXPECT_EQ(a.transfers().size(), 6u * 8);
  EXPECT_EQ(a.synthesizer, "rhd");
}

TEST(BaselineHandWorked, HierarchicalAllReduceOnHypercube8IsRhd) {
  // Three dimensions of two: a ring of two per dimension is the rhd exchange.
  const Time expected = 2 * (step(512 * 1024) + step(256 * 1024) + step(128 * 1024));
  const Algorithm a =
      run(Baseline::kHierarchical, "hypercube:8", CollectiveKind::kAllReduce, 1 << 20);
  EXPECT_EQ(a.collective_time, expected);
}

TEST(BaselineHandWorked, RingAllGatherTurnsBothWays) {
  // K = 2 on a bidirectional ring: one piece clockwise, one counter-clockwise, at once: 7 steps
  // of 64 KiB.
  const Algorithm a = run(Baseline::kRing, "ring:8", CollectiveKind::kAllGather, 1 << 20, 2);
  EXPECT_EQ(a.collective_time, 7 * step(65536));
  // One way only on a unidirectional ring: 2 x 7 steps of 64 KiB.
  const Algorithm b = run(Baseline::kRing, "uniring:8", CollectiveKind::kAllGather, 1 << 20, 2);
  EXPECT_EQ(b.collective_time, 14 * step(65536));
}

// An All-Gather baseline with the switch as a device (not unwound), and its verification.
struct Verified {
  Algorithm algorithm;
  VerifyResult verified;
};
Verified through_switch(Baseline baseline, const std::string& spec, Bytes size, int k) {
  const Topology topology = generate_topology(spec, parse_link_params("50", "0.5us"));
  const Collective c = Collective::make(CollectiveKind::kAllGather, topology.npus(), size, k);
  Algorithm a = synthesize_baseline(baseline, topology, c, LinkModel::kTacos);
  VerifyResult v = verify_algorithm(a, topology, LinkModel::kTacos);
  return {std::move(a), std::move(v)};
}

TEST(BaselineHandWorked, RingPipelinesPiecesThroughASwitch) {
  // switch:8, K = 2, one ring (a full-duplex port carries both directions already). Hop-major
  // order: each uplink sends both pieces' first hop, then every later hop as soon as it
  // arrives (two port hops later): 14 messages back to back, plus the last one's down hop.
  const auto [a, v] = through_switch(Baseline::kRing, "switch:8", 1 << 20, 2);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(a.collective_time, 15 * step(65536));
}

TEST(BaselineHandWorked, DirectSendsInShiftOrderThroughASwitch) {
  // switch:4, 1 MiB All-Gather, K = 1: chunks of 256 KiB. NPU i sends to i+1, i+2, i+3 in
  // turn, so every round is a permutation: each down-port takes one message per round, right
  // after its up-hop. 3 up-hops back to back plus the last one's down-hop: 4 port steps. (All
  // senders starting with the same receiver took 32.296878 us: 3 messages queued on one port.)
  const auto [a, v] = through_switch(Baseline::kDirect, "switch:4", 1 << 20, 1);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(a.collective_time, 4 * step(262144));
  for (const Transfer& t : a.transfers()) {
    const Time round = (t.dst - t.src + 4) % 4 - 1;
    EXPECT_EQ(t.start, round * step(262144)) << t.src << " -> " << t.dst;
  }
}

TEST(BaselineHandWorked, HierarchicalAllReduceOnRing4Fc2) {
  // ring:4,fc:2 (8 NPUs, chunks of 128 KiB). Dimension 0, a ring of 4: 3 steps, each moving
  // one block of 2 chunks (256 KiB); dimension 1, fc of 2: one exchange of 1 chunk (128 KiB).
  // The all-gather mirrors it.
  const Time expected = 2 * (3 * step(262144) + step(131072));
  const Algorithm a =
      run(Baseline::kHierarchical, "ring:4,fc:2", CollectiveKind::kAllReduce, 1 << 20);
  EXPECT_EQ(a.collective_time, expected);
}

TEST(BaselineHandWorked, DbtBroadcastOnFc4) {
  // Root 0, K = 2 chunks of 512 KiB, one per tree; both trees over NPUs 1..3 (ranks 0..2) hang
  // below the root. Tree 0 (ranks 0 - 2 - 1): 0 -> 1 -> 3 -> 2; tree 1 (ranks shifted by one):
  // 0 -> 2 -> 1 -> 3. Three levels, the trees' transfers at each level on distinct links.
  const Topology topology = make("fc:4");
  const Collective c = Collective::make(CollectiveKind::kBroadcast, 4, 1 << 20, 2);
  const Algorithm a = synthesize_baseline(Baseline::kDbt, topology, c, LinkModel::kTacos);
  const VerifyResult v = verify_algorithm(a, topology, LinkModel::kTacos);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(a.transfers().size(), 6u);
  EXPECT_EQ(a.collective_time, 3 * step(524288));
}

TEST(BaselineHandWorked, DbtAllReduceOnFc8) {
  // 8 chunks of 128 KiB, 4 per tree; tree 0: 0 - 4 - {2, 6} - {1, 3, 5, 7} (depth 3), tree 1 its
  // mirror, on disjoint links. Reduce: chunk q leaves the leaves at step q and reaches the root
  // after step q + 2; broadcast from step q + 3 to q + 5: 3 + 3 + 3 steps for chunk 3.
  const Algorithm a = run(Baseline::kDbt, "fc:8", CollectiveKind::kAllReduce, 1 << 20);
  EXPECT_EQ(a.collective_time, 9 * step(131072));
}

TEST(BaselineHandWorked, RingAllToAllOnRing8) {
  // Step h: every NPU forwards one message of 7 - h chunks of 1 MiB / 8 = 128 KiB.
  Time expected = 0;
  for (int h = 0; h < 7; ++h) expected += step((7 - h) * 131072);
  const Algorithm a = run(Baseline::kRing, "ring:8", CollectiveKind::kAllToAll, 1 << 20);
  EXPECT_EQ(a.collective_time, expected);
  EXPECT_EQ(a.transfers().size(), 8u * 7);
}

TEST(BaselineHandWorked, RingGatherOnRing8) {
  // The link into the root carries 7 chunks of 128 KiB back to back.
  const Algorithm a = run(Baseline::kRing, "ring:8", CollectiveKind::kGather, 1 << 20);
  EXPECT_EQ(a.collective_time, 7 * step(131072));
}

TEST(BaselineRelays, DirectCopiesRelayPlainly) {
  // Direct all-gather on ring:8: every pair's message is relayed over its shortest path:
  // 8 x (1 + 1 + 2 + 2 + 3 + 3 + 4) hops.
  const Algorithm a = run(Baseline::kDirect, "ring:8", CollectiveKind::kAllGather, 1 << 20);
  EXPECT_EQ(a.transfers().size(), 8u * 16);
  for (const Transfer& t : a.transfers()) EXPECT_FALSE(t.reduce);
}

TEST(BaselineRelays, DirectPartialSumsCombineAtRelays) {
  // Direct reduce-scatter on ring:8: partial sums meeting at a relay are summed there, so each
  // NPU sends each other NPU's chunk once: 8 x 7 single-chunk reduce transfers.
  const Topology topology = make("ring:8");
  const Algorithm a = run(Baseline::kDirect, "ring:8", CollectiveKind::kReduceScatter, 1 << 20);
  EXPECT_EQ(a.transfers().size(), 8u * 7);
  for (const Transfer& t : a.transfers()) EXPECT_TRUE(t.reduce);
  const VerifyResult v = verify_algorithm(a, topology, LinkModel::kTacos);
  EXPECT_TRUE(v.ok) << v.error;
}

TEST(BaselineHandWorked, BiringHalvesTheChainThroughASwitch) {
  // switch:4, 1 MiB All-Gather, K = 1: chunks of 256 KiB. NPUs 0 and 2 send their chunk two
  // hops clockwise and one counter-clockwise, NPUs 1 and 3 the other way round. Each uplink
  // sends its own chunk both ways, then forwards the one that arrived two port steps after the
  // start: 3 up-hops back to back plus the last one's down-hop, 4 port steps. The ring's chain
  // of 3 store-and-forward hops (2 port steps each) takes 6.
  const auto [a, v] = through_switch(Baseline::kBiring, "switch:4", 1 << 20, 1);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(a.collective_time, 4 * step(262144));
  EXPECT_EQ(a.transfers().size(), 12u);
  const auto [ring, ring_check] = through_switch(Baseline::kRing, "switch:4", 1 << 20, 1);
  ASSERT_TRUE(ring_check.ok) << ring_check.error;
  EXPECT_EQ(ring.collective_time, 6 * step(262144));
}

TEST(BaselineHandWorked, BiringOnAFatTreeEndsOnLeafLinks) {
  // fattree:8x4x2, hosts at 50 GB/s, leaf uplinks at 200, K = 2: 1 MiB pieces, 62 sends per
  // host port (31 per piece), 20.03125 us each. The ports never idle; the alternation of the
  // longer direction makes no host's last send cross the spines, but the host on either side
  // of a leaf boundary has a leaf-crossing send or receive in its last pair: the last piece to
  // land left its sender after 61 sends and crossed a spine (2 host ports + 2 spine ports).
  const Topology topology =
      generate_topology("fattree:8x4x2", parse_link_params("50,200", "0.5us"));
  const Collective c = Collective::make(CollectiveKind::kAllGather, 32, 64 << 20, 2);
  const Algorithm a = synthesize_baseline(Baseline::kBiring, topology, c, LinkModel::kTacos);
  const VerifyResult v = verify_algorithm(a, topology, LinkModel::kTacos);
  ASSERT_TRUE(v.ok) << v.error;
  const Time host = step(1 << 20);
  const Time spine = 500'000 + serialization_time(1 << 20, 200.0);
  EXPECT_EQ(a.collective_time, 61 * host + 2 * host + 2 * spine);
  EXPECT_EQ(a.collective_time, 1'272'734'376);
  // NCCL's ring needs its pieces to travel 31 hops: slower at every K.
  for (int k : {1, 2, 4}) {
    const Collective ck = Collective::make(CollectiveKind::kAllGather, 32, 64 << 20, k);
    EXPECT_LT(a.collective_time,
              synthesize_baseline(Baseline::kRing, topology, ck, LinkModel::kTacos).collective_time)
        << "K=" << k;
  }
}

TEST(BaselineTwoNpus, EveryBaselineOnTwo) {
  for (const std::string spec : {"ring:2", "fc:2", "hypercube:2"}) {
    const Topology topology = make(spec);
    for (Baseline baseline : kAllBaselines)
      for (CollectiveKind kind : kAllKinds) {
        const Collective collective = Collective::make(kind, 2, 1 << 20, 2, {}, 1);
        if (baseline_inapplicable(baseline, topology, collective)) continue;
        const Algorithm a = synthesize_baseline(baseline, topology, collective, LinkModel::kTacos);
        const VerifyResult v = verify_algorithm(a, topology, LinkModel::kTacos);
        EXPECT_TRUE(v.ok) << to_string(baseline) << " " << to_string(kind) << " on " << spec << ": "
                          << v.error;
      }
  }
}

// ---- Every baseline, every collective, every topology -----------------------------------------

struct SweepCase {
  std::string spec;
  LinkModel model;
};
void PrintTo(const SweepCase& c, std::ostream* os) { *os << c.spec << " " << to_string(c.model); }

class BaselineSweep : public ::testing::TestWithParam<SweepCase> {};

TEST_P(BaselineSweep, VerifiesOrSaysWhyNot) {
  const SweepCase& param = GetParam();
  const Topology topology = make(param.spec);
  for (Baseline baseline : kAllBaselines)
    for (CollectiveKind kind : kAllKinds)
      for (int k : {1, 2}) {
        const NpuId root = has_root(kind) ? topology.npus() / 2 + 1 : 0;
        const Collective collective = Collective::make(kind, topology.npus(), 3 << 20, k, {}, root);
        const std::string what = to_string(baseline) + " " + to_string(kind) +
                                 " K=" + std::to_string(k) + " on " + param.spec + " (" +
                                 to_string(param.model) + ")";
        const auto reason = baseline_inapplicable(baseline, topology, collective);
        if (reason) {
          EXPECT_FALSE(reason->empty()) << what;
          EXPECT_THROW(synthesize_baseline(baseline, topology, collective, param.model), Error)
              << what;
          continue;
        }
        Algorithm algorithm;
        ASSERT_NO_THROW(algorithm =
                            synthesize_baseline(baseline, topology, collective, param.model))
            << what;
        EXPECT_EQ(algorithm.synthesizer, to_string(baseline)) << what;
        EXPECT_EQ(algorithm.link_model, param.model) << what;
        const VerifyResult check = verify_algorithm(algorithm, topology, param.model);
        EXPECT_TRUE(check.ok) << what << ": " << check.error;
        EXPECT_EQ(check.collective_time, algorithm.collective_time) << what;
        const SimulationResult sim = simulate(algorithm, topology, param.model);
        EXPECT_EQ(sim.collective_time, algorithm.collective_time) << what;
      }
}

INSTANTIATE_TEST_SUITE_P(
    BaselineTopologies, BaselineSweep,
    ::testing::Values(
        SweepCase{"ring:8", LinkModel::kTacos}, SweepCase{"ring:8", LinkModel::kAstra},
        SweepCase{"mesh2d:4x4", LinkModel::kTacos}, SweepCase{"mesh2d:4x4", LinkModel::kAstra},
        SweepCase{"torus2d:4x4", LinkModel::kTacos}, SweepCase{"torus2d:4x4", LinkModel::kAstra},
        SweepCase{"fc:8", LinkModel::kTacos}, SweepCase{"fc:8", LinkModel::kAstra},
        SweepCase{"switch:8", LinkModel::kTacos}, SweepCase{"switch:8", LinkModel::kAstra},
        SweepCase{"hypercube:16", LinkModel::kTacos}, SweepCase{"hypercube:16", LinkModel::kAstra},
        SweepCase{"ring:4,fc:2,switch:2", LinkModel::kTacos},
        SweepCase{"ring:4,fc:2,switch:2", LinkModel::kAstra},
        // Beyond the list: no Hamiltonian cycle, odd N, a unidirectional
        // ring, a 3D mesh.
        SweepCase{"mesh2d:3x3", LinkModel::kTacos}, SweepCase{"ring:6", LinkModel::kTacos},
        SweepCase{"uniring:5", LinkModel::kAstra}, SweepCase{"mesh3d:2x3x2", LinkModel::kTacos},
        SweepCase{"ring:3,uniring:3", LinkModel::kTacos}),
    [](const ::testing::TestParamInfo<SweepCase>& info) {
      std::string name = info.param.spec + "_" + to_string(info.param.model);
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

// ---- Subsets ----------------------------------------------------------------------------------

TEST(BaselineSubsets, RingAndDirectVerifyOnSubsets) {
  struct Case {
    std::string spec;
    std::vector<NpuId> members;
  };
  const Case cases[] = {{"ring:8", {0, 2, 5, 7}},
                        {"ring:8", {1, 2, 3}},
                        {"mesh2d:4x4", {0, 5, 6, 9, 15}},
                        {"torus2d:4x4", {1, 4, 11, 14}},
                        {"hypercube:16", {0, 3, 5, 6, 9, 10, 12, 15}}};
  for (const Case& c : cases) {
    const Topology topology = make(c.spec);
    for (Baseline baseline : kAllBaselines)
      for (CollectiveKind kind : kAllKinds)
        for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra}) {
          const Collective collective =
              Collective::make(kind, topology.npus(), 1 << 20, 2, c.members, c.members.back());
          const std::string what = to_string(baseline) + " " + to_string(kind) + " on " + c.spec +
                                   " subset of " + std::to_string(c.members.size());
          const auto reason = baseline_inapplicable(baseline, topology, collective);
          if (baseline == Baseline::kRing || baseline == Baseline::kDirect ||
              (baseline == Baseline::kBiring &&
               (kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter ||
                kind == CollectiveKind::kAllReduce))) {
            EXPECT_FALSE(reason) << what;
          }
          if (reason) continue;
          Algorithm algorithm;
          ASSERT_NO_THROW(algorithm = synthesize_baseline(baseline, topology, collective, model))
              << what;
          const VerifyResult check = verify_algorithm(algorithm, topology, model);
          EXPECT_TRUE(check.ok) << what << ": " << check.error;
        }
  }
}

TEST(BaselineSubsets, RingRelaysThroughNonMembers) {
  // Members 0, 2, 4, 6 of ring:8: every ring edge is two hops through an odd NPU.
  const Topology topology = make("ring:8");
  const Collective collective =
      Collective::make(CollectiveKind::kAllGather, 8, 1 << 20, 1, {0, 2, 4, 6});
  const Algorithm a = synthesize_baseline(Baseline::kRing, topology, collective, LinkModel::kTacos);
  EXPECT_EQ(a.transfers().size(), 4u * 3 * 2);
  // Three logical steps of two hops, 256 KiB each.
  EXPECT_EQ(a.collective_time, 6 * step(262144));
}

// ---- Inapplicable -----------------------------------------------------------------------------

TEST(BaselineInapplicable, Reasons) {
  const Topology ring6 = make("ring:6");
  const Collective ar6 = Collective::make(CollectiveKind::kAllReduce, 6, 1 << 20, 1);
  EXPECT_EQ(baseline_inapplicable(Baseline::kRhd, ring6, ar6),
            "rhd needs a power-of-two NPU count (N = 6)");
  EXPECT_THROW(synthesize_baseline(Baseline::kRhd, ring6, ar6, LinkModel::kTacos), Error);

  const Topology ring8 = make("ring:8");
  const Collective bc = Collective::make(CollectiveKind::kBroadcast, 8, 1 << 20, 1);
  EXPECT_EQ(baseline_inapplicable(Baseline::kRhd, ring8, bc),
            "rhd is defined for all-gather, reduce-scatter and all-reduce, not broadcast");
  EXPECT_EQ(baseline_inapplicable(Baseline::kBiring, ring8, bc),
            "biring is defined for all-gather, reduce-scatter and all-reduce, not broadcast");
  const Collective ag = Collective::make(CollectiveKind::kAllGather, 8, 1 << 20, 1);
  EXPECT_EQ(baseline_inapplicable(Baseline::kDbt, ring8, ag),
            "dbt is defined for all-reduce, broadcast and reduce, not all-gather");
  const Collective ar8 = Collective::make(CollectiveKind::kAllReduce, 8, 1 << 20, 1);
  EXPECT_EQ(baseline_inapplicable(Baseline::kHierarchical, ring8, ar8),
            "hierarchical needs two or more dimensions of size > 1; 'ring:8' has 1");
  // Links given one by one (a tacos YAML links file) have no dimensions.
  const Topology listed(8, 0, ring8.links(), "ring8.yaml");
  EXPECT_EQ(baseline_inapplicable(Baseline::kHierarchical, listed, ar8),
            "hierarchical needs the dimensions of a generator topology (such as ring:4,fc:8 or "
            "torus2d:4x4); 'ring8.yaml' has none");
  const Collective sub = Collective::make(CollectiveKind::kAllReduce, 8, 1 << 20, 1, {0, 1, 2, 3});
  const Topology t24 = make("ring:2,ring:4");
  EXPECT_EQ(baseline_inapplicable(Baseline::kHierarchical, t24, sub),
            "hierarchical needs every NPU of the topology in the collective (4 of 8 selected)");
  EXPECT_FALSE(baseline_inapplicable(Baseline::kHierarchical, t24, ar8));
  EXPECT_FALSE(baseline_inapplicable(Baseline::kRing, ring6, ar6));
  EXPECT_FALSE(baseline_inapplicable(Baseline::kDirect, ring6, ar6));
  EXPECT_FALSE(baseline_inapplicable(Baseline::kDbt, ring6, ar6));
}

// ---- Budget -----------------------------------------------------------------------------------

// Direct All-Gather on a torus2d:S x S: from any NPU the hop counts along one ring of S sum to
// 2 (1 + ... + (S/2 - 1)) + S/2 = S^2 / 4, so S x S^2 / 4 x 2 hops per source, each routed hop one
// transfer. Counted before anything is built: the 1,024-NPU case costs no memory.
TEST(BaselineBudget, OverTheBudgetSaysHowManyTransfers) {
  auto message = [](const std::string& spec, int k) -> std::string {
    const Topology torus = make(spec);
    const Collective ag = Collective::make(CollectiveKind::kAllGather, torus.npus(), 64 << 20, k);
    try {
      synthesize_baseline(Baseline::kDirect, torus, ag, LinkModel::kTacos);
    } catch (const BaselineOverBudget& over) {
      return over.what();
    }
    return "built";
  };
  // 1,024 sources x 32 x 256 x 2 = 16,777,216.
  EXPECT_EQ(message("torus2d:32x32", 1),
            "16777216 chunk transfers routed hop by hop > 2097152, the baselines' budget");
  // 256 sources x 16 x 64 x 2 = 524,288 per piece: K = 4 is the budget itself, K = 5 is over.
  EXPECT_EQ(message("torus2d:16x16", 5),
            "2621440 chunk transfers routed hop by hop > 2097152, the baselines' budget");
  EXPECT_EQ(kBaselineTransferBudget, 4 * 524288);
}

// A message counts once per chunk it carries: the ring's All-to-All on uniring:N sends, on the
// h-th hop from each NPU, one message with the N - h chunks still going further, so N x N (N - 1)
// / 2 chunk transfers in N (N - 1) messages: 162 x 162 x 161 / 2 = 2,112,642 in 26,082 messages,
// counted before the messages are collected.
TEST(BaselineBudget, MessagesCountTheirChunks) {
  const Topology ring = make("uniring:162");
  const Collective all_to_all = Collective::make(CollectiveKind::kAllToAll, 162, 64 << 20, 1);
  try {
    synthesize_baseline(Baseline::kRing, ring, all_to_all, LinkModel::kTacos);
    ADD_FAILURE() << "built";
  } catch (const BaselineOverBudget& over) {
    EXPECT_STREQ(over.what(),
                 "at least 2112642 chunk transfers (one hop per message) > 2097152, the "
                 "baselines' budget");
  }
}

// ---- Building blocks --------------------------------------------------------------------------

TEST(BaselineRingOrder, HamiltonianCycles) {
  for (const std::string spec : {"ring:8", "mesh2d:4x4", "torus2d:4x4", "fc:8", "switch:8",
                                 "hypercube:16", "ring:4,fc:2,switch:2", "torus2d:16x16",
                                 "mesh2d:8x8", "torus3d:4x4x4", "hypercube:64", "mesh2d:3x4"}) {
    const Topology topology = make(spec);
    const std::vector<NpuId> cycle = detail::hamiltonian_cycle(topology);
    ASSERT_EQ(static_cast<int>(cycle.size()), topology.npus()) << spec;
    std::vector<NpuId> sorted = cycle;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < topology.npus(); ++i) ASSERT_EQ(sorted[i], i) << spec;
    for (std::size_t i = 0; i < cycle.size(); ++i)
      EXPECT_GE(topology.find_link(cycle[i], cycle[(i + 1) % cycle.size()]), 0) << spec;
  }
  // A 3x3 mesh is bipartite with an odd number of NPUs: no cycle; the ring falls back.
  EXPECT_TRUE(detail::hamiltonian_cycle(make("mesh2d:3x3")).empty());
  const Topology ring8 = make("ring:8");
  std::vector<NpuId> identity(8);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(detail::hamiltonian_cycle(ring8), identity);
}

TEST(BaselineRingOrder, SnakeCycles) {
  for (const std::string spec :
       {"mesh2d:16x16", "mesh2d:3x4", "mesh2d:4x3", "mesh3d:3x3x4", "mesh3d:4x3x3", "torus2d:5x4",
        "hypercube:32", "ring:4,fc:2,switch:2", "ring:3,fc:3,switch:2"}) {
    const Topology topology = make(spec);
    const std::vector<NpuId> cycle = detail::snake_cycle(topology.shape().dimensions);
    ASSERT_EQ(static_cast<int>(cycle.size()), topology.npus()) << spec;
    std::vector<NpuId> sorted = cycle;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < topology.npus(); ++i) ASSERT_EQ(sorted[i], i) << spec;
    for (std::size_t i = 0; i < cycle.size(); ++i)
      EXPECT_GE(topology.find_link(cycle[i], cycle[(i + 1) % cycle.size()]), 0) << spec;
  }
  EXPECT_TRUE(detail::snake_cycle(make("mesh3d:3x3x3").shape().dimensions).empty());
  EXPECT_TRUE(detail::snake_cycle(make("uniring:4,ring:2").shape().dimensions).empty());
  EXPECT_TRUE(detail::snake_cycle(make("ring:8").shape().dimensions).empty());
  // The ring baseline on a 16x16 mesh runs over the snake: 2 x 255 steps of one chunk.
  const Algorithm a = run(Baseline::kRing, "mesh2d:16x16", CollectiveKind::kAllGather, 256 << 10);
  EXPECT_EQ(a.collective_time, 255 * step(1024));
}

// The generators record what they built (Topology::shape); the baselines read their
// dimensions from it, never from the spec text.
TEST(TopologyShape, GeneratorsRecordTheirDimensions) {
  using W = DimensionWiring;
  auto dims = make("ring:4,fc:8,switch:4").shape().dimensions;
  ASSERT_EQ(dims.size(), 3u);
  EXPECT_EQ(dims[0].wiring, W::kRing);
  EXPECT_EQ(dims[1].size, 8);
  EXPECT_EQ(dims[2].wiring, W::kSwitch);
  const Topology torus = make("torus2d:4x2");
  EXPECT_EQ(torus.shape().kind, TopologyKind::kTorus2d);
  dims = torus.shape().dimensions;
  ASSERT_EQ(dims.size(), 2u);
  EXPECT_EQ(dims[0].size, 4);
  EXPECT_EQ(dims[1].wiring, W::kRing);
  EXPECT_EQ(make("mesh3d:2x3x4").shape().dimensions.size(), 3u);
  EXPECT_EQ(make("hypercube:16").shape().dimensions.size(), 4u);
  // Switch fabrics: the node's NVSwitch, then the rails; the leaf, then the leaves.
  const Topology dgx = generate_topology("dgx-a100:2", LinkParams{});
  EXPECT_EQ(dgx.shape().kind, TopologyKind::kDgxA100);
  ASSERT_EQ(dgx.shape().dimensions.size(), 2u);
  EXPECT_EQ(dgx.shape().dimensions[0], (ShapeDimension{W::kSwitch, 8}));
  EXPECT_EQ(dgx.shape().dimensions[1].size, 2);
  const TopologyShape tree = generate_topology("fattree:8x4x2", LinkParams{}).shape();
  EXPECT_EQ(tree.kind, TopologyKind::kFatTree);
  ASSERT_EQ(tree.dimensions.size(), 2u);
  EXPECT_EQ(tree.dimensions[0].size, 8);
  EXPECT_EQ(tree.dimensions[1].size, 4);
  EXPECT_EQ(tree.hosts, 8);
  EXPECT_EQ(tree.leaves, 4);
  EXPECT_EQ(tree.spines, 2);
  EXPECT_TRUE(generate_topology("dgx1", LinkParams{}).shape().dimensions.empty());
  EXPECT_EQ(generate_topology("dgx1", LinkParams{}).shape().kind, TopologyKind::kDgx1);
  // Views the baselines plan on keep it.
  const Topology star = generate_topology("switch:8", LinkParams{});
  EXPECT_EQ(star.unwind_switches().shape().dimensions, star.shape().dimensions);
}

// The multicast suffix is a capability, not a dimension: the spec parsers used to disagree on
// it, so that switch:8:multicast and dgx-h100:2:multicast gave the ring and hierarchical
// baselines no dimensions.
TEST(TopologyShape, MulticastSuffixKeepsTheDimensions) {
  const Topology plain = generate_topology("ring:2,switch:4", LinkParams{});
  const Topology multicast = generate_topology("ring:2,switch:4:multicast", LinkParams{});
  EXPECT_EQ(multicast.shape().dimensions, plain.shape().dimensions);
  EXPECT_EQ(multicast.multicast_switches(), 2);
  const Topology h100 = generate_topology("dgx-h100:2:multicast", LinkParams{});
  EXPECT_EQ(h100.shape().dimensions,
            generate_topology("dgx-h100:2", LinkParams{}).shape().dimensions);
  const Collective ar = Collective::make(CollectiveKind::kAllReduce, 8, 1 << 20, 1);
  EXPECT_FALSE(baseline_inapplicable(Baseline::kHierarchical, multicast, ar));
  const Algorithm a =
      synthesize_baseline(Baseline::kHierarchical, multicast, ar, LinkModel::kTacos);
  EXPECT_TRUE(verify_algorithm(a, multicast, LinkModel::kTacos).ok);
}

}  // namespace
}  // namespace tacos
