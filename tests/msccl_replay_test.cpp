// MSCCL files replay to the time tacos printed (issue "One engine, one request"): through switch
// ports a file tacos writes executes, message by message, as the simulator timed the schedule,
// and `convert` of such a file to JSON keeps times that verify accepts. The reproducers of the
// issue run through the command line; the property test uses the library directly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_support.h"
#include "tacos/algorithm/verify.h"
#include "tacos/collective/collective.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/io/msccl_xml.h"
#include "tacos/simulation/simulator.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/synthesis/request.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"
#include "tacos/topology/switch_routes.h"
#include "test_printers.h"

namespace tacos {
namespace {

using tacos_test::run_tacos_in;
using tacos_test::scratch_dir;

// The "collective time" line of a `synthesize` or `simulate` report (microseconds to the
// picosecond, as printed).
std::string printed_time(const std::string& out) {
  const std::string key = "collective time  ";
  const auto at = out.find(key);
  if (at == std::string::npos) return "(no time in: " + out + ")";
  const auto begin = at + key.size();
  return out.substr(begin, out.find(' ', begin) - begin);
}

// Synthesizes with --format msccl and simulates the written file on the same topology: the
// same time to the picosecond.
void expect_replay(const std::string& name, const std::string& synthesize,
                   const std::string& simulate_flags, const std::string& file) {
  const auto dir = scratch_dir(name);
  const auto made = run_tacos_in(dir, "synthesize " + synthesize + " --out out --format msccl");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(made.err, "") << "a note means the file does not replay to the printed time";
  const auto replay =
      run_tacos_in(dir, "simulate " + simulate_flags + " --algorithm out/msccl/" + file);
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(printed_time(replay.out), printed_time(made.out)) << replay.out;
  EXPECT_NE(replay.out.find("verified         yes"), std::string::npos) << replay.out;
  tacos_test::fs::remove_all(dir);
}

TEST(MscclReplayCli, SwitchAllGatherReplaysToThePrintedTime) {
  // Was 1542.94 us against 1147.31 us printed: the file did not keep the order of the messages
  // on each GPU's one switch port.
  expect_replay("msccl_replay_switch8", "--topology switch:8 --chunks-per-npu 4",
                "--topology switch:8", "tacos_all-gather.xml");
}

TEST(MscclReplayCli, DgxReduceReplaysToThePrintedTime) {
  // Was 4.957776 us against 4.406912 us printed.
  expect_replay("msccl_replay_dgx",
                "--topology dgx-a100:1 --collective reduce --size 64KiB --chunks-per-npu 8",
                "--topology dgx-a100:1", "tacos_reduce.xml");
}

TEST(MscclReplayCli, ConvertedSwitchFileVerifiesWithTheSameTime) {
  // Was "transfer 0 (0 -> 1) lasts 1191.603301 us but link 0 -> 2 needs 2382.206602 us": the
  // reader timed a message through a switch as one hop.
  const auto dir = scratch_dir("msccl_replay_convert");
  const std::string topology = "--topology fattree:2x1x1";
  const auto made = run_tacos_in(dir, "synthesize " + topology +
                                          " --collective broadcast --size 63920028B "
                                          "--link-model astra --out h --format msccl");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const auto converted = run_tacos_in(
      dir, "convert " + topology +
               " --link-model astra --size 63920028B h/msccl/tacos_broadcast.xml h.json");
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  const auto verified = run_tacos_in(dir, "verify " + topology + " --algorithm h.json");
  EXPECT_EQ(verified.exit_code, 0) << verified.err;
  const Algorithm read = read_algorithm_json((dir / "h.json").string());
  EXPECT_EQ(format_micros(read.collective_time), printed_time(made.out));
  tacos_test::fs::remove_all(dir);
}

TEST(MscclReplayCli, RootOfASubsetIsNotMistakenForARank) {
  const auto dir = scratch_dir("msccl_replay_subset_root");
  const auto made = run_tacos_in(dir,
                                 "synthesize --topology fc:10 --collective broadcast --size 8MiB "
                                 "--npus 2,4,9 --root 4 --out i --format msccl");
  EXPECT_EQ(made.exit_code, 1);
  EXPECT_EQ(made.err.find("root rank"), std::string::npos) << made.err;
  EXPECT_NE(made.err.find("runs on 3 of the 10 NPUs"), std::string::npos) << made.err;
  EXPECT_NE(made.err.find("no relay ranks"), std::string::npos) << made.err;
  tacos_test::fs::remove_all(dir);
}

// MSCCL's cnt < 72 splits a message of 80 chunks in two, each paying the latency: the file
// cannot take the schedule's time, and convert says what it takes instead.
TEST(MscclReplayCli, ConvertSaysWhatAFileThatCannotKeepTheTimeTakes) {
  const auto dir = scratch_dir("msccl_replay_split");
  const Topology topology = generate_topology("ring:2", LinkParams{});
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 2, Bytes{160} << 10, 80));
  std::vector<ChunkId> first, second;
  for (ChunkId c = 0; c < 80; ++c) {
    first.push_back(c);
    second.push_back(80 + c);
  }
  a.add_transfer(0, 1, 0, 0, first);
  a.add_transfer(1, 0, 0, 0, second);
  const Algorithm timed = with_simulated_times(a, simulate(a, topology, LinkModel::kTacos));
  write_algorithm_json(timed, (dir / "split.json").string());
  const auto converted = run_tacos_in(dir, "convert --topology ring:2 split.json split.xml");
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  const auto replay = run_tacos_in(dir, "simulate --topology ring:2 --algorithm split.xml");
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const std::string replay_time = printed_time(replay.out);
  EXPECT_NE(replay_time, format_micros(timed.collective_time));
  EXPECT_EQ(converted.err, "tacos: note: split.xml replays to " + replay_time +
                               " us, not the reported " + format_micros(timed.collective_time) +
                               " us: a message of more than 71 chunks is split into several "
                               "(MSCCL's cnt < 72), each paying the link latency\n");
  tacos_test::fs::remove_all(dir);
}

// Keeping every port's order would name more than 128 thread blocks of a GPU in dependencies
// (the executor's int8): the file leaves the order to the executor, and `convert` says what it
// takes then, the time `simulate` gives the file. The schedule is what the portfolio keeps for
// All-to-All at K = 128 on dgx-a100:2 without node-direct, direct's (153 named); node-direct's
// All-to-All, a node's chunks for one GPU in one message, is kept there now and needs fewer.
TEST(MscclReplayCli, FileWithoutThePortOrderIsNotedWithItsTime) {
  const auto dir = scratch_dir("msccl_replay_port_order");
  const Topology pod = generate_topology("dgx-a100:2", LinkParams{});
  SynthesisRequest request;
  request.collective = CollectiveKind::kAllToAll;
  request.chunks_per_npu = 128;
  request.size = 16LL << 20;
  SynthesisRun left_out;
  left_out.skipped_reason = "left out";
  const KnownRuns known{{"node-direct", &left_out}};
  const SynthesisRun run = synthesize(pod, request, &known);
  ASSERT_EQ(run.portfolio_winner, "direct");
  write_algorithm_json(run.result.algorithm, (dir / "a2a.json").string());
  const std::string topology = "--topology dgx-a100:2";
  const auto made = run_tacos_in(dir, "convert " + topology + " a2a.json a2a.xml");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(made.err.rfind("tacos: note: a2a.xml replays to ", 0), 0u) << made.err;
  EXPECT_NE(made.err.find("int8"), std::string::npos) << made.err;
  EXPECT_NE(tacos_test::read_file(dir / "a2a.xml").find(" tacos_port_order=\"0\""),
            std::string::npos);
  const auto replay = run_tacos_in(dir, "simulate " + topology + " --algorithm a2a.xml");
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const std::string replay_time = printed_time(replay.out);
  EXPECT_NE(made.err.find("replays to " + replay_time + " us"), std::string::npos) << made.err;
  EXPECT_NE(replay_time, format_micros(run.result.algorithm.collective_time));
  tacos_test::fs::remove_all(dir);
}

// ---- property: every collective, fabric, link model and K ---------------------------------

// Writes `algorithm` as MSCCL for `topology`, replays it, converts the replay to JSON and
// verifies that: the schedule's time everywhere, to the picosecond.
void check_round_trip(const Algorithm& algorithm, const Topology& topology, LinkModel model,
                      const std::string& what) {
  SCOPED_TRACE(what);
  std::string text;
  try {
    text = algorithm_to_msccl_xml(algorithm, topology, "replay");
  } catch (const Error& e) {
    FAIL() << "write: " << e.what();
  }
  Algorithm read;
  try {
    read = algorithm_from_msccl_xml(text, "replay.xml", topology, model, std::nullopt);
  } catch (const Error& e) {
    FAIL() << "read: " << e.what();
  }
  EXPECT_EQ(read.collective_time, algorithm.collective_time);
  EXPECT_EQ(simulate(read, topology, model).collective_time, algorithm.collective_time);
  const Algorithm converted = algorithm_from_json(algorithm_to_json(read), "replay.json");
  const VerifyResult verdict = verify_algorithm(converted, topology, converted.link_model);
  EXPECT_TRUE(verdict.ok) << verdict.error;
  EXPECT_EQ(converted.link_model, model);
  EXPECT_EQ(converted.collective_time, algorithm.collective_time);
}

class MscclReplayProperty : public ::testing::TestWithParam<std::string> {};

TEST_P(MscclReplayProperty, WrittenFilesReplayToTheScheduleTime) {
  const std::string& spec = GetParam();
  const Topology topology = generate_topology(spec, LinkParams{});
  const std::vector<CollectiveKind> kinds = {
      CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kAllReduce,
      CollectiveKind::kAllToAll,  CollectiveKind::kBroadcast,     CollectiveKind::kReduce,
      CollectiveKind::kGather,    CollectiveKind::kScatter};
  for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra})
    for (int k : {1, 4})
      for (CollectiveKind kind : kinds) {
        const Collective collective =
            Collective::make(kind, topology.npus(), Bytes{63920028}, k, {}, 1);
        SynthesisOptions options;
        options.threads = 1;
        options.link_model = model;
        const SynthesisResult synthesized = synthesize_tacos(topology, collective, options);
        const std::string what =
            spec + " " + to_string(kind) + " K=" + std::to_string(k) + " " + to_string(model);
        check_round_trip(synthesized.algorithm, topology, model, what);
        // The baselines the portfolio may pick (multi-chunk messages, relays through NPUs).
        if (k != 1 || (kind != CollectiveKind::kAllGather && kind != CollectiveKind::kAllReduce))
          continue;
        for (Baseline baseline : {Baseline::kRing, Baseline::kDirect, Baseline::kHierarchical}) {
          if (baseline_inapplicable(baseline, switch_route_view(topology), collective)) continue;
          const Algorithm a = synthesize_baseline(baseline, topology, collective, model);
          check_round_trip(a, topology, model, what + " " + to_string(baseline));
        }
      }
}

INSTANTIATE_TEST_SUITE_P(MscclFabrics, MscclReplayProperty,
                         ::testing::Values("switch:4", "switch:8", "dgx-a100:1", "dgx-a100:2",
                                           "fattree:2x1x1", "fattree:4x2x2", "ring:2,switch:4",
                                           "ring:5", "torus2d:3x3"),
                         [](const auto& info) { return tacos_test::test_name(info.param); });

}  // namespace
}  // namespace tacos
