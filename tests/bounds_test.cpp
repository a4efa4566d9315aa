// Lower bounds: closed-form oracles and a brute-force enumeration over every device set.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include "tacos/bounds/lower_bound.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/topology/generators.h"

namespace tacos {
namespace {

constexpr Bytes kSize = Bytes{64} << 20;  // 64 MiB

Topology gen(const std::string& spec, const std::string& bandwidth, const std::string& latency) {
  return generate_topology(spec, parse_link_params(bandwidth, latency));
}

LowerBound bound(const Topology& t, CollectiveKind kind, Bytes size = kSize, int k = 1,
                 std::vector<NpuId> members = {}, NpuId root = 0) {
  return compute_lower_bound(t, Collective::make(kind, t.npus(), size, k, members, root));
}

// Seconds for `bytes` at `gbps`.
double seconds(double bytes, double gbps) { return bytes / (gbps * kBytesPerGB); }
double algbw_gbps(Bytes size, const LowerBound& b) {
  return static_cast<double>(size) / kBytesPerGB / (b.bandwidth_bound_us * 1e-6);
}

void expect_rel(double actual, double expected, const std::string& what = "") {
  EXPECT_NEAR(actual, expected, 1e-6 * std::abs(expected)) << what;
}

// Two fully connected groups (in-group links `inside` GB/s) joined by one link each way
// between NPU a-1 and NPU a (`between` GB/s); NPUs 0..a-1 and a..n-1.
Topology two_groups(int a, int n, double inside, double between) {
  std::vector<Link> links;
  for (int u = 0; u < n; ++u)
    for (int v = 0; v < n; ++v)
      if (u != v && (u < a) == (v < a)) links.push_back(Link{u, v, inside, 0});
  links.push_back(Link{a - 1, a, between, 0});
  links.push_back(Link{a, a - 1, between, 0});
  return Topology(n, 0, std::move(links), "two-groups");
}

TEST(BoundOracle, SwitchAllGatherAlgbw) {
  const LowerBound b = bound(gen("switch:8", "300", "0"), CollectiveKind::kAllGather);
  expect_rel(algbw_gbps(kSize, b), 8.0 * 300.0 / 7.0);
  EXPECT_EQ(b.latency_bound_us, 0.0);
  EXPECT_EQ(b.lower_bound_us, b.bandwidth_bound_us);
  EXPECT_TRUE(b.bandwidth_bound_exact);
}

TEST(BoundOracle, RingAllGatherIngress) {
  const double bw = 50;
  const LowerBound b = bound(gen("ring:8", "50", "0"), CollectiveKind::kAllGather);
  expect_rel(b.bandwidth_bound_us, seconds(7.0 * kSize / 8, 2 * bw) * 1e6);
  // Chunked: the same bound for any K.
  const LowerBound k4 = bound(gen("ring:8", "50", "0"), CollectiveKind::kAllGather, kSize, 4);
  expect_rel(k4.bandwidth_bound_us, b.bandwidth_bound_us);
}

TEST(BoundOracle, GroupCutAllGather) {
  const Topology t = two_groups(4, 8, 100, 10);
  const LowerBound b = bound(t, CollectiveKind::kAllGather);
  expect_rel(algbw_gbps(kSize, b), 20.0);
  expect_rel(b.bandwidth_bound_us, seconds(4.0 * kSize / 8, 10) * 1e6);
}

TEST(BoundOracle, UniRingAllGather) {
  const LowerBound b = bound(gen("uniring:4", "25", "0"), CollectiveKind::kAllGather);
  expect_rel(b.bandwidth_bound_us, seconds(3.0 * kSize / 4, 25) * 1e6);
  // Reduce-scatter on the reversed uniring is the same ring: same bound.
  expect_rel(bound(gen("uniring:4", "25", "0"), CollectiveKind::kReduceScatter).bandwidth_bound_us,
             b.bandwidth_bound_us);
}

TEST(BoundOracle, ReduceScatterEqualsAllGatherAndAllReduceTwice) {
  const std::vector<Topology> symmetric = {gen("ring:8", "50", "0"),
                                           gen("switch:8", "300", "0"),
                                           gen("torus2d:4x4", "50", "0"),
                                           gen("uniring:4", "25", "0"),
                                           gen("ring:4,switch:4", "100,50", "0"),
                                           two_groups(4, 8, 100, 10),
                                           gen("hypercube:8", "40", "0")};
  for (const Topology& t : symmetric) {
    const double ag = bound(t, CollectiveKind::kAllGather).bandwidth_bound_us;
    expect_rel(bound(t, CollectiveKind::kReduceScatter).bandwidth_bound_us, ag, t.name());
    expect_rel(bound(t, CollectiveKind::kAllReduce).bandwidth_bound_us, 2 * ag, t.name());
  }
}

// The sum "reduce-scatter bound + all-gather bound" would give 1.5 x buffer / B here, but each
// group can reduce locally and exchange one buffer each way in about buffer / B: the all-reduce
// bound must not exceed that.
// dgx-a100:4: 4 nodes, each 8 NICs of 25 GB/s on rail leaves, NVSwitch inside. The nodes are the
// gossip parties: every byte position crosses into a node 2(4-1) = 6 times, over 4 x 8 NICs:
// 6 x 64 MiB / 800 GB/s = 468.75 us, the time of reduce-scatter + all-gather over the rails
// (the single-NPU gossip bound gave 372.6 us, which no schedule reaches).
TEST(BoundOracle, AllReduceOnDgxPodCountsNodesAsGossipParties) {
  const LowerBound b = bound(gen("dgx-a100:4", "", ""), CollectiveKind::kAllReduce);
  expect_rel(b.bandwidth_bound_us, seconds(6.0 * kSize, 4 * 8 * 25) * 1e6);
  // Two fast pairs {0,1} and {2,3} (100 GB/s) joined by slow links (10 GB/s) both ways.
  std::vector<Link> links;
  for (auto [u, v, bw] :
       std::vector<std::tuple<int, int, double>>{{0, 1, 100}, {2, 3, 100}, {0, 2, 10}, {1, 3, 10}})
    for (auto [a, c] : {std::pair{u, v}, std::pair{v, u}}) links.push_back(Link{a, c, bw, 0});
  const Topology pairs(4, 0, std::move(links), "pairs");
  // Two parties, 2 x buffer over 4 slow links of 10: buffer / 20 GB/s.
  expect_rel(bound(pairs, CollectiveKind::kAllReduce).bandwidth_bound_us,
             seconds(static_cast<double>(kSize), 20) * 1e6);
}

TEST(BoundOracle, AllReduceUnbalancedGroupsIsNotTheSum) {
  const Topology t = two_groups(2, 8, 1000, 10);
  const double ag = bound(t, CollectiveKind::kAllGather).bandwidth_bound_us;
  expect_rel(ag, seconds(6.0 * kSize / 8, 10) * 1e6);
  const LowerBound ar = bound(t, CollectiveKind::kAllReduce);
  expect_rel(ar.bandwidth_bound_us, seconds(static_cast<double>(kSize), 10) * 1e6);
  EXPECT_LT(ar.bandwidth_bound_us, 2 * ag);
}

TEST(BoundOracle, BroadcastAndReduceOnRing) {
  const Topology t = gen("ring:8", "50", "0");
  for (NpuId root : {0, 5}) {
    const double expected = seconds(static_cast<double>(kSize), 2 * 50) * 1e6;
    expect_rel(bound(t, CollectiveKind::kBroadcast, kSize, 1, {}, root).bandwidth_bound_us,
               expected);
    expect_rel(bound(t, CollectiveKind::kReduce, kSize, 4, {}, root).bandwidth_bound_us, expected);
  }
}

TEST(BoundOracle, GatherScatterAndAllToAll) {
  // switch:8: the root's port carries 7 of the 8 chunks; all-to-all: each NPU receives 7.
  const Topology t = gen("switch:8", "300", "0");
  const double expected = seconds(7.0 * kSize / 8, 300) * 1e6;
  expect_rel(bound(t, CollectiveKind::kGather, kSize, 1, {}, 3).bandwidth_bound_us, expected);
  expect_rel(bound(t, CollectiveKind::kScatter, kSize, 1, {}, 3).bandwidth_bound_us, expected);
  expect_rel(bound(t, CollectiveKind::kAllToAll).bandwidth_bound_us, expected);
  // ring:8 all-to-all: half the ring sends 16 chunks over 2 links into the other half.
  const LowerBound ring = bound(gen("ring:8", "50", "0"), CollectiveKind::kAllToAll);
  expect_rel(ring.bandwidth_bound_us, seconds(16.0 * kSize / 8, 2 * 50) * 1e6);
}

TEST(BoundOracle, AllToAllCandidateCutsOnLargeTopologies) {
  // 33 devices: no enumeration; the single-NPU cut is the exact one on a switch.
  const LowerBound sw = bound(gen("switch:32", "100", "0"), CollectiveKind::kAllToAll);
  EXPECT_FALSE(sw.bandwidth_bound_exact);
  expect_rel(sw.bandwidth_bound_us, seconds(31.0 * kSize / 32, 100) * 1e6);
  // ring:24: the half cut (12 x 12 chunks over 2 links), found by the index halves.
  const LowerBound ring = bound(gen("ring:24", "50", "0"), CollectiveKind::kAllToAll);
  expect_rel(ring.bandwidth_bound_us, seconds(144.0 * kSize / 24, 2 * 50) * 1e6);
}

TEST(BoundOracle, LatencyBound) {
  const LowerBound b = bound(gen("ring:8", "50", "0.5us"), CollectiveKind::kAllGather);
  EXPECT_DOUBLE_EQ(b.latency_bound_us, 2.0);
  EXPECT_DOUBLE_EQ(b.lower_bound_us, std::max(2.0, b.bandwidth_bound_us));
  // Tiny buffer: the latency bound dominates.
  const LowerBound tiny =
      bound(gen("ring:8", "50", "0.5us"), CollectiveKind::kAllGather, Bytes{8 * 1024});
  EXPECT_DOUBLE_EQ(tiny.lower_bound_us, 2.0);
  // Through a switch: two hops of 1 us; uniring:4 reduction: the farthest contributor, 3 hops.
  EXPECT_DOUBLE_EQ(bound(gen("switch:4", "50", "1us"), CollectiveKind::kAllGather).latency_bound_us,
                   2.0);
  EXPECT_DOUBLE_EQ(
      bound(gen("uniring:4", "50", "1us"), CollectiveKind::kReduceScatter).latency_bound_us, 3.0);
  EXPECT_DOUBLE_EQ(bound(gen("ring:8", "50", "1us"), CollectiveKind::kBroadcast, kSize, 1, {}, 2)
                       .latency_bound_us,
                   4.0);
}

TEST(BoundOracle, SubsetOfNpus) {
  // NPUs 0 and 4 of ring:8: either direction around the ring, 2 x 50 GB/s into each.
  const LowerBound b =
      bound(gen("ring:8", "50", "1us"), CollectiveKind::kAllGather, kSize, 1, {0, 4});
  expect_rel(b.bandwidth_bound_us, seconds(kSize / 2.0, 2 * 50) * 1e6);
  EXPECT_DOUBLE_EQ(b.latency_bound_us, 4.0);
}

TEST(BoundOracle, Errors) {
  const Topology t = gen("ring:8", "50", "0");
  EXPECT_THROW(compute_lower_bound(t, Collective::make(CollectiveKind::kAllGather, 4, kSize, 1)),
               Error);
  // NPU 2 has no way in.
  const Topology cut(3, 0, {Link{0, 1, 10, 0}, Link{1, 0, 10, 0}, Link{2, 0, 10, 0}}, "cut");
  EXPECT_THROW(bound(cut, CollectiveKind::kAllGather), Error);
}

// ---------------------------------------------------------------------------------------------
// Brute force: the cut bound by definition, over every set S of devices. A chunk must enter S
// when S holds one of its destinations and (copy) none of its sources / (reduction) not all of
// its contributors; the bound is max over S of that data / bandwidth into S.

// Over every set of devices, or (singletons_only) over the single devices.
double brute_cut_seconds(const Topology& t, const Collective& c, bool singletons_only = false) {
  const int d = t.devices();
  double best = 0;
  for (unsigned mask = 1; mask < (1u << d); ++mask) {
    if (singletons_only && (mask & (mask - 1)) != 0) continue;
    auto in = [&](int v) { return ((mask >> v) & 1u) != 0; };
    double bw = 0;
    for (const Link& l : t.links())
      if (!in(l.src) && in(l.dst)) bw += l.bandwidth_gbps;
    double data = 0;
    for (ChunkId ch = 0; ch < c.num_chunks(); ++ch) {
      bool dest_in = false, src_in = false, src_out = false;
      for (NpuId x : c.destinations(ch)) dest_in |= in(x);
      for (NpuId x : c.sources(ch)) (in(x) ? src_in : src_out) = true;
      const bool enters = dest_in && (is_reduction(c.kind()) ? src_out : !src_in);
      if (enters) data += static_cast<double>(c.chunk_bytes());
    }
    if (data == 0) continue;
    EXPECT_GT(bw, 0);
    best = std::max(best, data / kBytesPerGB / bw);
  }
  return best;
}

std::vector<int> hops_from(const Topology& t, int s) {
  std::vector<int> hops(t.devices(), -1);
  std::deque<int> q{s};
  hops[s] = 0;
  while (!q.empty()) {
    const int u = q.front();
    q.pop_front();
    for (LinkId id : t.out_links(u))
      if (hops[t.link(id).dst] < 0) {
        hops[t.link(id).dst] = hops[u] + 1;
        q.push_back(t.link(id).dst);
      }
  }
  return hops;
}

// One-way gossip over groups, computed independently of the library: for every threshold (each
// link bandwidth and +inf), groups = components (BFS, both directions) of the links at least that
// fast; 2(M-1) x buffer over the smaller of the summed in- and out-bandwidth of NPU-holding groups.
double gossip_seconds(const Topology& t, const std::vector<NpuId>& members, double buffer) {
  std::vector<double> thresholds{std::numeric_limits<double>::infinity()};
  for (const Link& l : t.links()) thresholds.push_back(l.bandwidth_gbps);
  double best = 0;
  for (double threshold : thresholds) {
    std::vector<int> group(t.devices(), -1);
    int groups = 0;
    for (int s = 0; s < t.devices(); ++s) {
      if (group[s] >= 0) continue;
      std::deque<int> q{s};
      group[s] = groups;
      while (!q.empty()) {
        const int u = q.front();
        q.pop_front();
        for (const Link& l : t.links()) {
          if (l.bandwidth_gbps < threshold) continue;
          for (int v : {l.src == u ? l.dst : -1, l.dst == u ? l.src : -1})
            if (v >= 0 && group[v] < 0) {
              group[v] = groups;
              q.push_back(v);
            }
        }
      }
      ++groups;
    }
    std::set<int> with_member, with_npu;
    for (NpuId m : members) with_member.insert(group[m]);
    for (int v = 0; v < t.npus(); ++v) with_npu.insert(group[v]);
    double in = 0, out = 0;
    for (const Link& l : t.links()) {
      if (group[l.src] == group[l.dst]) continue;
      if (with_npu.count(group[l.dst])) in += l.bandwidth_gbps;
      if (with_npu.count(group[l.src])) out += l.bandwidth_gbps;
    }
    const double m = static_cast<double>(with_member.size());
    if (m >= 2) best = std::max(best, 2.0 * (m - 1) * buffer / kBytesPerGB / std::min(in, out));
  }
  return best;
}

// Random strongly connected topology: a directed ring over the NPUs plus random extra links,
// and optionally one switch attached (both ways) to some NPUs.
Topology random_topology(std::mt19937& rng, int npus, bool with_switch) {
  std::set<std::pair<int, int>> pairs;
  std::vector<Link> links;
  std::uniform_int_distribution<int> bw(1, 40);
  auto add = [&](int u, int v) {
    if (u == v || !pairs.emplace(u, v).second) return;
    links.push_back(Link{u, v, 2.5 * bw(rng), Time{1000} * bw(rng)});
  };
  for (int v = 0; v < npus; ++v) add(v, (v + 1) % npus);
  std::bernoulli_distribution extra(0.3);
  for (int u = 0; u < npus; ++u)
    for (int v = 0; v < npus; ++v)
      if (extra(rng)) add(u, v);
  if (with_switch) {
    std::bernoulli_distribution attach(0.6);
    for (int v = 0; v < npus; ++v)
      if (attach(rng)) {
        add(npus, v);
        add(v, npus);
      }
    add(0, npus);
    add(npus, 0);
  }
  return Topology(npus, with_switch ? 1 : 0, std::move(links), "random");
}

TEST(BoundBruteForce, RandomTopologiesEveryCollective) {
  std::mt19937 rng(12345);
  const CollectiveKind kinds[] = {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                                  CollectiveKind::kAllReduce, CollectiveKind::kBroadcast,
                                  CollectiveKind::kReduce,    CollectiveKind::kGather,
                                  CollectiveKind::kScatter,   CollectiveKind::kAllToAll};
  int checked = 0, beyond_singletons = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int npus = 3 + trial % 5;  // 3..7 NPUs, up to 8 devices
    const Topology t = random_topology(rng, npus, trial % 2 == 1);
    std::vector<NpuId> members;
    if (trial % 3 == 2) {
      for (int v = 0; v < npus; ++v)
        if (v % 2 == 0 || v == 1) members.push_back(v);
    }
    const NpuId root = members.empty() ? trial % npus : members[trial % members.size()];
    for (CollectiveKind kind : kinds) {
      const Collective c = Collective::make(kind, npus, Bytes{3} << 20, 1 + trial % 2, members,
                                            has_root(kind) ? root : 0);
      const LowerBound b = compute_lower_bound(t, c);
      double expected = brute_cut_seconds(t, c);
      if (kind == CollectiveKind::kAllReduce) {
        const double buffer = static_cast<double>(c.chunk_bytes()) * c.num_chunks();
        expected = std::max(expected, gossip_seconds(t, c.members(), buffer));
      }
      if (kind == CollectiveKind::kAllToAll) {
        double link_bytes = 0, total_bw = 0;
        for (const Link& l : t.links()) total_bw += l.bandwidth_gbps;
        for (NpuId i : c.members()) {
          const std::vector<int> hops = hops_from(t, i);
          for (NpuId j : c.members())
            link_bytes += static_cast<double>(c.chunk_bytes()) * c.chunks_per_npu() * hops[j];
        }
        expected = std::max(expected, link_bytes / kBytesPerGB / total_bw);
      }
      expect_rel(b.bandwidth_bound_us, expected * 1e6,
                 to_string(kind) + " trial " + std::to_string(trial));
      EXPECT_TRUE(b.bandwidth_bound_exact);
      ++checked;
      if (kind == CollectiveKind::kAllGather)
        beyond_singletons += expected > brute_cut_seconds(t, c, true) * (1 + 1e-9);
    }
  }
  EXPECT_EQ(checked, 60 * 8);
  // The max-flow must have found sets of several devices, not just single ones.
  EXPECT_GE(beyond_singletons, 5);
}

TEST(BoundBruteForce, LargerTopologiesWithSwitches) {
  std::mt19937 rng(4242);
  for (int trial = 0; trial < 6; ++trial) {
    const int npus = 10 + trial % 4;  // up to 13 NPUs + 2 switches
    std::set<std::pair<int, int>> pairs;
    std::vector<Link> links;
    std::uniform_int_distribution<int> bw(1, 20);
    auto add = [&](int u, int v) {
      if (u != v && pairs.emplace(u, v).second) links.push_back(Link{u, v, 5.0 * bw(rng), 0});
    };
    for (int v = 0; v < npus; ++v) add(v, (v + 1) % npus);
    std::bernoulli_distribution extra(0.12), attach(0.4);
    for (int u = 0; u < npus; ++u)
      for (int v = 0; v < npus; ++v)
        if (extra(rng)) add(u, v);
    for (int sw = npus; sw < npus + 2; ++sw)
      for (int v = 0; v < npus; ++v)
        if (attach(rng) || v == sw - npus) {
          add(v, sw);
          add(sw, v);
        }
    const Topology t(npus, 2, std::move(links), "random-switches");
    for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                                CollectiveKind::kBroadcast, CollectiveKind::kGather}) {
      const Collective c = Collective::make(kind, npus, kSize, 1, {}, trial % npus);
      expect_rel(compute_lower_bound(t, c).bandwidth_bound_us, brute_cut_seconds(t, c) * 1e6,
                 to_string(kind) + " trial " + std::to_string(trial));
    }
  }
}

// The max-flow all-gather bound against brute force on random symmetric (bidirectional)
// topologies: reduce-scatter equals it and all-reduce is at least it.
TEST(BoundBruteForce, AllGatherBidirectional) {
  std::mt19937 rng(777);
  for (int trial = 0; trial < 40; ++trial) {
    const int npus = 2 + trial % 7;
    std::set<std::pair<int, int>> pairs;
    std::vector<Link> links;
    std::uniform_int_distribution<int> bw(1, 16);
    auto add_both = [&](int u, int v) {
      if (u == v || !pairs.emplace(std::min(u, v), std::max(u, v)).second) return;
      const double b = 12.5 * bw(rng);
      links.push_back(Link{u, v, b, 0});
      links.push_back(Link{v, u, b, 0});
    };
    for (int v = 0; v + 1 < npus; ++v) add_both(v, v + 1);
    std::bernoulli_distribution extra(0.35);
    for (int u = 0; u < npus; ++u)
      for (int v = u + 1; v < npus; ++v)
        if (extra(rng)) add_both(u, v);
    const Topology t(npus, 0, std::move(links), "random-bidirectional");
    const Collective ag = Collective::make(CollectiveKind::kAllGather, npus, kSize, 1);
    const double ag_us = compute_lower_bound(t, ag).bandwidth_bound_us;
    expect_rel(ag_us, brute_cut_seconds(t, ag) * 1e6, "trial " + std::to_string(trial));
    expect_rel(bound(t, CollectiveKind::kReduceScatter).bandwidth_bound_us, ag_us);
    EXPECT_GE(bound(t, CollectiveKind::kAllReduce).bandwidth_bound_us, ag_us * (1 - 1e-9));
  }
}

// ---------------------------------------------------------------------------------------------

std::string run_cli(const std::string& args, int* status) {
  const std::string command = std::string(TACOS_CLI_PATH) + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe.get())) out += buffer;
  *status = pclose(pipe.release());
  return out;
}

TEST(BoundCli, JsonFields) {
  int status = 0;
  const std::string out = run_cli(
      "bound --topology switch:8 --bandwidth 300 --latency 0 --collective all-gather "
      "--size 64MiB --json",
      &status);
  ASSERT_EQ(status, 0) << out;
  const auto j = nlohmann::json::parse(out);
  for (const char* key : {"lower_bound_us", "latency_bound_us", "bandwidth_bound_us",
                          "algbw_at_bound_gbps", "busbw_at_bound_gbps", "collective", "npus",
                          "size_bytes", "method", "bandwidth_bound_method"})
    EXPECT_TRUE(j.contains(key)) << key;
  // Reported bandwidths are nccl-tests' GB/s (1e9 B/s); the input is 300 x 2^30 B/s per port.
  // All-Gather on 8 ports: each NPU takes in 7/8 of the 64 MiB at 300 x 2^30 B/s, so
  // algbw = 8/7 x 300 x 2^30 / 1e9 = 368.140053943 and busbw = algbw x 7/8 = 322.1225472, the
  // port bandwidth itself (what nccl-tests' bus bandwidth is meant to show).
  expect_rel(j["algbw_at_bound_gbps"].get<double>(), 368.14005394285715);
  expect_rel(j["busbw_at_bound_gbps"].get<double>(), 322.1225472);
  EXPECT_EQ(j["collective"], "all-gather");
  EXPECT_EQ(j["npus"], 8);
  EXPECT_EQ(j["size_bytes"], kSize);
}

TEST(BoundCli, TextAndErrors) {
  int status = 0;
  std::string out = run_cli(
      "bound --topology ring:8 --latency 0.5us --collective broadcast --root 3 --npus 0-5 "
      "--chunks-per-npu 2 --size 1MiB",
      &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("lower bound"), std::string::npos) << out;
  out = run_cli("bound --topology ring:8 --collective all-gather --root 2", &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("--root"), std::string::npos) << out;
  out = run_cli("bound --topology ring:8 --collective all-gather --link-model bogus", &status);
  EXPECT_NE(status, 0);
}

}  // namespace
}  // namespace tacos
