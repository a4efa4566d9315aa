// The Chrome trace export (include/tacos/io/trace.h, --format trace on synthesize and simulate).
#include "tacos/io/trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <utility>

#include "cli_support.h"
#include "one_way_ring.h"
#include "tacos/common/units.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/simulation/simulator.h"

namespace tacos {
namespace {

using nlohmann::json;
using tacos_test::read_file;
using tacos_test::run_tacos;
using tacos_test::scratch_dir;

// Every event carries the keys the trace event format requires for its phase, with their
// types; returns the first problem ("" when none).
std::string event_problem(const json& e) {
  if (!e.is_object()) return "not an object";
  if (!e.contains("name") || !e["name"].is_string()) return "name: expected a string";
  if (!e.contains("ph") || !e["ph"].is_string()) return "ph: expected a string";
  if (!e.contains("pid") || !e["pid"].is_number_integer()) return "pid: expected an integer";
  if (!e.contains("tid") || !e["tid"].is_number_integer()) return "tid: expected an integer";
  if (!e.contains("ts") || !e["ts"].is_number() || e["ts"].get<double>() < 0)
    return "ts: expected a number >= 0";
  const std::string ph = e["ph"];
  if (ph == "X") {
    if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() <= 0)
      return "dur: expected a number > 0";
    const json& a = e["args"];
    for (const char* key : {"transfer", "src", "dst", "bytes", "step", "start_ps", "end_ps"})
      if (!a.contains(key) || !a[key].is_number_integer())
        return std::string("args.") + key + ": expected an integer";
    if (!a.contains("chunks") || !a["chunks"].is_array() || a["chunks"].empty())
      return "args.chunks: expected a non-empty array";
    if (!a.contains("collective") || !a["collective"].is_string())
      return "args.collective: expected a string";
    return "";
  }
  if (ph == "s" || ph == "f") {
    if (!e.contains("id") || !e["id"].is_number_integer()) return "id: expected an integer";
    if (!e.contains("cat") || !e["cat"].is_string()) return "cat: expected a string";
    if (ph == "f" && e.value("bp", "") != "e") return "bp: expected \"e\"";
    return "";
  }
  if (ph == "C") {
    if (!e.contains("args") || !e["args"].is_object() || e["args"].empty())
      return "args: expected counter values";
    for (const auto& [key, value] : e["args"].items())
      if (!value.is_number()) return "args." + key + ": expected a number";
    return "";
  }
  if (ph == "M") {
    if (!e.contains("args") || !e["args"].is_object()) return "args: expected an object";
    return "";
  }
  return "ph: unexpected phase " + ph;
}

struct Slice {
  double begin, end;
};

// The slices per (pid, tid) and every event checked; fails the test on a malformed event.
std::map<std::pair<int, int>, std::vector<Slice>> slices_of(const json& trace) {
  std::map<std::pair<int, int>, std::vector<Slice>> slices;
  EXPECT_TRUE(trace.contains("traceEvents") && trace["traceEvents"].is_array());
  for (const json& e : trace["traceEvents"]) {
    const std::string problem = event_problem(e);
    EXPECT_EQ(problem, "") << e.dump();
    if (!problem.empty()) break;
    if (e["ph"] == "X")
      slices[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back(
          {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
  }
  return slices;
}

// Each flow's ends lie inside a slice of their track, and each id has one start and one finish.
void expect_flows_bound(const json& trace) {
  const auto slices = slices_of(trace);
  std::map<std::int64_t, int> ends;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "s" && e["ph"] != "f") continue;
    ends[e["id"].get<std::int64_t>()] += e["ph"] == "s" ? 1 : 10;
    const double ts = e["ts"];
    bool inside = false;
    const auto it = slices.find({e["pid"].get<int>(), e["tid"].get<int>()});
    if (it != slices.end())
      for (const Slice& s : it->second) inside = inside || (s.begin < ts && ts < s.end);
    EXPECT_TRUE(inside) << e.dump();
  }
  for (const auto& [id, count] : ends) EXPECT_EQ(count, 11) << "flow " << id;
}

using tacos_test::OneWayRing;  // one_way_ring.h: six 977.5625 us messages

TEST(Trace, OneWayRingHasExactSlicesFlowsAndCounters) {
  const OneWayRing ring;
  const SimulationResult simulated = simulate(ring.algorithm, ring.topology, LinkModel::kTacos);
  ASSERT_EQ(simulated.collective_time, 1955125000);
  const json trace =
      json::parse(algorithm_trace(ring.algorithm, ring.topology, simulated, LinkModel::kTacos));
  EXPECT_EQ(trace["otherData"]["topology"], "one-way-ring:3");
  EXPECT_EQ(trace["otherData"]["collective"], "all-gather");
  EXPECT_EQ(trace["otherData"]["size_bytes"], 3 << 20);
  EXPECT_EQ(trace["otherData"]["tacos_version"], TACOS_VERSION);
  EXPECT_EQ(trace["otherData"]["collective_time_ps"], 1955125000);

  std::vector<json> slices, flows, in_flight, npu0_share;
  for (const json& e : trace["traceEvents"]) {
    EXPECT_EQ(event_problem(e), "") << e.dump();
    if (e["ph"] == "X") slices.push_back(e);
    if (e["ph"] == "s" || e["ph"] == "f") flows.push_back(e);
    if (e["ph"] == "C" && e["name"] == "bytes in flight") in_flight.push_back(e);
    if (e["ph"] == "C" && e["name"] == "completed share" && e["pid"] == 1) npu0_share.push_back(e);
  }
  // Six slices by start then index: the three first hops (step 0), then the three second
  // hops (step 1), each on track (src + 1, dst + 1).
  ASSERT_EQ(slices.size(), 6u);
  for (int k = 0; k < 6; ++k) {
    const json& s = slices[static_cast<std::size_t>(k)];
    const int u = k % 3;
    EXPECT_EQ(s["pid"], u + 1);
    EXPECT_EQ(s["tid"], (u + 1) % 3 + 1);
    EXPECT_EQ(s["ts"].get<double>(), k < 3 ? 0.0 : 977.5625);
    EXPECT_EQ(s["dur"].get<double>(), 977.5625);
    EXPECT_EQ(s["args"]["start_ps"], k < 3 ? 0 : 977562500);
    EXPECT_EQ(s["args"]["end_ps"], k < 3 ? 977562500 : 1955125000);
    EXPECT_EQ(s["args"]["step"], k < 3 ? 0 : 1);
    EXPECT_EQ(s["args"]["chunks"], json::array({(u + 3 - k / 3) % 3}));
    EXPECT_EQ(s["args"]["bytes"], 1 << 20);
    EXPECT_EQ(s["args"]["collective"], "all-gather");
  }
  // A flow per second hop, from the first hop that brought its chunk: 2 -> 0 (chunk 2) feeds
  // 0 -> 1, and so on; both ends at the middle of their slices.
  ASSERT_EQ(flows.size(), 6u);
  for (int k = 0; k < 3; ++k) {
    const json& out = flows[static_cast<std::size_t>(2 * k)];
    const json& in = flows[static_cast<std::size_t>(2 * k + 1)];
    EXPECT_EQ(out["ph"], "s");
    EXPECT_EQ(in["ph"], "f");
    EXPECT_EQ(out["id"], in["id"]);
    EXPECT_EQ(out["pid"], (k + 2) % 3 + 1);
    EXPECT_EQ(in["pid"], k + 1);
    EXPECT_EQ(out["ts"].get<double>(), 488.78125);
    EXPECT_EQ(in["ts"].get<double>(), 977.5625 + 488.78125);
    EXPECT_EQ(out["args"]["arrival_ps"], 977562500);
  }
  // 3 MiB in flight from 0 to the end (three messages end and three start at 977.5625 us).
  ASSERT_EQ(in_flight.size(), 3u);
  EXPECT_EQ(in_flight[0]["ts"].get<double>(), 0.0);
  EXPECT_EQ(in_flight[0]["args"]["bytes"], 3 << 20);
  EXPECT_EQ(in_flight[1]["ts"].get<double>(), 977.5625);
  EXPECT_EQ(in_flight[1]["args"]["bytes"], 3 << 20);
  EXPECT_EQ(in_flight[2]["ts"].get<double>(), 1955.125);
  EXPECT_EQ(in_flight[2]["args"]["bytes"], 0);
  // NPU 0 holds chunk 0, gets chunk 2 after one hop and chunk 1 after two.
  ASSERT_EQ(npu0_share.size(), 3u);
  EXPECT_DOUBLE_EQ(npu0_share[0]["args"]["share"].get<double>(), 1.0 / 3);
  EXPECT_EQ(npu0_share[1]["ts"].get<double>(), 977.5625);
  EXPECT_DOUBLE_EQ(npu0_share[1]["args"]["share"].get<double>(), 2.0 / 3);
  EXPECT_EQ(npu0_share[2]["ts"].get<double>(), 1955.125);
  EXPECT_DOUBLE_EQ(npu0_share[2]["args"]["share"].get<double>(), 1.0);
  expect_flows_bound(trace);
}

TEST(Trace, RefusesASimulationOfAnotherAlgorithm) {
  const OneWayRing ring;
  SimulationResult simulated = simulate(ring.algorithm, ring.topology, LinkModel::kTacos);
  simulated.end.pop_back();
  EXPECT_EQ(tacos_test::message_of([&] {
              algorithm_trace(ring.algorithm, ring.topology, simulated, LinkModel::kTacos);
            }),
            "trace: the simulation result does not belong to this algorithm");
}

// The printed "collective time  X us" of synthesize or simulate.
std::string printed_time(const std::string& out) {
  std::smatch match;
  EXPECT_TRUE(std::regex_search(out, match, std::regex("collective time +([0-9.]+) us"))) << out;
  return match.size() > 1 ? match[1].str() : "";
}

// The trace's slices per link against the algorithm's messages per (src, dst), and its last
// slice's end against `time` as printed.
void expect_trace_matches(const json& trace, const Algorithm& algorithm, const std::string& time) {
  std::map<std::pair<int, int>, std::size_t> messages;
  for (const Transfer& t : algorithm.transfers()) ++messages[{t.src, t.dst}];
  std::map<std::pair<int, int>, std::size_t> counted;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X") {
      ++counted[{e["args"]["src"].get<int>(), e["args"]["dst"].get<int>()}];
      EXPECT_EQ(e["pid"], e["args"]["src"].get<int>() + 1);
    }
  EXPECT_EQ(counted, messages);
  // Slices on one thread never overlap (the format needs them nested).
  for (auto [track, slices] : slices_of(trace)) {
    std::sort(slices.begin(), slices.end(),
              [](const Slice& a, const Slice& b) { return a.begin < b.begin; });
    for (std::size_t k = 1; k < slices.size(); ++k)
      EXPECT_LE(slices[k - 1].end, slices[k].begin) << "thread " << track.second;
  }
  Time last = 0;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X") last = std::max(last, e["args"]["end_ps"].get<Time>());
  EXPECT_EQ(format_micros(last), time);
  EXPECT_EQ(trace["otherData"]["collective_time_ps"], last);
}

TEST(Trace, DgxH100AllReduceSlicesPerLinkAreTheMessagesAndEndAtThePrintedTime) {
  const auto dir = scratch_dir("trace_dgx");
  const tacos_test::RunResult run = run_tacos(
      "synthesize --topology dgx-h100:2 --collective all-reduce --size 64MiB --format "
      "json,trace --out " +
      (dir / "D").string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Algorithm algorithm = read_algorithm_json((dir / "D" / "algorithm.json").string());
  ASSERT_GT(algorithm.transfers().size(), 100u);
  const json trace = json::parse(read_file(dir / "D" / "trace.json"));
  expect_trace_matches(trace, algorithm, printed_time(run.out));
  EXPECT_EQ(trace["otherData"]["topology"], "dgx-h100:2");
  EXPECT_EQ(trace["otherData"]["collective"], "all-reduce");
  EXPECT_EQ(trace["otherData"]["size_bytes"], 64 << 20);
  expect_flows_bound(trace);
  std::filesystem::remove_all(dir);
}

// Under the astra link model a link takes its next message before the last one arrived: those
// go on further threads of the link, so every slice is there and none overlaps.
TEST(Trace, OverlappingMessagesOfALinkGoOnFurtherThreads) {
  const auto dir = scratch_dir("trace_astra");
  const tacos_test::RunResult run = run_tacos(
      "synthesize --topology ring:4 --collective all-gather --size 4KiB --chunks-per-npu 4 "
      "--link-model astra --format json,trace --out " +
      (dir / "D").string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Algorithm algorithm = read_algorithm_json((dir / "D" / "algorithm.json").string());
  const json trace = json::parse(read_file(dir / "D" / "trace.json"));
  expect_trace_matches(trace, algorithm, printed_time(run.out));
  std::set<std::string> second_threads;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name" &&
        e["args"]["name"].get<std::string>().find(" (2)") != std::string::npos)
      second_threads.insert(e["args"]["name"].get<std::string>());
  EXPECT_FALSE(second_threads.empty());
  std::filesystem::remove_all(dir);
}

TEST(Trace, SameRunGivesTheSameBytes) {
  const auto dir = scratch_dir("trace_same");
  for (const char* out : {"A", "B"})
    ASSERT_EQ(run_tacos("synthesize --topology torus2d:3x3 --collective all-reduce --size 9MiB "
                        "--format trace --out " +
                        (dir / out).string())
                  .exit_code,
              0);
  const std::string a = read_file(dir / "A" / "trace.json");
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a, read_file(dir / "B" / "trace.json"));
  std::filesystem::remove_all(dir);
}

TEST(Trace, SimulateWritesTheTraceOfChakraAndMscclFiles) {
  const auto dir = scratch_dir("trace_files");
  const tacos_test::RunResult made = run_tacos(
      "synthesize --topology ring:4 --collective all-gather --size 4MiB --format "
      "json,chakra,msccl --out " +
      (dir / "D").string());
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const Algorithm algorithm = read_algorithm_json((dir / "D" / "algorithm.json").string());
  for (const std::string file : {"chakra", "msccl/tacos_all-gather.xml"}) {
    SCOPED_TRACE(file);
    const auto out = dir / (file == "chakra" ? "from_chakra" : "from_msccl");
    const tacos_test::RunResult run =
        run_tacos("simulate --algorithm " + (dir / "D" / file).string() +
                  " --topology ring:4 --format trace --out " + out.string());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.err, "");
    const json trace = json::parse(read_file(out / "trace.json"));
    expect_trace_matches(trace, algorithm, printed_time(run.out));
    EXPECT_EQ(printed_time(run.out), printed_time(made.out));
  }
  std::filesystem::remove_all(dir);
}

TEST(Trace, SimulateRefusesAFormatOtherThanTraceOrNoOut) {
  const tacos_test::RunResult other =
      run_tacos("simulate --algorithm x.json --format json --out somewhere");
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find("--format: expected trace, got 'json'"), std::string::npos) << other.err;
  const tacos_test::RunResult no_out = run_tacos("simulate --algorithm x.json --format trace");
  EXPECT_EQ(no_out.exit_code, 1);
  EXPECT_NE(no_out.err.find("--format trace needs --out DIR"), std::string::npos) << no_out.err;
}

}  // namespace
}  // namespace tacos
