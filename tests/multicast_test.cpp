// Multicast switches (issue "Switch fabrics", docs/design.md, docs/switch-fabrics.md): one copy
// in, many out. Hand-worked
// times through a multicast switch under both link models, multicast groups checked by the
// verifier and the simulator, every collective verified and simulated to its synthesized time
// on multicast fabrics, results never below the lower bound, spec and YAML errors, JSON round
// trip, and the ASTRA-sim bundle saying it cannot reproduce a multicast time.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "cli_support.h"
#include "tacos/algorithm/verify.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/io/topology_yaml.h"
#include "tacos/simulation/simulator.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/describe.h"
#include "tacos/topology/generators.h"
#include "tacos/topology/switch_routes.h"
#include "test_printers.h"

namespace tacos {
namespace {

namespace fs = std::filesystem;

Topology fabric(const std::string& spec, const std::string& bandwidth = "50") {
  return generate_topology(spec, parse_link_params(bandwidth, "0.5us"));
}

SynthesisResult run(const Topology& topology, CollectiveKind kind, Bytes size, int k,
                    LinkModel model = LinkModel::kTacos, int trials = 1) {
  SynthesisOptions options;
  options.link_model = model;
  options.trials = trials;
  options.threads = 1;
  return synthesize_tacos(topology, Collective::make(kind, topology.npus(), size, k), options);
}

using tacos_test::message_of;

// 1 MiB over one 50 GB/s (2^30 B/s) port: 19.53125 us; every port has 0.5 us latency.
constexpr Time kSer1MiB = 19'531'250;
constexpr Time kLatency = 500'000;
constexpr Time kHop = kSer1MiB + kLatency;

TEST(MulticastSwitch, TopologySpecs) {
  const Topology unicast = fabric("switch:8");
  EXPECT_EQ(unicast.multicast_switches(), 0);
  EXPECT_FALSE(unicast.is_multicast(8));
  const Topology multicast = fabric("switch:8:multicast");
  EXPECT_EQ(multicast.multicast_switches(), 1);
  EXPECT_TRUE(multicast.is_multicast(8));
  EXPECT_FALSE(multicast.is_multicast(0));  // an NPU
  EXPECT_EQ(multicast.links().size(), unicast.links().size());
  EXPECT_EQ(describe_topology(multicast).multicast_switches, 1);
  // Dimensions: only the declared ones.
  const Topology dims = fabric("switch:2,switch:4:multicast");
  ASSERT_EQ(dims.switches(), 6);  // 4 switches of pairs, then 2 of fours
  for (DeviceId s = 8; s < 12; ++s) EXPECT_FALSE(dims.is_multicast(s)) << s;
  for (DeviceId s = 12; s < 14; ++s) EXPECT_TRUE(dims.is_multicast(s)) << s;
  // dgx-h100: the NVSwitches (NVLink SHARP), not the rail leaves.
  const Topology h100 = fabric("dgx-h100:2:multicast");
  EXPECT_TRUE(h100.is_multicast(16));
  EXPECT_TRUE(h100.is_multicast(17));
  EXPECT_EQ(h100.multicast_switches(), 2);
  EXPECT_EQ(fabric("dgx-h100:multicast").multicast_switches(), 1);
  EXPECT_EQ(fabric("dgx-h100:2").multicast_switches(), 0);
  // A copy keeps the flags; the unwound and the route view have no switches.
  const Topology copy = multicast;
  EXPECT_TRUE(copy.is_multicast(8));

  EXPECT_EQ(message_of([] { fabric("ring:4:multicast"); }),
            "--topology 'ring:4:multicast': only switches can be multicast ('ring:4:multicast'; "
            "write switch:N:multicast)");
  EXPECT_EQ(message_of([] { fabric("switch:8:foo"); }),
            "--topology 'switch:8:foo': unexpected ':foo' in 'switch:8:foo' (expected "
            "switch:N, switch:N:multicast or switch:N:nvls)");
  EXPECT_EQ(message_of([] { fabric("switch::multicast"); }),
            "--topology 'switch::multicast': expected a whole number, got ''");
  EXPECT_EQ(message_of([] { fabric("dgx-a100:2:multicast"); }),
            "--topology 'dgx-a100:2:multicast': dgx-a100's NVSwitch has no NVLink SHARP, so it "
            "cannot be ':multicast' (dgx-h100, dgx-h200, dgx-b200, gb200-nvl72 can)");
  EXPECT_EQ(message_of([] { fabric("dgx-h100::multicast"); }),
            "--topology 'dgx-h100::multicast': expected a node count after ':', such as "
            "dgx-h100:2");
  Topology t = fabric("switch:4");
  EXPECT_EQ(message_of([&] { t.set_multicast(2); }),
            "topology: device 2 is not a switch; only switches can be multicast");
}

TEST(MulticastSwitch, BroadcastOfOneChunkByHand) {
  // switch:4, Broadcast of one 1 MiB chunk from NPU 0. Multicast: one entry hop 0 -> switch,
  // then the three exit hops at once on three different ports, store-and-forward: 2 hops of
  // latency + serialization, under both link models.
  const Topology t = fabric("switch:4:multicast");
  for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra}) {
    const SynthesisResult r = run(t, CollectiveKind::kBroadcast, 1 << 20, 1, model);
    EXPECT_EQ(r.collective_time, 2 * kHop) << to_string(model);
    ASSERT_EQ(r.algorithm.transfers().size(), 3u);
    for (const Transfer& x : r.algorithm.transfers()) {
      EXPECT_EQ(x.multicast, 0);
      EXPECT_EQ(x.start, 0);
      EXPECT_EQ(x.end, 2 * kHop);
    }
    const VerifyResult v = verify_algorithm(r.algorithm, t, model);
    ASSERT_TRUE(v.ok) << v.error;
    const SimulationResult s = simulate(r.algorithm, t, model);
    EXPECT_EQ(s.collective_time, 2 * kHop);
    // The sender's port carried the bytes once.
    const LinkId up = t.find_link(0, 4);
    EXPECT_EQ(s.link_busy_ps[up], model == LinkModel::kTacos ? kHop : kSer1MiB);
  }
  // Unicast: the root's port carries the chunk three times. tacos: it is busy for latency +
  // serialization per message, the third leaves at 2 hops and arrives 2 hops later; astra: the
  // port is free after the bytes, the third leaves at 2 serializations.
  const Topology u = fabric("switch:4");
  EXPECT_EQ(run(u, CollectiveKind::kBroadcast, 1 << 20, 1).collective_time, 4 * kHop);
  EXPECT_EQ(run(u, CollectiveKind::kBroadcast, 1 << 20, 1, LinkModel::kAstra).collective_time,
            2 * kSer1MiB + 2 * kHop);
}

// The Broadcast above written by hand: transfers 0 -> 1, 0 -> 2, 0 -> 3 of chunk 0 at time 0.
Algorithm hand_broadcast(std::int32_t group_of_third = 0) {
  Algorithm a(Collective::make(CollectiveKind::kBroadcast, 4, 1 << 20, 1));
  for (DeviceId dst : {1, 2, 3})
    a.add_transfer(0, dst, 0, 2 * kHop, 0, false, dst == 3 ? group_of_third : 0);
  return a;
}

TEST(MulticastSwitch, GroupsAreCheckedByVerifierAndSimulator) {
  const Topology t = fabric("switch:4:multicast");
  ASSERT_TRUE(verify_algorithm(hand_broadcast(), t, LinkModel::kTacos).ok);
  // Without the group the three messages share the root's port at once.
  const VerifyResult apart = verify_algorithm(hand_broadcast(-1), t, LinkModel::kTacos);
  ASSERT_FALSE(apart.ok);
  EXPECT_NE(apart.error.find("carries two transfers at once"), std::string::npos) << apart.error;
  // Simulated, the third copy leaves as a unicast message after the group.
  EXPECT_EQ(simulate(hand_broadcast(-1), t, LinkModel::kTacos).collective_time, 3 * kHop);
  // A unicast switch does not copy.
  const Topology u = fabric("switch:4");
  const VerifyResult on_unicast = verify_algorithm(hand_broadcast(), u, LinkModel::kTacos);
  EXPECT_EQ(on_unicast.error,
            "transfer 0 (0 -> 1, chunk 0) is in multicast group 0 but its route enters switch "
            "4, which is not multicast");
  EXPECT_EQ(message_of([&] { simulate(hand_broadcast(), u, LinkModel::kTacos); }),
            "simulate: " + on_unicast.error);
  // One message: one start, one chunk list, one sender.
  {
    Algorithm a(hand_broadcast().collective());
    a.add_transfer(0, 1, 0, 2 * kHop, 0, false, 0);
    a.add_transfer(0, 2, 5, 5 + 2 * kHop, 0, false, 0);
    a.add_transfer(0, 3, 0, 2 * kHop, 0, false, -1);
    EXPECT_EQ(verify_algorithm(a, t, LinkModel::kTacos).error,
              "transfer 1 (0 -> 2, chunk 0) is in multicast group 0 with transfer 0 (0 -> 1, "
              "chunk 0) but has another start (a multicast group is one message: one sender, "
              "start and chunk list, one entry into the switch)");
  }
  {
    Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 4 << 20, 1));
    a.add_transfer(0, 1, 0, 2 * kHop, 0, false, 0);
    a.add_transfer(0, 2, 0, 2 * kHop, 1, false, 0);
    EXPECT_NE(verify_algorithm(a, t, LinkModel::kTacos).error.find("has another chunk list"),
              std::string::npos);
    Algorithm b(a.collective());
    b.add_transfer(0, 1, 0, 2 * kHop, 0, false, 0);
    b.add_transfer(0, 1, 0, 2 * kHop, 0, false, 0);
    EXPECT_EQ(verify_algorithm(b, t, LinkModel::kTacos).error,
              "multicast group 0 sends to NPU 1 twice");
  }
  {
    Algorithm a(Collective::make(CollectiveKind::kReduceScatter, 4, 4 << 20, 1));
    a.add_transfer(0, 1, 0, 2 * kHop, 1, true, 0);
    a.add_transfer(0, 2, 0, 2 * kHop, 1, true, 0);
    EXPECT_EQ(verify_algorithm(a, t, LinkModel::kTacos).error,
              "transfer 0 (0 -> 1, chunk 1) is in multicast group 0 but is a reduce transfer "
              "(a multicast switch copies; reductions in a switch are transfers into a reducing "
              "switch)");
  }
  {
    // Direct links never multicast.
    const Topology fc = fabric("fc:4");
    EXPECT_NE(verify_algorithm(hand_broadcast(), fc, LinkModel::kTacos)
                  .error.find("goes over a direct link"),
              std::string::npos);
  }
}

TEST(MulticastSwitch, ExitPortsAreFifosAsForUnicast) {
  // switch:4 multicast, 1 MiB chunks. NPU 0 multicasts chunk 0 to NPUs 2 and 3 while NPU 1
  // sends chunk 1 to NPU 2: both reach the switch at one hop; switch 4 -> 2 serves them first
  // come first served, ties by sender (0 first), so NPU 1's message leaves a port time later.
  const Topology t = fabric("switch:4:multicast");
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 4 << 20, 1));
  a.add_transfer(0, 2, 0, 2 * kHop, 0, false, 7);
  a.add_transfer(1, 2, 0, 3 * kHop, 1, false, -1);
  a.add_transfer(0, 3, 0, 2 * kHop, 0, false, 7);
  const SimulationResult tacos = simulate(a, t, LinkModel::kTacos);
  EXPECT_EQ(tacos.end, (std::vector<Time>{2 * kHop, 3 * kHop, 2 * kHop}));
  EXPECT_EQ(tacos.start, (std::vector<Time>{0, 0, 0}));
  // astra: the port is free after the bytes, the second message arrives a latency later.
  const SimulationResult astra = simulate(a, t, LinkModel::kAstra);
  EXPECT_EQ(astra.end, (std::vector<Time>{2 * kHop, 2 * kHop + kSer1MiB, 2 * kHop}));
  // The verifier accepts the entry hops (held once by the group) and the trip times; only the
  // All-Gather's postconditions are missing from this fragment.
  EXPECT_EQ(verify_algorithm(a, t, LinkModel::kTacos).error,
            "chunk 0 never reaches NPU 1, one of its destinations");
  EXPECT_EQ(a.multicast_groups(), 8);
  a.sort_by_start();  // canonical ids: 0, 1, ... in order of first transfer
  EXPECT_EQ(a.transfers()[0].multicast, 0);
  EXPECT_EQ(a.transfers()[1].multicast, 0);
  EXPECT_EQ(a.transfers()[2].multicast, -1);
}

TEST(MulticastSwitch, JsonRoundTripKeepsGroups) {
  const Topology t = fabric("switch:8:multicast");
  const SynthesisResult r = run(t, CollectiveKind::kBroadcast, 1 << 20, 4);
  ASSERT_TRUE(r.algorithm.has_multicast());
  const std::string text = algorithm_to_json(r.algorithm);
  EXPECT_NE(text.find("], 0, 0]"), std::string::npos);
  const Algorithm back = algorithm_from_json(text, "mc.json");
  ASSERT_EQ(back.transfers().size(), r.algorithm.transfers().size());
  for (std::size_t i = 0; i < back.transfers().size(); ++i)
    EXPECT_EQ(back.transfers()[i].multicast, r.algorithm.transfers()[i].multicast) << i;
  EXPECT_EQ(algorithm_to_json(back), text);
  EXPECT_EQ(simulate(back, t, LinkModel::kTacos).collective_time, r.collective_time);
  // Unicast transfers keep their 5- or 6-element form (files from before read and write
  // unchanged); a reduce transfer takes no group, a group id is a non-negative integer.
  const std::string good = algorithm_to_json(hand_broadcast());
  EXPECT_NE(good.find("[0, 1, 0, 40062500, [0], 0, 0]"), std::string::npos) << good;
  auto error_for = [&](const std::string& from, const std::string& to) {
    std::string bad = good;
    bad.replace(bad.find(from), from.size(), to);
    return message_of([&] { algorithm_from_json(bad, "mc.json"); });
  };
  EXPECT_EQ(error_for("[0], 0, 0]", "[0], 0, -1]"),
            "mc.json: field 'transfers[0][6]': expected a multicast group id (non-negative "
            "integer), got -1");
  EXPECT_EQ(error_for("[0], 0, 0]", "[0], 0, 0, 1]"),
            "mc.json: field 'transfers[0]': expected [src, dst, start_ps, end_ps, [chunk, ...], "
            "0, multicast_group] (a copy in a multicast group), got more than 7 elements");
  EXPECT_EQ(error_for("[0], 0, 0]", "[0], 0, 7]"),
            "mc.json: field 'transfers[0][6]': expected a multicast group id 0..2, got 7");
}

using Case = std::tuple<std::string, CollectiveKind, int, LinkModel>;

class MulticastProperties : public ::testing::TestWithParam<Case> {};

TEST_P(MulticastProperties, VerifiedSimulatedExactlyAndAboveTheBound) {
  const auto& [spec, kind, k, model] = GetParam();
  const Topology t = fabric(spec);
  const Bytes size = 1 << 20;
  const SynthesisResult r = run(t, kind, size, k, model);
  const VerifyResult v = verify_algorithm(r.algorithm, t, model);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.collective_time, r.collective_time);
  EXPECT_EQ(simulate(r.algorithm, t, model).collective_time, r.collective_time);
  const Algorithm retimed = with_simulated_times(r.algorithm, simulate(r.algorithm, t, model));
  EXPECT_EQ(simulate(retimed, t, model).collective_time, r.collective_time);
  // Through JSON too.
  const Algorithm back = algorithm_from_json(algorithm_to_json(r.algorithm), "x.json");
  EXPECT_EQ(simulate(back, t, model).collective_time, r.collective_time);
  // Never below the lower bound (bandwidth bounds in us, rounded: allow 1 ps per message).
  const LowerBound bound = compute_lower_bound(t, Collective::make(kind, t.npus(), size, k));
  EXPECT_GE(to_micros(r.collective_time) + 1e-6, bound.lower_bound_us) << bound.method;
  // Reductions never multicast; the copy collectives that fan out do.
  for (const Transfer& x : r.algorithm.transfers())
    if (x.reduce) {
      EXPECT_EQ(x.multicast, -1);
    }
  if (kind == CollectiveKind::kBroadcast) {
    EXPECT_TRUE(r.algorithm.has_multicast());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fabrics, MulticastProperties,
    ::testing::Combine(::testing::Values("switch:8:multicast", "ring:2,switch:4:multicast",
                                         "dgx-h100:2:multicast"),
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

TEST(MulticastSwitch, BroadcastMuchFasterThanUnicastAndNearTheBound) {
  // switch:8, 64 MiB, K = 64: unicast, the root's port carries every chunk at least once and
  // some NPU forwards it to the others (1.15-1.18 x the bound: 1442.25 us under the tacos
  // model, 1471.84375 us under astra's); multicast, once: close to size / port bandwidth.
  for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra}) {
    const Topology mc = fabric("switch:8:multicast");
    const Topology uc = fabric("switch:8");
    const Collective c = Collective::make(CollectiveKind::kBroadcast, 8, 64 << 20, 64);
    const SynthesisResult multicast = run(mc, CollectiveKind::kBroadcast, 64 << 20, 64, model);
    const SynthesisResult unicast = run(uc, CollectiveKind::kBroadcast, 64 << 20, 64, model);
    const double bound = compute_lower_bound(mc, c).lower_bound_us;
    EXPECT_DOUBLE_EQ(bound, compute_lower_bound(uc, c).lower_bound_us);
    const double m = to_micros(multicast.collective_time), u = to_micros(unicast.collective_time);
    EXPECT_LT(m, 0.91 * u) << to_string(model);
    EXPECT_GE(m, bound);
    EXPECT_LE(m, 1.05 * bound) << to_string(model);
    // All-Gather is ingress-bound either way: multicast is never worse than the bound allows.
    const SynthesisResult ag = run(mc, CollectiveKind::kAllGather, 64 << 20, 8, model);
    const double ag_bound =
        compute_lower_bound(mc, Collective::make(CollectiveKind::kAllGather, 8, 64 << 20, 8))
            .lower_bound_us;
    EXPECT_GE(to_micros(ag.collective_time), ag_bound);
    EXPECT_LE(to_micros(ag.collective_time), 1.10 * ag_bound) << to_string(model);
  }
}

TEST(MulticastSwitch, GossipBoundCountsIngressOnly) {
  // With unicast switches the All-Reduce gossip bound may use the smaller of ingress and
  // egress; with multicast only ingress holds. On a switch both are equal: same bound.
  const Collective c = Collective::make(CollectiveKind::kAllReduce, 8, 64 << 20, 1);
  EXPECT_DOUBLE_EQ(compute_lower_bound(fabric("switch:8:multicast"), c).lower_bound_us,
                   compute_lower_bound(fabric("switch:8"), c).lower_bound_us);
}

// Writes `text` to a fresh YAML file and returns its path.
std::string yaml_file(const std::string& name, const std::string& text) {
  const fs::path dir = tacos_test::TestTempDir::path() / "tacos_multicast_yaml";
  fs::create_directories(dir);
  const fs::path path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

constexpr const char* kPodLinks =
    "links:\n"
    "  - {src: 0, dst: 2, bandwidth: 50, latency: 0.5us, bidirectional: true}\n"
    "  - {src: 1, dst: 2, bandwidth: 50, latency: 0.5us, bidirectional: true}\n";

TEST(MulticastSwitch, YamlSwitchesList) {
  const Topology t =
      read_topology_yaml(yaml_file("mc.yaml", std::string("npus: 2\nswitches:\n  - {multicast: "
                                                          "true}\n") +
                                                  kPodLinks));
  EXPECT_TRUE(t.is_multicast(2));
  const Topology u = read_topology_yaml(yaml_file(
      "uc.yaml", std::string("npus: 2\nswitches:\n  - {multicast: false}\n") + kPodLinks));
  EXPECT_FALSE(u.is_multicast(2));
  EXPECT_EQ(u.switches(), 1);
  const Topology empty = read_topology_yaml(
      yaml_file("e.yaml", std::string("npus: 2\nswitches:\n  - {}\n") + kPodLinks));
  EXPECT_FALSE(empty.is_multicast(2));
  const Topology generated = read_topology_yaml(
      yaml_file("g.yaml", "generate: {topology: \"switch:4:multicast\", bandwidth: \"50\"}\n"));
  EXPECT_TRUE(generated.is_multicast(4));

  auto error_of = [&](const std::string& name, const std::string& text) {
    const std::string path = yaml_file(name, text);
    const std::string message = message_of([&] { read_topology_yaml(path); });
    EXPECT_EQ(message.rfind(path + ":", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message.substr(path.size());
  };
  EXPECT_EQ(error_of("bad_bool.yaml",
                     std::string("npus: 2\nswitches:\n  - {multicast: maybe}\n") + kPodLinks),
            ":3: expected true or false for switches[0].multicast");
  EXPECT_EQ(error_of("bad_key.yaml",
                     std::string("npus: 2\nswitches:\n  - {multicst: true}\n") + kPodLinks),
            ":3: unknown key 'multicst' in switches[0] (expected multicast, reduce)");
  EXPECT_EQ(error_of("scalar.yaml", std::string("npus: 2\nswitches:\n  - 7\n") + kPodLinks),
            ":3: expected a map {multicast: true|false, reduce: true|false} for switches[0]");
  EXPECT_EQ(error_of("map.yaml", std::string("npus: 2\nswitches: {multicast: true}\n") + kPodLinks),
            ":2: expected a count or a list of switches for 'switches' (one map per switch, e.g. - "
            "{multicast: true, reduce: true})");
  EXPECT_EQ(error_of("unused.yaml", std::string("npus: 2\nswitches:\n  - {}\n  - {multicast: "
                                                "true}\n") +
                                        kPodLinks),
            ":3: switches: 2 declared but only 1 of them have links (every switch needs a link)");
}

TEST(MulticastSwitch, CliDescribeAndAstraBundleSayTheTruth) {
  using tacos_test::run_tacos;
  const tacos_test::RunResult d = run_tacos("topology describe --topology switch:8:multicast");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.out.find("switches          1 (1 multicast: one copy in, many out)"),
            std::string::npos)
      << d.out;
  const tacos_test::RunResult j =
      run_tacos("topology describe --json --topology switch:8:multicast");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["multicast_switches"], 1);

  // The Chakra ETs send each copy on its own: ASTRA-sim's time is the unicast execution.
  const fs::path dir = tacos_test::scratch_dir("multicast_bundle");
  const tacos_test::RunResult r = run_tacos(
      "synthesize --topology switch:8:multicast --collective broadcast --size 1MiB "
      "--chunks-per-npu 4 --link-model astra --json --format json,chakra,msccl --out " +
      (dir / "b").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  ASSERT_TRUE(out.contains("astra_sim"));
  EXPECT_FALSE(out["astra_sim"]["matches_reported"].get<bool>()) << out.dump();
  EXPECT_NE(out["astra_sim"]["note"].get<std::string>().find("does not model multicast"),
            std::string::npos)
      << out.dump();
  // The JSON keeps the groups and re-simulates to the reported time.
  const tacos_test::RunResult s =
      run_tacos("simulate --json --link-model astra --topology switch:8:multicast --algorithm " +
                (dir / "b" / "algorithm.json").string());
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(nlohmann::json::parse(s.out)["collective_time_us"], out["collective_time_us"]);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tacos
