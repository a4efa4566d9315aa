// Regression tests for the issue "One engine, one request": every file tacos writes replays
// (`tacos simulate`) to the time it printed, or the report says exactly what the file takes and
// why; every error is one line. Reproducers found by random differential testing
// (../shared/data/replay-cases); the topologies are copied here so the tests need no ../shared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.h"

namespace tacos_test {
namespace {

using nlohmann::json;

// rnd9.yaml of the replay cases: a random 9-NPU topology with one-way links.
constexpr const char* kRnd9 = R"(name: rnd9
npus: 9
links:
  - {src: 6, dst: 8, bandwidth: 220, latency: 2000ns, bidirectional: true}
  - {src: 8, dst: 7, bandwidth: 111, latency: 0.000, bidirectional: true}
  - {src: 7, dst: 5, bandwidth: 349, latency: 2000ns, bidirectional: true}
  - {src: 5, dst: 4, bandwidth: 273, latency: 0.954us}
  - {src: 4, dst: 5, bandwidth: 319, latency: 0.500us}
  - {src: 4, dst: 1, bandwidth: 361, latency: 2000ns, bidirectional: true}
  - {src: 1, dst: 3, bandwidth: 115, latency: 0.138, bidirectional: true}
  - {src: 3, dst: 0, bandwidth: 121, latency: 1000ns, bidirectional: true}
  - {src: 0, dst: 2, bandwidth: 296, latency: 636ns, bidirectional: true}
  - {src: 2, dst: 6, bandwidth: 135, latency: 2.000us, bidirectional: true}
  - {src: 3, dst: 5, bandwidth: 40, latency: 2000ns}
  - {src: 6, dst: 3, bandwidth: 238, latency: 0.500us, bidirectional: true}
  - {src: 1, dst: 0, bandwidth: 129, latency: 0.000}
  - {src: 2, dst: 8, bandwidth: 262, latency: 0.000, bidirectional: true}
  - {src: 1, dst: 2, bandwidth: 35, latency: 2.000us, bidirectional: true}
  - {src: 4, dst: 0, bandwidth: 199, latency: 860ns, bidirectional: true}
)";

// rnd6-switch.yaml: 6 NPUs, one switch (unwound by --switch-model unwind).
constexpr const char* kRnd6Switch = R"(name: rnd6
npus: 6
switches:
  - {multicast: true}
links:
  - {src: 1, dst: 6, bandwidth: 342, latency: 0ns, bidirectional: true}
  - {src: 2, dst: 6, bandwidth: 237, latency: 0.742, bidirectional: true}
  - {src: 3, dst: 6, bandwidth: 148, latency: 2.000, bidirectional: true}
  - {src: 4, dst: 6, bandwidth: 41, latency: 0.243}
  - {src: 6, dst: 4, bandwidth: 371, latency: 1.000us}
  - {src: 5, dst: 6, bandwidth: 294, latency: 1.703us, bidirectional: true}
  - {src: 1, dst: 4, bandwidth: 133, latency: 1000ns}
  - {src: 1, dst: 2, bandwidth: 390, latency: 2.000us, bidirectional: true}
  - {src: 5, dst: 2, bandwidth: 347, latency: 0ns}
  - {src: 0, dst: 1, bandwidth: 134, latency: 500ns}
  - {src: 1, dst: 0, bandwidth: 286, latency: 1.000us}
  - {src: 2, dst: 0, bandwidth: 16, latency: 0.500}
)";

int lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// Picoseconds of a `*_us` number of tacos's --json output (printed exactly to the ps).
long long ps(const json& us) { return std::llround(us.get<double>() * 1e6); }

json parse_json(const RunResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  try {
    return json::parse(r.out);
  } catch (const json::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << r.out;
    return json::object();
  }
}

// `tacos simulate --json` of `file` with the topology arguments `topology`: its time in ps.
long long replay_ps(const std::string& file, const std::string& topology) {
  const json out = parse_json(run_tacos("simulate --json --algorithm '" + file + "' " + topology));
  return out.contains("collective_time_us") ? ps(out["collective_time_us"]) : -1;
}

// One line on stderr, exit code 1, naming `needle`, no internal error.
void expect_one_line_error(const RunResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("tacos: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

// Sequential All-Reduce planned its All-Gather after a barrier that no file can express: the
// JSON replayed to 5.593295 us while 5.909308 was printed (51-byte chunks then, rounded down). The
// schedule now is the one its files replay to.
TEST(ReplayRegression, SequentialAllReduceFilesReplayToThePrintedTime) {
  const fs::path dir = scratch_dir("replay_sequential");
  {
    const std::string topo = "--topology '" + (dir / "rnd9.yaml").string() + "'";
    std::ofstream(dir / "rnd9.yaml") << kRnd9;
    const json out = parse_json(
        run_tacos("synthesize " + topo +
                  " --collective all-reduce --size 1KiB --chunks-per-npu 5 --link-model astra "
                  "--npus 1,5,7,8 --all-reduce-mode sequential --json --format json,chakra --out " +
                  (dir / "a").string()));
    EXPECT_EQ(ps(out["collective_time_us"]), 5593362);
    EXPECT_EQ(replay_ps((dir / "a" / "algorithm.json").string(), topo + " --link-model astra"),
              5593362);
    // Chakra under the astra model: each reduction's 0 us COMP_NODE runs 1 ns (as in
    // ASTRA-sim); the report says what the files take.
    const long long chakra =
        replay_ps((dir / "a" / "chakra").string(), topo + " --link-model astra --size 1KiB");
    EXPECT_EQ(ps(out["chakra_replay"]["time_us"]), chakra);
    EXPECT_EQ(out["chakra_replay"]["matches_reported"].get<bool>(), chakra == 5593362);
  }
  {
    const std::string topo =
        "--topology '" + (dir / "rnd6.yaml").string() + "' --switch-model unwind";
    std::ofstream(dir / "rnd6.yaml") << kRnd6Switch;
    const json out = parse_json(run_tacos(
        "synthesize " + topo +
        " --collective all-reduce --size 59MiB --chunks-per-npu 5 --all-reduce-mode sequential "
        "--json --format json,chakra,msccl --out " +
        (dir / "c").string()));
    EXPECT_EQ(ps(out["collective_time_us"]), 1742451534);
    EXPECT_EQ(replay_ps((dir / "c" / "algorithm.json").string(), topo), 1742451534);
    EXPECT_EQ(replay_ps((dir / "c" / "chakra").string(), topo + " --size 59MiB"), 1742451534);
    EXPECT_EQ(replay_ps((dir / "c" / "msccl" / "tacos_all-reduce.xml").string(), topo), 1742451534);
    EXPECT_TRUE(out["chakra_replay"]["matches_reported"].get<bool>()) << out.dump();
  }
  fs::remove_all(dir);
}

// Under --link-model astra the order nodes of a Chakra set (0 us COMP_NODEs keeping a link's
// sends in order) take 1 ns, as in ASTRA-sim: longer than these 52- and 26-byte messages take
// on their link. The report states the time the files replay to.
TEST(ReplayRegression, ChakraReplayOfSubNanosecondMessagesIsReported) {
  const fs::path dir = scratch_dir("replay_order_gates");
  struct Case {
    std::string topology, collective, out;
    long long printed, replayed;
  };
  const Case cases[] = {
      {"--topology uniring:4 --bandwidth 51.791", "--collective scatter", "d", 1506552, 1506808},
      {"--topology dgx-a100:1 --bandwidth 131 --latency 0.25us", "--collective scatter --root 3",
       "e", 506660, 534370},
  };
  for (const Case& c : cases) {
    const RunResult r = run_tacos("synthesize " + c.topology + " " + c.collective +
                                  " --size 1KiB --chunks-per-npu 5 --link-model astra --json "
                                  "--format chakra --out " +
                                  (dir / c.out).string());
    const json out = parse_json(r);
    EXPECT_EQ(ps(out["collective_time_us"]), c.printed) << c.topology;
    const long long replay = replay_ps((dir / c.out / "chakra").string(),
                                       c.topology + " --link-model astra --size 1KiB");
    EXPECT_EQ(replay, c.replayed) << c.topology;
    EXPECT_EQ(ps(out["chakra_replay"]["time_us"]), replay) << out.dump();
    EXPECT_FALSE(out["chakra_replay"]["matches_reported"].get<bool>()) << out.dump();
    EXPECT_NE(out["chakra_replay"]["note"].get<std::string>().find("1 ns"), std::string::npos);
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("tacos: note: ", 0), 0u) << r.err;
  }
  fs::remove_all(dir);
}

// Chakra has no multicast: the files send each copy on its own (799.580126 us against the
// schedule's 446.617208). The writer says so, and the time it states is the replay's.
TEST(ReplayRegression, ChakraOfMulticastScheduleStatesItsReplayTime) {
  const fs::path dir = scratch_dir("replay_multicast");
  const std::string topo = "--topology dgx-h100:2:multicast --latency 1500ns";
  const RunResult r =
      run_tacos("synthesize " + topo +
                " --collective broadcast --size 35MB --chunks-per-npu 4 "
                "--npus 0,1,3,4,5,6,7,8,9,10,11,12,13,14,15 --root 3 --portfolio off --json "
                "--format json,chakra --out " +
                (dir / "f").string());
  const json out = parse_json(r);
  EXPECT_EQ(ps(out["collective_time_us"]), 446617208);
  EXPECT_EQ(replay_ps((dir / "f" / "algorithm.json").string(), topo), 446617208);
  const long long chakra = replay_ps((dir / "f" / "chakra").string(), topo + " --size 35MB");
  EXPECT_EQ(chakra, 799580126);
  EXPECT_EQ(ps(out["chakra_replay"]["time_us"]), chakra) << out.dump();
  EXPECT_FALSE(out["chakra_replay"]["matches_reported"].get<bool>());
  EXPECT_NE(out["chakra_replay"]["note"].get<std::string>().find("no multicast"),
            std::string::npos);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("799.580126 us"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// libprotobuf logged its own line before tacos's error; CLI11 added "Run with --help".
TEST(ReplayRegression, ErrorsAreOneLine) {
  const fs::path dir = scratch_dir("replay_one_line");
  ASSERT_EQ(run_tacos("synthesize --topology ring:2 --collective all-gather --size 1KiB "
                      "--format chakra --out " +
                      (dir / "g").string())
                .exit_code,
            0);
  const fs::path rank0 = dir / "g" / "chakra" / "tacos.0.et";
  std::string bytes = read_file(rank0);
  const std::size_t name = bytes.find("send");
  ASSERT_NE(name, std::string::npos);
  bytes[name] = static_cast<char>(0xff);  // a node name that is not UTF-8: the parse fails
  std::ofstream(rank0, std::ios::binary | std::ios::trunc) << bytes;
  const std::string set = (dir / "g" / "chakra").string();
  for (const std::string& command : {"simulate --algorithm " + set, "verify --algorithm " + set,
                                     "convert " + set + " " + (dir / "g.json").string()})
    expect_one_line_error(run_tacos(command), "not a valid Chakra Node");
  EXPECT_FALSE(fs::exists(dir / "g.json"));

  expect_one_line_error(run_tacos("synthesize --topology ring:4 --root 2147483648 --collective "
                                  "broadcast --size 1MiB"),
                        "--root: expected an integer, got '2147483648' (out of range)");
  expect_one_line_error(run_tacos("synthesize --topology ring:4 --root x --collective broadcast "
                                  "--size 1MiB"),
                        "--root: expected an integer, got 'x'");
  expect_one_line_error(run_tacos("synthesize --topology ring:4 --no-such-flag"), "--no-such-flag");
  // A 64-bit unsigned conversion took "-1" as 2^64 - 1.
  expect_one_line_error(run_tacos("synthesize --topology ring:4 --seed -1"),
                        "--seed: expected a non-negative integer, got '-1'");
  fs::remove_all(dir);
}

// A transfer with end_ps == start_ps made `convert` to MSCCL XML crash (SIGSEGV).
TEST(ReplayRegression, ConvertOfAZeroLengthTransferIsAnError) {
  const fs::path dir = scratch_dir("replay_zero_length");
  ASSERT_EQ(run_tacos("synthesize --topology fc:2 --collective all-gather --size 1KiB "
                      "--format json --out " +
                      (dir / "x").string())
                .exit_code,
            0);
  std::string text = read_file(dir / "x" / "algorithm.json");
  const std::string from = "[0, 1, 0, 509537, [0]]";
  const std::size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, from.size(), "[0, 1, 0, 0, [0]]");
  std::ofstream(dir / "zero.json") << text;
  const std::string zero = (dir / "zero.json").string();
  for (const char* out : {"out.xml", "out.json", "out"}) {
    expect_one_line_error(
        run_tacos("convert " + zero + " " + (dir / out).string() + " --topology fc:2"),
        "expected end_ps after start_ps 0 (a message takes at least 1 ps), got 0");
    EXPECT_FALSE(fs::exists(dir / out)) << out;
  }
  fs::remove_all(dir);
}

// JSON text must be UTF-8: a topology name or file name that is not ended the --json output in
// "internal error: [json.exception.type_error.316] invalid UTF-8 byte", exit 3.
TEST(ReplayRegression, JsonOutputOfNamesThatAreNotUtf8IsValid) {
  const fs::path dir = scratch_dir("replay_utf8");
  const fs::path file = dir / "q\xfe.yaml";  // no `name`: the file name names the topology
  std::ofstream(file) << "npus: 2\nlinks:\n  - {src: 0, dst: 1, bandwidth: 50, latency: 500ns, "
                         "bidirectional: true}\n";
  const fs::path named = dir / "named.yaml";
  std::ofstream(named) << "name: \"a\xff"
                          "b\"\nnpus: 2\nlinks:\n  - {src: 0, dst: 1, "
                          "bandwidth: 50, latency: 500ns, bidirectional: true}\n";
  for (const std::string& command : {std::string("topology describe"),
                                     std::string("synthesize --collective all-gather --size 1MiB"),
                                     std::string("bound --collective all-gather --size 1MiB")}) {
    const json a = parse_json(run_tacos(command + " --json --topology '" + file.string() + "'"));
    EXPECT_EQ(a.value("topology", ""), (dir / "q\xef\xbf\xbd.yaml").string()) << command;
    const json b = parse_json(run_tacos(command + " --json --topology '" + named.string() + "'"));
    EXPECT_EQ(b.value("topology", ""),
              "a\xef\xbf\xbd"
              "b")
        << command;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tacos_test
