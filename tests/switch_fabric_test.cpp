// Switches as devices (docs/design.md "Switch fabrics"): hand-worked times through one switch,
// every collective verified and simulated to its synthesized time on switch fabrics under both
// link models, the routes' shape, and the paper's unwinding kept as before.
#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>
#include <tuple>

#include "tacos/algorithm/verify.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"
#include "tacos/topology/switch_routes.h"
#include "test_printers.h"

namespace tacos {
namespace {

Topology fabric(const std::string& spec, const std::string& bandwidth = "50") {
  return generate_topology(spec, parse_link_params(bandwidth, "0.5us"));
}

SynthesisResult run(const Topology& topology, CollectiveKind kind, Bytes size, int k,
                    LinkModel model = LinkModel::kTacos, int trials = 1, bool coalesce = true) {
  SynthesisOptions options;
  options.coalesce = coalesce;
  options.link_model = model;
  options.trials = trials;
  options.threads = 1;
  return synthesize_tacos(topology, Collective::make(kind, topology.npus(), size, k), options);
}

// 16 MiB (64 MiB All-Gather over 4 NPUs, K = 1) over one 50 GB/s port: 312.5 us.
constexpr Time kPort16MiB = 312'500'000;
constexpr Time kLatency = 500'000;

TEST(SwitchFabric, AllGatherOnFourPortsByHand) {
  // switch:4, K = 1: three rounds, each a permutation of senders to receivers (no port
  // carries two messages at once). tacos model: a port is busy for latency + 312.5 us, the
  // switch forwards each message after it has fully arrived, so the last message reaches
  // its NPU one port time after the third round: 4 x 313 us.
  const Topology t = fabric("switch:4");
  const SynthesisResult tacos = run(t, CollectiveKind::kAllGather, 64 << 20, 1);
  EXPECT_EQ(tacos.collective_time, 4 * (kPort16MiB + kLatency));
  EXPECT_EQ(tacos.transfers, 12);
  // astra model: a port is free after 312.5 us; the three sends leave at 0, 312.5, 625 us and
  // the last one takes two port times plus two latencies: 625 + 2 x 313 = 1251 us.
  const SynthesisResult astra = run(t, CollectiveKind::kAllGather, 64 << 20, 1, LinkModel::kAstra);
  EXPECT_EQ(astra.collective_time, 2 * kPort16MiB + 2 * (kPort16MiB + kLatency));
  // Reduce-Scatter mirrors it; All-Reduce is both, back to back (every reduction ends last).
  EXPECT_EQ(run(t, CollectiveKind::kReduceScatter, 64 << 20, 1).collective_time,
            4 * (kPort16MiB + kLatency));
  EXPECT_EQ(run(t, CollectiveKind::kAllReduce, 64 << 20, 1).collective_time,
            8 * (kPort16MiB + kLatency));
  EXPECT_EQ(run(t, CollectiveKind::kAllToAll, 64 << 20, 1, LinkModel::kAstra).collective_time,
            2 * kPort16MiB + 2 * (kPort16MiB + kLatency));
}

TEST(SwitchFabric, MessagesHoldOnePortAtATime) {
  // Every message of a switch:8 All-Gather goes NPU -> switch -> NPU, and no NPU uplink
  // carries two messages at once (the verifier checks first hops; the simulator replays the
  // down hops in their FIFO order to the same time).
  const Topology t = fabric("switch:8");
  const SynthesisResult r = run(t, CollectiveKind::kAllGather, 64 << 20, 4);
  const VerifyResult v = verify_algorithm(r.algorithm, t, LinkModel::kTacos);
  ASSERT_TRUE(v.ok) << v.error;
  const Time hop = serialization_time(2 << 20, 50) + kLatency;  // 2 MiB chunks
  for (const Transfer& x : r.algorithm.transfers()) {
    EXPECT_FALSE(t.is_switch(x.src));
    EXPECT_FALSE(t.is_switch(x.dst));
    EXPECT_GE(x.end - x.start, 2 * hop);
  }
  // 28 messages into every NPU: at best 28 port times plus the last one's second hop.
  EXPECT_GE(r.collective_time, 29 * hop);
  EXPECT_LE(r.collective_time, 32 * hop);
}

TEST(SwitchFabric, NearTheBoundOnASwitch) {
  // switch:8 All-Gather 64 MiB, K = 8, 8 trials: 56 messages per port of 1 MiB (20.03 us with
  // latency) plus one down hop: 57 x 20.03 = 1141.78 us, 1.044 x the 1093.75 us bound.
  const Topology t = fabric("switch:8");
  const SynthesisResult r = run(t, CollectiveKind::kAllGather, 64 << 20, 8, LinkModel::kTacos, 8);
  EXPECT_EQ(r.collective_time, 57 * (serialization_time(1 << 20, 50) + kLatency));
}

TEST(SwitchFabric, UnwindKeepsThePapersModel) {
  // --switch-model unwind: the paper's direct links of B/(P-1) and latency 2L, and the paper's
  // greedy (the CLI runs it without message coalescing). Each NPU receives
  // K = 4 chunks over each in-link, one after another, its own before relayed ones: 4 steps
  // (before own-chunks-first the matcher needed 5: 1372.1875 us on switch:8, 1469.84375 on 16).
  const Topology s8 = fabric("switch:8").unwind_switches();
  EXPECT_EQ(
      run(s8, CollectiveKind::kAllGather, 64 << 20, 4, LinkModel::kTacos, 1, false).collective_time,
      4 * (serialization_time(2 << 20, 50.0 / 7) + 2 * kLatency));
  const Topology s16 = fabric("switch:16").unwind_switches();
  EXPECT_EQ(run(s16, CollectiveKind::kAllGather, 64 << 20, 4, LinkModel::kTacos, 1, false)
                .collective_time,
            4 * (serialization_time(1 << 20, 50.0 / 15) + 2 * kLatency));
}

TEST(SwitchFabric, FatTreeGenerators) {
  // fattree:8x4x2 --bandwidth 50,200: 32 hosts, 4 leaves, 2 spines; non-blocking (8 x 50 =
  // 2 x 200). Links: 2 x 32 host links + 2 x 4 x 2 leaf-spine links.
  const Topology t = fabric("fattree:8x4x2", "50,200");
  EXPECT_EQ(t.npus(), 32);
  EXPECT_EQ(t.switches(), 6);
  EXPECT_EQ(t.num_links(), 2 * 32 + 2 * 8);
  EXPECT_GE(t.find_link(9, 33), 0);  // host 9 is host 1 of leaf 1 (switch 33)
  EXPECT_DOUBLE_EQ(t.link(t.find_link(9, 33)).bandwidth_gbps, 50.0);
  EXPECT_DOUBLE_EQ(t.link(t.find_link(33, 36)).bandwidth_gbps, 200.0);  // leaf 1 -> spine 0
  t.require_strongly_connected();
  // fattree3:2x2x2x2: 2 pods of (2 leaves x 2 hosts, 2 aggregation switches), 2 cores.
  const Topology three = fabric("fattree3:2x2x2x2", "50,100,200");
  EXPECT_EQ(three.npus(), 8);
  EXPECT_EQ(three.switches(), 2 * (2 + 2) + 2);
  // Aggregation switch 1 of pod 1 (id 8 + 4 + 3 = 15) reaches core 1 (id 17).
  ASSERT_GE(three.find_link(15, 17), 0);
  EXPECT_DOUBLE_EQ(three.link(three.find_link(15, 17)).bandwidth_gbps, 200.0);
  EXPECT_EQ(SwitchRoutes(three).num_switch_pairs(), 8 * 7);
  EXPECT_THROW(fabric("fattree:4x2"), Error);
  EXPECT_THROW(fabric("fattree:4x2x2", "1,2,3"), Error);
  EXPECT_THROW(fabric("fattree:1x1x1"), Error);
  // Unwinding covers one switch tier: a leaf-spine fabric is an error naming the device model.
  try {
    (void)t.unwind_switches();
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--switch-model device"), std::string::npos);
  }
}

TEST(SwitchFabric, TooManyRoutesIsAClearErrorUpFront) {
  // 20,000 NPUs on one switch: 4e8 pairs. Refused before any route is built.
  const Topology t = fabric("switch:20000");
  try {
    const SwitchRoutes routes(t);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("399980000 NPU pairs"), std::string::npos) << e.what();
  }
}

TEST(SwitchFabric, RoutesOfAFatTreeSpreadOverSpines) {
  // fattree:2x2x2: hosts 0,1 on leaf 4, hosts 2,3 on leaf 5, spines 6 and 7.
  const Topology t = fabric("fattree:2x2x2");
  const SwitchRoutes routes(t);
  EXPECT_EQ(routes.route(0, 1).size(), 2u);
  std::set<DeviceId> spines;
  for (NpuId a : {0, 1})
    for (NpuId b : {2, 3}) {
      const auto route = routes.route(a, b);
      ASSERT_EQ(route.size(), 4u);
      EXPECT_EQ(t.link(route[0]).dst, 4);
      spines.insert(t.link(route[1]).dst);
      EXPECT_EQ(t.link(route[2]).dst, 5);
      EXPECT_EQ(t.link(route[3]).dst, b);
    }
  EXPECT_EQ(spines.size(), 2u) << "ECMP: both spines carry some pair";
  // Fewest hops first, then the widest: a 2-NPU node whose NPUs share a fast and a slow switch.
  const Topology two(2, 2,
                     {Link{0, 2, 10, 0}, Link{2, 0, 10, 0}, Link{1, 2, 10, 0}, Link{2, 1, 10, 0},
                      Link{0, 3, 90, 0}, Link{3, 0, 90, 0}, Link{1, 3, 90, 0}, Link{3, 1, 90, 0}});
  const SwitchRoutes two_routes(two);
  const auto wide = two_routes.route(0, 1);
  ASSERT_EQ(wide.size(), 2u);
  EXPECT_EQ(two.link(wide[0]).dst, 3);
}

struct QualityCase {
  const char* spec;
  CollectiveKind kind;
  int k;
  LinkModel model;
  double at_most;  // x the lower bound, 64 MiB, 8 trials
};
void PrintTo(const QualityCase& c, std::ostream* os) {
  *os << c.spec << " " << to_string(c.kind) << " K=" << c.k << " " << to_string(c.model)
      << " at most " << c.at_most << " x bound";
}

class SwitchFabricQuality : public ::testing::TestWithParam<QualityCase> {};

TEST_P(SwitchFabricQuality, NearTheBound) {
  const QualityCase& c = GetParam();
  const Topology t = generate_topology(c.spec, LinkParams{});  // datasheet numbers for dgx
  const SynthesisResult r = run(t, c.kind, 64 << 20, c.k, c.model, 8);
  const LowerBound bound =
      compute_lower_bound(t, Collective::make(c.kind, t.npus(), 64 << 20, c.k));
  EXPECT_LE(to_micros(r.collective_time), c.at_most * bound.lower_bound_us);
}

// Measured values (docs/quality.md, "Switch fabrics" quality table) with a little room.
INSTANTIATE_TEST_SUITE_P(
    Fabrics, SwitchFabricQuality,
    ::testing::Values(
        QualityCase{"dgx-a100:2", CollectiveKind::kAllGather, 32, LinkModel::kAstra, 1.05},
        QualityCase{"dgx-a100:2", CollectiveKind::kAllReduce, 32, LinkModel::kAstra, 1.05},
        QualityCase{"dgx-h100:2", CollectiveKind::kAllReduce, 8, LinkModel::kAstra, 1.10},
        QualityCase{"dgx-a100:2", CollectiveKind::kAllGather, 8, LinkModel::kTacos, 1.21},
        QualityCase{"switch:16", CollectiveKind::kAllGather, 4, LinkModel::kTacos, 1.05},
        QualityCase{"switch:16", CollectiveKind::kAllReduce, 4, LinkModel::kTacos, 1.05},
        QualityCase{"switch:8", CollectiveKind::kBroadcast, 128, LinkModel::kAstra, 1.12}),
    [](const auto& info) {
      std::string name = std::string(info.param.spec) + "_" + to_string(info.param.kind) + "_K" +
                         std::to_string(info.param.k) + "_" + to_string(info.param.model);
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

using Case = std::tuple<std::string, CollectiveKind, int, LinkModel>;

class SwitchFabricProperties : public ::testing::TestWithParam<Case> {};

TEST_P(SwitchFabricProperties, VerifiedAndSimulatedExactly) {
  const auto& [spec, kind, k, model] = GetParam();
  const Topology t = fabric(spec, spec.rfind("fattree3", 0) == 0  ? "50,100,100"
                                  : spec.rfind("fattree", 0) == 0 ? "50,100"
                                                                  : "50");
  const Bytes size = 1 << 20;
  const SynthesisResult r = run(t, kind, size, k, model);
  const VerifyResult v = verify_algorithm(r.algorithm, t, model);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.collective_time, r.collective_time);
  EXPECT_EQ(simulate(r.algorithm, t, model).collective_time, r.collective_time);
  // The simulator's replay is a fixpoint: simulating the retimed schedule changes nothing.
  const Algorithm retimed = with_simulated_times(r.algorithm, simulate(r.algorithm, t, model));
  EXPECT_EQ(simulate(retimed, t, model).collective_time, r.collective_time);
}

INSTANTIATE_TEST_SUITE_P(
    Fabrics, SwitchFabricProperties,
    ::testing::Combine(::testing::Values("switch:8", "fattree:2x2x2", "dgx-a100:2",
                                         "ring:2,switch:4", "fattree3:2x2x2x2"),
                       ::testing::Values(CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                                         CollectiveKind::kAllReduce, CollectiveKind::kBroadcast,
                                         CollectiveKind::kReduce, CollectiveKind::kGather,
                                         CollectiveKind::kScatter, CollectiveKind::kAllToAll),
                       ::testing::Values(1, 3),
                       ::testing::Values(LinkModel::kTacos, LinkModel::kAstra)),
    [](const auto& info) {
      std::string name = std::get<0>(info.param) + "_" + to_string(std::get<1>(info.param)) + "_K" +
                         std::to_string(std::get<2>(info.param)) + "_" +
                         to_string(std::get<3>(info.param));
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

class SwitchFabricBaselines : public ::testing::TestWithParam<std::tuple<std::string, Baseline>> {};

TEST_P(SwitchFabricBaselines, BaselinesRunThroughSwitches) {
  const auto& [spec, baseline] = GetParam();
  const Topology t = fabric(spec);
  for (CollectiveKind kind :
       {CollectiveKind::kAllGather, CollectiveKind::kAllReduce, CollectiveKind::kBroadcast}) {
    for (int k : {1, 8}) {
      const Collective c = Collective::make(kind, t.npus(), 1 << 20, k);
      if (baseline_inapplicable(baseline, switch_route_view(t), c)) continue;
      const Algorithm a = synthesize_baseline(baseline, t, c, LinkModel::kTacos);
      const VerifyResult v = verify_algorithm(a, t, LinkModel::kTacos);
      ASSERT_TRUE(v.ok) << v.error;
      EXPECT_EQ(v.collective_time, a.collective_time);
      EXPECT_EQ(simulate(a, t, LinkModel::kTacos).collective_time, a.collective_time);
      for (const Transfer& x : a.transfers()) {
        EXPECT_FALSE(t.is_switch(x.src));
        EXPECT_FALSE(t.is_switch(x.dst));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fabrics, SwitchFabricBaselines,
                         ::testing::Combine(::testing::Values("switch:8", "dgx-a100:2",
                                                              "fattree:4x2x2"),
                                            ::testing::Values(Baseline::kRing, Baseline::kDirect,
                                                              Baseline::kRhd, Baseline::kDbt)),
                         [](const auto& info) {
                           std::string name =
                               std::get<0>(info.param) + "_" + to_string(std::get<1>(info.param));
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(SwitchFabric, RailRingsUseEveryNic) {
  // dgx-a100:2 All-Reduce, K = 8: NCCL's 8 rail rings, each crossing the network on two rails,
  // one each way; every NIC sends.
  const Topology t = generate_topology("dgx-a100:2", LinkParams{});  // datasheet numbers
  const Collective c = Collective::make(CollectiveKind::kAllReduce, 16, 64 << 20, 8);
  const Algorithm a = synthesize_baseline(Baseline::kRing, t, c, LinkModel::kAstra);
  std::set<NpuId> crossing;
  for (const Transfer& x : a.transfers())
    if (x.src / 8 != x.dst / 8) {
      EXPECT_EQ(x.src % 8, x.dst % 8) << "crosses on its own rail";
      crossing.insert(x.src);
    }
  EXPECT_EQ(crossing.size(), 16u);
  // Within 1.10 x NCCL's multi-ring formula 2(n-1)/n x size / (per-rail bw x rails).
  const double formula_us = 2.0 * 15 / 16 * (64 << 20) / (25 * kBytesPerGB * 8) * 1e6;
  EXPECT_LE(to_micros(a.collective_time), 1.10 * formula_us);
}

}  // namespace
}  // namespace tacos
