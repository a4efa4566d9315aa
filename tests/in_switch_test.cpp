// Reducing switches (issue "In-network reduction"): a switch that adds up what is sent to it
// and sends what it holds. Hand-worked times of tacos's in-switch plan and of NCCL's NVLS under
// both link models, the verifier tracking contributor sets through the switch (hand-made bad
// schedules), the simulator's errors, and the All-Reduce bound that holds with such a switch.
#include "../src/synthesis/in_switch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_support.h"
#include "tacos/algorithm/verify.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"
#include "test_printers.h"

namespace tacos {
namespace {

// A chunk of 2^20 bytes on a 1 GB/s (2^30 B/s) port takes exactly 1/1024 s.
constexpr Time kChunk = 976'562'500;
constexpr Time kLatency = 500'000;  // 0.5 us
constexpr Bytes kChunkBytes = Bytes{1} << 20;

// N NPUs on one switch (device N), 1 GB/s and 0.5 us per port, reducing (and multicast) or not.
Topology star(int n, bool reducing) {
  std::vector<Link> links;
  for (int i = 0; i < n; ++i) {
    links.push_back({i, n, 1.0, kLatency});
    links.push_back({n, i, 1.0, kLatency});
  }
  Topology t(n, 1, links, "star");
  if (reducing) {
    t.set_reducing(n);
    t.set_multicast(n);
  }
  return t;
}

Collective all_reduce(int n, int k) {
  return Collective::make(CollectiveKind::kAllReduce, n, kChunkBytes * n * k, k);
}

SynthesisOptions options(LinkModel model) {
  SynthesisOptions o;
  o.link_model = model;
  o.threads = 1;
  return o;
}

TEST(ReducingSwitch, TopologyFlags) {
  Topology t = star(4, false);
  EXPECT_FALSE(t.is_reducing(4));
  EXPECT_EQ(t.reducing_switches(), 0);
  t.set_reducing(4);
  EXPECT_TRUE(t.is_reducing(4));
  EXPECT_FALSE(t.is_reducing(0));
  EXPECT_EQ(t.reducing_switches(), 1);
  EXPECT_THROW(t.set_reducing(0), Error);
}

// Every NPU sends each chunk up once; the switch sends each sum down to all as soon as every
// contribution is in. astra: port j-th chunk arrives at the switch at (j+1) t + L and reaches
// the NPUs at (j+2) t + 2L, so T = (N K + 1) t + 2 L = S / B + t + 2 L. tacos: a message holds a
// port for L + t, so T = (N K + 1)(L + t).
TEST(ReducingSwitch, TacosPlanAllReduceHandWorked) {
  for (int n : {2, 4, 8})
    for (int k : {1, 3}) {
      const Topology t = star(n, true);
      const Collective c = all_reduce(n, k);
      const SynthesisResult astra = synthesize_tacos(t, c, options(LinkModel::kAstra));
      EXPECT_EQ(astra.collective_time, (n * k + 1) * kChunk + 2 * kLatency) << n << " " << k;
      EXPECT_EQ(astra.algorithm.synthesizer, "tacos");
      // Each NPU sends N K chunks up and receives N K sums: 2 N^2 K transfers. With N = 2 the
      // unicast greedy also moves S each way and ties; the greedy is kept.
      if (n > 2) {
        EXPECT_EQ(astra.transfers, 2 * n * n * k);
      }
      const SynthesisResult tacos = synthesize_tacos(t, c, options(LinkModel::kTacos));
      EXPECT_EQ(tacos.collective_time, (n * k + 1) * (kChunk + kLatency)) << n << " " << k;
      for (const auto& [result, model] :
           {std::pair{&astra, LinkModel::kAstra}, std::pair{&tacos, LinkModel::kTacos}}) {
        const VerifyResult v = verify_algorithm(result->algorithm, t, model);
        EXPECT_TRUE(v.ok) << v.error;
        EXPECT_EQ(simulate(result->algorithm, t, model).collective_time, result->collective_time);
      }
    }
}

// NCCL's NVLS with N = 2, K = 1 (chunk c of shard c), astra (t per chunk, arrival L later):
// ld_reduce: both NPUs send chunks 0, 1 up in [0, t], [t, 2t]; sums complete at t + L and
// 2t + L and reach their owners at 2t + 2L and 3t + 2L. multimem.st: NPU 0 sends chunk 0 up at
// 2t + 2L (its port is free since 2t), arriving 3t + 3L; NPU 1 sends chunk 1 at 3t + 2L,
// arriving 4t + 3L. The switch writes chunk 0 to both in [3t + 3L, 4t + 3L] and chunk 1 in
// [4t + 3L, 5t + 3L]: T = 5t + 4L. tacos model (u = L + t per hop, ports held for it): the same
// steps at 5u. Each port carries S (1 + 1/N) = 3 chunks each way.
TEST(ReducingSwitch, NvlsBaselineHandWorked) {
  const Topology t = star(2, true);
  const Collective c = all_reduce(2, 1);
  const Algorithm astra = synthesize_baseline(Baseline::kNvls, t, c, LinkModel::kAstra);
  EXPECT_EQ(astra.collective_time, 5 * kChunk + 4 * kLatency);
  EXPECT_EQ(astra.synthesizer, "nvls");
  const Algorithm tacos = synthesize_baseline(Baseline::kNvls, t, c, LinkModel::kTacos);
  EXPECT_EQ(tacos.collective_time, 5 * (kChunk + kLatency));
  const SimulationResult sim = simulate(astra, t, LinkModel::kAstra);
  for (LinkId l = 0; l < t.num_links(); ++l) EXPECT_EQ(sim.link_busy_ps[l], 3 * kChunk);
  EXPECT_TRUE(verify_algorithm(astra, t, LinkModel::kAstra).ok);
  EXPECT_TRUE(verify_algorithm(tacos, t, LinkModel::kTacos).ok);
}

// At scale the ports carry S (1 + 1/N) each way, NCCL's NVLS traffic, and pipelining makes the
// time that plus a few pieces; tacos's plan moves S each way.
TEST(ReducingSwitch, NvlsTrafficAndTacosBeatsIt) {
  const int n = 8, k = 8;
  const Topology t = star(n, true);
  const Collective c = all_reduce(n, k);
  const Algorithm nvls = synthesize_baseline(Baseline::kNvls, t, c, LinkModel::kAstra);
  const SimulationResult sim = simulate(nvls, t, LinkModel::kAstra);
  const Time s_over_b = n * k * kChunk;
  for (LinkId l = 0; l < t.num_links(); ++l)
    EXPECT_EQ(sim.link_busy_ps[l], s_over_b + s_over_b / n) << l;
  EXPECT_GE(nvls.collective_time, s_over_b + s_over_b / n);
  EXPECT_LE(nvls.collective_time, s_over_b + s_over_b / n + 3 * (n + 1) * kChunk + 4 * kLatency);
  const SynthesisResult tacos = synthesize_tacos(t, c, options(LinkModel::kAstra));
  EXPECT_LT(static_cast<double>(tacos.collective_time),
            0.92 * static_cast<double>(nvls.collective_time));
  for (CollectiveKind kind :
       {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather, CollectiveKind::kAllReduce}) {
    const Collective ck = Collective::make(kind, n, kChunkBytes * n * k, k);
    for (LinkModel model : {LinkModel::kAstra, LinkModel::kTacos}) {
      const Algorithm a = synthesize_baseline(Baseline::kNvls, t, ck, model);
      const VerifyResult v = verify_algorithm(a, t, model);
      EXPECT_TRUE(v.ok) << to_string(kind) << ": " << v.error;
    }
  }
}

TEST(ReducingSwitch, NvlsInapplicable) {
  const Collective c = all_reduce(4, 1);
  EXPECT_EQ(baseline_inapplicable(Baseline::kNvls, star(4, false), c).value_or(""),
            "nvls needs one reducing switch (NVLink SHARP) joined to every NPU of the collective "
            "(e.g. switch:8:nvls or dgx-h100:1:nvls)");
  EXPECT_EQ(baseline_inapplicable(Baseline::kNvls, star(4, true),
                                  Collective::make(CollectiveKind::kBroadcast, 4, 1 << 20, 1))
                .value_or(""),
            "nvls is defined for all-gather, reduce-scatter and all-reduce, not broadcast");
  EXPECT_FALSE(baseline_inapplicable(Baseline::kNvls, star(4, true), c));
}

// Every collective the plan covers, both models: verified, simulated to its time, and never
// slower than the unicast greedy on the same star without reduction.
TEST(ReducingSwitch, EveryCollectiveVerifies) {
  const int n = 4;
  const Topology t = star(n, true);
  const Topology plain = star(n, false);
  for (CollectiveKind kind :
       {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kAllReduce,
        CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
    for (LinkModel model : {LinkModel::kAstra, LinkModel::kTacos}) {
      const Collective c = Collective::make(kind, n, kChunkBytes * n * 2, 2, {}, 1);
      const SynthesisResult r = synthesize_tacos(t, c, options(model));
      const VerifyResult v = verify_algorithm(r.algorithm, t, model);
      EXPECT_TRUE(v.ok) << to_string(kind) << ": " << v.error;
      EXPECT_EQ(v.collective_time, r.collective_time) << to_string(kind);
      const SynthesisResult unicast = synthesize_tacos(plain, c, options(model));
      EXPECT_LE(r.collective_time, unicast.collective_time) << to_string(kind);
      const LowerBound bound = compute_lower_bound(t, c);
      EXPECT_GE(to_micros(r.collective_time) * (1 + 1e-9), bound.lower_bound_us) << to_string(kind);
    }
  }
}

// With a reducing switch every NPU must still send and receive the whole buffer: S / B, not
// the unicast 2 (N - 1) / N x S / B (the gossip bound no longer holds).
TEST(ReducingSwitch, AllReduceBound) {
  const int n = 8, k = 1;
  const Collective c = all_reduce(n, k);
  const double s_over_b_us = to_micros(n * k * kChunk);
  EXPECT_NEAR(compute_lower_bound(star(n, true), c).bandwidth_bound_us, s_over_b_us, 1e-6);
  EXPECT_NEAR(compute_lower_bound(star(n, false), c).bandwidth_bound_us,
              2.0 * (n - 1) / n * s_over_b_us, 1e-6);
  // Reduce-Scatter keeps its bound: each NPU's contributions to the others' shards must leave.
  const Collective rs = Collective::make(CollectiveKind::kReduceScatter, n, kChunkBytes * n, 1);
  EXPECT_NEAR(compute_lower_bound(star(n, true), rs).bandwidth_bound_us,
              compute_lower_bound(star(n, false), rs).bandwidth_bound_us, 1e-9);
  EXPECT_EQ(compute_lower_bound(star(n, true), c).store_and_forward_bound_us, 0);
}

// Brute force: with every switch reducing, the All-Reduce bandwidth bound is the cut bound,
// max over device sets S holding members inside and outside of buffer / (bandwidth into S) and
// buffer / (bandwidth out of S), every set enumerated. Two small fabrics: a star, and two
// reducing switches of two NPUs each joined by a slower link.
TEST(ReducingSwitch, AllReduceBoundIsTheBruteForceCut) {
  std::vector<Topology> fabrics{star(4, true)};
  {
    std::vector<Link> links;
    for (int i = 0; i < 4; ++i) {
      const DeviceId s = 4 + i / 2;
      links.push_back({i, s, 2.0, kLatency});
      links.push_back({s, i, 2.0, kLatency});
    }
    links.push_back({4, 5, 1.0, kLatency});
    links.push_back({5, 4, 1.0, kLatency});
    links.push_back({0, 2, 0.5, kLatency});
    Topology t(4, 2, links, "two-domains");
    t.set_reducing(4);
    t.set_reducing(5);
    fabrics.push_back(std::move(t));
  }
  for (const Topology& t : fabrics) {
    const Collective c = all_reduce(4, 1);
    const double buffer = static_cast<double>(c.chunk_bytes()) * c.num_chunks();
    double worst = 0;
    for (int set = 1; set + 1 < (1 << t.devices()); ++set) {
      bool in = false, out = false;
      for (NpuId m : c.members()) (set >> m & 1 ? in : out) = true;
      if (!in || !out) continue;
      double into = 0, from = 0;
      for (const Link& l : t.links()) {
        const bool s = set >> l.src & 1, d = set >> l.dst & 1;
        if (!s && d) into += l.bandwidth_gbps;
        if (s && !d) from += l.bandwidth_gbps;
      }
      worst = std::max({worst, buffer / into, buffer / from});
    }
    const double expected_us = worst / kBytesPerGB * 1e6;
    EXPECT_NEAR(compute_lower_bound(t, c).bandwidth_bound_us, expected_us, 1e-6 * expected_us)
        << t.name();
  }
}

// The verifier follows contributor sets through the switch.
TEST(ReducingSwitch, VerifierRejectsBadSchedules) {
  const Topology t = star(2, true);
  const Collective c = all_reduce(2, 1);  // chunks 0 and 1, each summed over NPUs 0 and 1
  const Time hop = kChunk + kLatency;
  auto good = [&](Algorithm& a) {
    for (ChunkId ch : {0, 1}) {
      a.add_transfer(0, 2, ch * hop, (ch + 1) * hop, ch, true);
      a.add_transfer(1, 2, ch * hop, (ch + 1) * hop, ch, true);
      a.add_transfer(2, 0, (ch + 1) * hop, (ch + 2) * hop, ch, false);
      a.add_transfer(2, 1, (ch + 1) * hop, (ch + 2) * hop, ch, false);
    }
  };
  {
    Algorithm a(c);
    good(a);
    const VerifyResult v = verify_algorithm(a, t, LinkModel::kTacos);
    EXPECT_TRUE(v.ok) << v.error;
    EXPECT_EQ(v.collective_time, 3 * hop);
  }
  {  // NPU 0's contribution to chunk 0 twice
    Algorithm a(c);
    good(a);
    a.add_transfer(0, 2, 2 * hop, 3 * hop, 0, true);
    EXPECT_EQ(verify_algorithm(a, t, LinkModel::kTacos).error,
              "chunk 0: switch 2 receives NPU 0's contribution twice (transfer 8 (0 -> 2, chunk "
              "0) at 2931.1875 us)");
  }
  {  // the switch sends chunk 1's sum before NPU 1's part is in
    Algorithm a(c);
    a.add_transfer(0, 2, 0, hop, 0, true);
    a.add_transfer(1, 2, 0, hop, 0, true);
    a.add_transfer(2, 0, hop, 2 * hop, 0, false);
    a.add_transfer(2, 1, hop, 2 * hop, 0, false);
    a.add_transfer(0, 2, hop, 2 * hop, 1, true);
    a.add_transfer(2, 1, 2 * hop, 3 * hop, 1, false);
    a.add_transfer(1, 2, 2 * hop, 3 * hop, 1, true);
    a.add_transfer(2, 0, 3 * hop, 4 * hop, 1, false);
    EXPECT_EQ(verify_algorithm(a, t, LinkModel::kTacos).error,
              "chunk 1 at NPU 1 lacks the contribution of NPU 1");
  }
  {  // a switch without the capability holds nothing
    Algorithm a(c);
    good(a);
    EXPECT_EQ(verify_algorithm(a, star(2, false), LinkModel::kTacos).error,
              "transfer 0 (0 -> 2, chunk 0): messages go between NPUs; switch 2 does not reduce, "
              "so it only forwards them (only a reducing switch holds data)");
    EXPECT_THROW(simulate(a, star(2, false), LinkModel::kTacos), Error);
  }
  {  // the switch sends what it never got
    Algorithm a(c);
    a.add_transfer(2, 0, 0, hop, 0, false);
    const VerifyResult v = verify_algorithm(a, t, LinkModel::kTacos);
    EXPECT_EQ(v.error.substr(0, 71),
              "transfer 0 (2 -> 0, chunk 0) starts at 0 us and sends chunk 0 from swit");
  }
}

// dgx-h100:2 with NVLS on its NVSwitches (devices 16, 17; the rails stay unicast), and with
// SHARP on its rail leaves as well: the plan across domains verifies, replays to its time and is
// never slower than the unicast plan. Under the astra model at K = 64 it comes within 4% of the
// bound: a node must receive the whole buffer over its 8 NICs, 64 MiB / 400 GB/s = 156.25 us
// (measured 161.963 us; unicast 243.692 us, against its own bound of 234.375 us).
TEST(ReducingSwitch, DomainsAllReduce) {
  for (bool sharp : {false, true})
    for (LinkModel model : {LinkModel::kAstra, LinkModel::kTacos})
      for (int k : {4, 64}) {
        const Topology unicast = generate_topology("dgx-h100:2", LinkParams{});
        Topology t = unicast;
        t.set_reducing(16);
        t.set_reducing(17);
        if (sharp)
          for (DeviceId s = 18; s < t.devices(); ++s) t.set_reducing(s);
        const Collective c = Collective::make(CollectiveKind::kAllReduce, 16, 64 << 20, k);
        const SynthesisResult r = synthesize_tacos(t, c, options(model));
        const VerifyResult v = verify_algorithm(r.algorithm, t, model);
        ASSERT_TRUE(v.ok) << v.error;
        EXPECT_EQ(simulate(r.algorithm, t, model).collective_time, r.collective_time);
        const SynthesisResult plain = synthesize_tacos(unicast, c, options(model));
        EXPECT_LE(r.collective_time, plain.collective_time) << sharp << " " << k;
        const LowerBound bound = compute_lower_bound(t, c);
        EXPECT_NEAR(bound.lower_bound_us, 156.25, 1e-6);
        const double ratio = to_micros(r.collective_time) / bound.lower_bound_us;
        EXPECT_GE(ratio, 1.0);
        if (model == LinkModel::kAstra && k == 64) {
          EXPECT_LE(ratio, 1.05) << sharp;
        }
        if (model == LinkModel::kAstra && k == 4) {
          EXPECT_LT(r.collective_time, plain.collective_time) << sharp;
        }
        // NCCL's algorithms across nodes: verified, and never faster than tacos.
        for (Baseline b : {Baseline::kNvlsTree, Baseline::kCollnet}) {
          if (b == Baseline::kCollnet && !sharp) {
            EXPECT_EQ(baseline_inapplicable(b, t, c).value_or(""),
                      "collnet needs an InfiniBand SHARP switch joined to each rail (e.g. "
                      "dgx-h100:4:nvls:sharp)");
            continue;
          }
          const Algorithm a = synthesize_baseline(b, t, c, model);
          const VerifyResult va = verify_algorithm(a, t, model);
          EXPECT_TRUE(va.ok) << va.error;
          EXPECT_LE(r.collective_time, a.collective_time) << to_string(b) << " " << k;
        }
      }
}

namespace {

// `domains` NVLS domains of `d` NPUs (NVLink `nvlink_gbps`, 0.25 us per port; switches n, n + 1,
// ...) joined by d rails, one leaf each (50 GB/s and 1 us per NIC port).
Topology rail_joined_domains(int domains, int d, double nvlink_gbps) {
  const int n = domains * d;
  std::vector<Link> links;
  for (NpuId m = 0; m < n; ++m) {
    const DeviceId domain = n + m / d, leaf = n + domains + m % d;
    links.push_back({m, domain, nvlink_gbps, 250'000});
    links.push_back({domain, m, nvlink_gbps, 250'000});
    links.push_back({m, leaf, 50.0, 1'000'000});
    links.push_back({leaf, m, 50.0, 1'000'000});
  }
  Topology t(n, domains + d, links, "rail-joined-domains");
  for (DeviceId s = n; s < n + domains; ++s) {
    t.set_reducing(s);
    t.set_multicast(s);
  }
  return t;
}

// Bytes each NPU receives from a reducing switch (its NVLink domain's) in `plan`.
std::vector<Bytes> nvlink_ingress(const Algorithm& plan, const Topology& t) {
  std::vector<Bytes> in(t.npus());
  for (const Transfer& x : plan.transfers())
    if (t.is_reducing(x.src)) in[x.dst] += plan.collective().chunk_bytes() * x.num_chunks;
  return in;
}

}  // namespace

// Two NVLS domains of 16 NPUs (200 GB/s, 0.25 us per NVLink port) joined by 16 rails (one
// leaf each, 50 GB/s and 1 us per NIC port), the shape of two GB200 NVL72 racks with a NIC four
// times slower than NVLink instead of eighteen. A plan that moves the whole buffer through
// every NPU's NVLink port each way takes at least S / B = 64 MiB / 200 GB/s = 312.5 us (plus
// the first result's trip through both stages and the rail). tacos's plan hands some chunks to
// the rail peer over the NIC, which the rail stage leaves three-quarters idle, and finishes
// below that (measured 303.598 us under the astra model at K = 32), against the cut bound
// 64 MiB / (200 + 50) GB/s = 250 us. The NVLink ports carry less than the buffer.
TEST(ReducingSwitch, TwoDomainsOffloadToNics) {
  const int n = 32;
  const Topology t = rail_joined_domains(2, 16, 200.0);
  const Collective c = Collective::make(CollectiveKind::kAllReduce, n, Bytes{64} << 20, 32);
  const std::optional<Algorithm> plan = detail::in_switch_plan(t, c, LinkModel::kAstra);
  ASSERT_TRUE(plan.has_value());
  const VerifyResult v = verify_algorithm(*plan, t, LinkModel::kAstra);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.collective_time, plan->collective_time);
  const LowerBound bound = compute_lower_bound(t, c);
  EXPECT_NEAR(bound.lower_bound_us, 250.0, 1e-6);
  const double nvlink_only_us = 312.5;
  EXPECT_LT(to_micros(plan->collective_time), nvlink_only_us);
  EXPECT_GE(to_micros(plan->collective_time), bound.lower_bound_us);
  // Every NPU receives less than the buffer over NVLink; the rest comes over its NIC.
  const std::vector<Bytes> in = nvlink_ingress(*plan, t);
  for (NpuId m = 0; m < n; ++m) EXPECT_LT(in[m], c.size()) << m;
}

// With three domains (NVLink 100 GB/s, so that the NICs have time to spare beside the rail
// stage's 2 (M - 1) / M of a rail's share) each NPU hands chunks to its peer in the next domain,
// the last domain's to the first: the plan verifies, replays to its time and every NPU receives
// less than the buffer over NVLink.
TEST(ReducingSwitch, ThreeDomainsOffloadToTheNextDomain) {
  const int n = 48;
  const Topology t = rail_joined_domains(3, 16, 100.0);
  const Collective c = Collective::make(CollectiveKind::kAllReduce, n, Bytes{64} << 20, 16);
  const std::optional<Algorithm> plan = detail::in_switch_plan(t, c, LinkModel::kAstra);
  ASSERT_TRUE(plan.has_value());
  const VerifyResult v = verify_algorithm(*plan, t, LinkModel::kAstra);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.collective_time, plan->collective_time);
  const std::vector<Bytes> in = nvlink_ingress(*plan, t);
  for (NpuId m = 0; m < n; ++m) EXPECT_LT(in[m], c.size()) << m;
}

// Where the in-switch plan is faster than the lower bound of the same fabric without reducing
// switches (8 NPUs on one reducing switch, All-Reduce: S / B against 2 (N - 1) / N x S / B),
// the greedy, which never reduces in a switch, cannot win and is not run: its progress is
// never reported, only the end, and the result is the in-switch plan. Reduce-Scatter's
// in-switch plan moves what a unicast one does (its bound is the same), so the greedy runs.
TEST(ReducingSwitch, GreedySkippedWhereTheInSwitchPlanBeatsEveryUnicastPlan) {
  const Topology t = star(8, true);
  const Collective c = all_reduce(8, 4);
  std::vector<double> progress;
  SynthesisOptions o = options(LinkModel::kAstra);
  o.progress = [&](double fraction) { progress.push_back(fraction); };
  const SynthesisResult r = synthesize_tacos(t, c, o);
  const std::optional<Algorithm> plan = detail::in_switch_plan(t, c, LinkModel::kAstra);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(r.collective_time, plan->collective_time);
  EXPECT_LT(to_micros(r.collective_time), compute_lower_bound(star(8, false), c).lower_bound_us);
  EXPECT_EQ(progress, std::vector<double>{1.0});
  EXPECT_EQ(r.seed, o.seed);
  EXPECT_TRUE(verify_algorithm(r.algorithm, t, LinkModel::kAstra).ok);

  progress.clear();
  const Collective rs = Collective::make(CollectiveKind::kReduceScatter, 8, kChunkBytes * 8 * 4, 4);
  const SynthesisResult greedy = synthesize_tacos(t, rs, o);
  EXPECT_GT(progress.size(), 1U);
  EXPECT_TRUE(verify_algorithm(greedy.algorithm, t, LinkModel::kAstra).ok);
}

// Formats: algorithm.json carries in-switch transfers and `simulate` and `verify` of it give the
// printed time; Chakra ET and MSCCL-IR refuse with one line and leave no files; compare lists
// NCCL's in-switch algorithms where a switch reduces.
TEST(ReducingSwitch, FilesAndCommands) {
  namespace fs = std::filesystem;
  const fs::path dir = tacos_test::scratch_dir("in_switch");
  const std::string spec = "--topology switch:8:nvls --collective all-reduce --size 8MiB";
  for (const std::string model : {"astra", "tacos"}) {
    const auto made = tacos_test::run_tacos(
        "synthesize " + spec + " --chunks-per-npu 4 --json --format json --link-model " + model +
        " --out " + (dir / model).string());
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const auto printed = nlohmann::json::parse(made.out);
    const std::string file = (dir / model / "algorithm.json").string();
    const std::string text = tacos_test::read_file(file);
    EXPECT_NE(text.find("[0, 8, "), std::string::npos);  // NPU 0 -> the switch
    const auto replayed = tacos_test::run_tacos("simulate --topology switch:8:nvls --algorithm " +
                                                file + " --json --link-model " + model);
    ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
    EXPECT_EQ(nlohmann::json::parse(replayed.out)["collective_time_us"],
              printed["collective_time_us"]);
    const auto verified =
        tacos_test::run_tacos("verify --topology switch:8:nvls --algorithm " + file);
    EXPECT_EQ(verified.exit_code, 0) << verified.err;
    // On the same switch without the capability the file is wrong, and says why.
    const auto plain =
        tacos_test::run_tacos("verify --topology switch:8:multicast --algorithm " + file);
    EXPECT_NE(plain.exit_code, 0);
    EXPECT_NE((plain.out + plain.err).find("switch 8 does not reduce"), std::string::npos)
        << plain.out << plain.err;
  }
  for (const std::string format : {"chakra", "msccl"}) {
    const fs::path out = dir / format;
    const auto refused = tacos_test::run_tacos("synthesize " + spec + " --chunks-per-npu 4 --out " +
                                               out.string() + " --format json," + format);
    EXPECT_NE(refused.exit_code, 0);
    EXPECT_NE(refused.err.find("reduces in the network"), std::string::npos) << refused.err;
    EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
    EXPECT_FALSE(fs::exists(out / "algorithm.json"));
  }
  const auto compared =
      tacos_test::run_tacos("compare " + spec + " --chunks-per-npu 4 --json --link-model astra");
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  std::vector<std::string> names;
  const auto rows = nlohmann::json::parse(compared.out)["results"];
  for (const auto& row : rows) names.push_back(row["algorithm"]);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "tacos", "ring", "direct", "rhd", "dbt", "hierarchical", "biring", "bucket",
                       "node-direct", "relay", "torus-trees", "nvls", "nvls-tree", "collnet"}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tacos
