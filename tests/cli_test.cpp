// End-to-end tests of the `tacos` command: JSON contract, determinism, bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.h"
#include "test_printers.h"

namespace {

using namespace tacos_test;

TEST(Cli, SynthesizeJsonHasTheContractKeys) {
  const RunResult r =
      run_tacos("synthesize --topology uniring:4 --collective all-gather --size 1MiB --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // exactly one JSON object on stdout
  EXPECT_EQ(j["npus"], 4);
  EXPECT_EQ(j["collective"], "all-gather");
  EXPECT_EQ(j["size_bytes"], 1048576);
  EXPECT_EQ(j["chunks_per_npu"], 1);
  EXPECT_EQ(j["chunk_bytes"], 262144);
  EXPECT_EQ(j["algorithm"], "tacos");
  EXPECT_EQ(j["portfolio_winner"], "tacos");  // no baseline is faster here
  EXPECT_TRUE(j["portfolio_skipped"].is_null());
  EXPECT_EQ(j["greedy_time_us"], j["collective_time_us"]);
  EXPECT_EQ(j["seed"], 1);
  ASSERT_TRUE(j["collective_time_us"].is_number());
  EXPECT_NEAR(j["collective_time_us"].get<double>(), 16.1484375, 1e-5);
  EXPECT_EQ(j["transfers"], 12);
  ASSERT_TRUE(j["verified"].is_boolean());
  EXPECT_TRUE(j["verified"].get<bool>());
  EXPECT_TRUE(j["synthesis_seconds"].is_number());
}

TEST(Cli, TimeOnlyReportsTheSameTimeWithVerifiedNull) {
  // --time-only is the pure greedy (no portfolio): the full mode's greedy reports the same.
  const std::string args =
      "synthesize --portfolio off --topology torus2d:8x8 --size 64MiB --json --seed 3";
  const RunResult full = run_tacos(args);
  const RunResult fast = run_tacos(args + " --time-only");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  const auto a = nlohmann::json::parse(full.out);
  const auto b = nlohmann::json::parse(fast.out);
  EXPECT_EQ(a["collective_time_us"], b["collective_time_us"]);
  EXPECT_TRUE(b["verified"].is_null());
}

TEST(Cli, TimeOnlyBatchesMessagesUnlessThePortfolioIsOff) {
  // torus2d:16x16, K = 4: 64 KiB chunks against 0.5 us of latency per message, where batched
  // messages are faster than one chunk each; --portfolio off keeps the pure greedy.
  const std::string args =
      "synthesize --topology torus2d:16x16 --size 64MiB --chunks-per-npu 4 --json --time-only";
  const double a = run_json(args)["collective_time_us"].get<double>();
  const double b = run_json(args + " --portfolio off")["collective_time_us"].get<double>();
  EXPECT_LT(a, b);
}

TEST(Cli, HumanSummaryPrintsTheTime) {
  const RunResult r = run_tacos("synthesize --topology fc:8 --size 1MiB");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2.941407 us"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verified"), std::string::npos) << r.out;
}

TEST(Cli, SameSeedGivesIdenticalOutput) {
  const fs::path a = scratch_dir("det_a");
  const fs::path b = scratch_dir("det_b");
  const std::string args =
      "synthesize --topology mesh2d:4x4 --bandwidth 50,25 --size 8MiB --chunks-per-npu 2 "
      "--seed 5 --trials 3 --json --out ";
  const RunResult ra = run_tacos(args + (a / "out").string());
  const RunResult rb = run_tacos(args + (b / "out").string());
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  auto ja = nlohmann::json::parse(ra.out);
  auto jb = nlohmann::json::parse(rb.out);
  for (const char* volatile_key : {"synthesis_seconds", "peak_memory_mib", "out"}) {
    ja.erase(volatile_key);
    jb.erase(volatile_key);
  }
  EXPECT_EQ(ja, jb);
  const std::string fa = read_file(a / "out" / "algorithm.json");
  EXPECT_FALSE(fa.empty());
  EXPECT_EQ(fa, read_file(b / "out" / "algorithm.json"));
}

TEST(Cli, DescribeJson) {
  const RunResult r = run_tacos("topology describe --topology ring:8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["npus"], 8);
  EXPECT_EQ(j["links"], 16);
  EXPECT_EQ(j["diameter_hops"], 4);
  EXPECT_EQ(j["kind"], "dimensions");
  EXPECT_EQ(j["dimensions"], nlohmann::json::parse(R"([{"wiring": "ring", "size": 8}])"));
  // The shape is what the generator built: a fat-tree's hosts per leaf, then its leaves.
  const RunResult fat = run_tacos("topology describe --topology fattree:4x2x2 --json");
  ASSERT_EQ(fat.exit_code, 0) << fat.err;
  const auto tree = nlohmann::json::parse(fat.out);
  EXPECT_EQ(tree["kind"], "fattree");
  EXPECT_EQ(tree["dimensions"],
            nlohmann::json::parse(
                R"([{"wiring": "switch", "size": 4}, {"wiring": "switch", "size": 2}])"));
}

TEST(Cli, ExamplesLoad) {
  for (const char* file : {"asymmetric_ring4.yaml", "astra_ring_fc_switch.yml"}) {
    const RunResult r = run_tacos(std::string("synthesize --size 1MiB --json --topology ") +
                                  TACOS_SOURCE_DIR + "/examples/" + file);
    ASSERT_EQ(r.exit_code, 0) << file << ": " << r.err;
    EXPECT_TRUE(nlohmann::json::parse(r.out)["verified"].get<bool>());
  }
}

struct BadInput {
  std::string name;
  std::string args;
  std::string expected_in_error;
};
void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name << ": " << b.args; }

class CliBadInput : public ::testing::TestWithParam<BadInput> {};

// Each bad input: non-zero exit, a one-line error naming the problem, nothing on stdout and no
// output files.
TEST_P(CliBadInput, FailsCleanly) {
  const BadInput& c = GetParam();
  const fs::path dir = scratch_dir("bad_" + c.name);
  const fs::path out = dir / "out";
  const RunResult r = run_tacos("synthesize " + c.args + " --out " + out.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find(c.expected_in_error), std::string::npos) << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "error is not one line: " << r.err;
  EXPECT_FALSE(fs::exists(out));
}

std::string yaml(const std::string& name, const std::string& text) {
  return write_temp(name, text).string();
}

INSTANTIATE_TEST_SUITE_P(
    Issue, CliBadInput,
    ::testing::Values(
        BadInput{"unknown_kind", "--topology blah:4", "blah"},
        BadInput{"zero_npus", "--topology ring:0", "ring:0"},
        BadInput{"zero_dim", "--topology mesh2d:0x4", "mesh2d:0x4"},
        BadInput{"zero_bandwidth", "--topology ring:4 --bandwidth 0", "--bandwidth"},
        BadInput{"negative_bandwidth", "--topology ring:4 --bandwidth=-5", "--bandwidth"},
        BadInput{"negative_latency", "--topology ring:4 --latency=-1us", "--latency"},
        BadInput{"malformed_size", "--topology ring:4 --size 12XB", "--size"},
        BadInput{"zero_size", "--topology ring:4 --size 0", "--size"},
        BadInput{"overflow_size", "--topology ring:4 --size 99999999999999999999", "--size"},
        BadInput{"overflow_size_unit", "--topology ring:4 --size 100000000TiB", "--size"},
        BadInput{"tiny_chunk", "--topology ring:16 --size 10", "less than one byte"},
        BadInput{"unknown_collective", "--topology ring:4 --collective all-scatter", "all-scatter"},
        BadInput{"zero_chunks", "--topology ring:4 --chunks-per-npu 0", "--chunks-per-npu"},
        BadInput{"missing_file", "--topology /nonexistent/topo.yaml", "/nonexistent/topo.yaml"},
        BadInput{"malformed_yaml",
                 "--topology " + yaml("malformed.yaml", "npus: 4\nlinks: [ {src: 0, dst: 1\n"),
                 "malformed.yaml"},
        BadInput{"astra_lengths",
                 "--topology " + yaml("astra_len.yml",
                                      "topology: [ Ring, Switch ]\nnpus_count: [ 4 ]\n"
                                      "bandwidth: [ 50, 50 ]\nlatency: [ 500, 500 ]\n"),
                 "astra_len.yml"},
        BadInput{"astra_bad_value",
                 "--topology " + yaml("astra_bad.yml",
                                      "topology: [ Ring ]\nnpus_count: [ 4 ]\n"
                                      "bandwidth: [ -50 ]\nlatency: [ 500 ]\n"),
                 "astra_bad.yml"},
        BadInput{"missing_npu",
                 "--topology " +
                     yaml("missing_npu.yaml",
                          "npus: 2\nlinks:\n  - {src: 0, dst: 1, bandwidth: 50, latency: 1us, "
                          "bidirectional: true}\n  - {src: 1, dst: 7, bandwidth: 50, latency: "
                          "1us}\n"),
                 "7"},
        BadInput{"root_outside", "--topology ring:8 --collective broadcast --root 9", "--root"},
        BadInput{"root_outside_group", "--topology ring:8 --collective gather --npus 0-3 --root 5",
                 "--root"},
        BadInput{"npus_duplicate", "--topology ring:8 --npus 1,2,2", "listed twice"},
        BadInput{"npus_out_of_range", "--topology ring:8 --npus 0-9", "outside"},
        BadInput{"npus_empty", "--topology ring:8 --npus ''", "--npus"},
        BadInput{"npus_single", "--topology ring:8 --npus 3", "at least 2"},
        BadInput{"root_without_root", "--topology ring:8 --collective all-gather --root 1",
                 "has no root"},
        BadInput{"bad_all_reduce_mode",
                 "--topology ring:8 --collective all-reduce "
                 "--all-reduce-mode eager",
                 "--all-reduce-mode"},
        BadInput{"unreachable",
                 "--topology " +
                     yaml("oneway.yaml",
                          "npus: 3\nlinks:\n  - {src: 0, dst: 1, bandwidth: 50, latency: 1us}\n"
                          "  - {src: 1, dst: 2, bandwidth: 50, latency: 1us}\n") +
                     " --collective gather --root 0",
                 "cannot be reached"},
        BadInput{"disconnected",
                 "--topology " +
                     yaml("disconnected.yaml",
                          "npus: 4\nlinks:\n  - {src: 0, dst: 1, bandwidth: 50, latency: 1us, "
                          "bidirectional: true}\n  - {src: 2, dst: 3, bandwidth: 50, latency: "
                          "1us, bidirectional: true}\n"),
                 "NPU 2"}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

}  // namespace

namespace {

// Hand-worked: on ring:2 at 50 GB/s (inputs are 2^30 B/s) and no latency, an All-Gather of
// 2 GB (2e9 B) moves one 1e9 B chunk each way at once: 1e9 / (50 x 2^30) s = 18626451493 ps
// (rounded up). nccl-tests' algbw = 2e9 B / that time / 1e9 = 107.374182396 GB/s; busbw =
// algbw x (n-1)/n = 53.687091198, i.e. the link's 50 x 2^30 B/s in 1e9 B/s. An All-Reduce runs
// Reduce-Scatter then All-Gather: twice the time, algbw 53.687091198, busbw x 2(n-1)/n = the same.
TEST(Cli, BandwidthsAreNcclTestsAlgbwAndBusbw) {
  const std::string common = " --topology ring:2 --latency 0 --size 2GB --json";
  const RunResult ag = run_tacos("synthesize --collective all-gather" + common);
  ASSERT_EQ(ag.exit_code, 0) << ag.err;
  const auto a = nlohmann::json::parse(ag.out);
  EXPECT_NEAR(a["collective_time_us"].get<double>(), 18626.451493, 1e-6);
  EXPECT_NEAR(a["algbw_gbps"].get<double>(), 107.374182396, 1e-6);
  EXPECT_NEAR(a["busbw_gbps"].get<double>(), 53.687091198, 1e-6);
  const RunResult ar = run_tacos("synthesize --collective all-reduce" + common);
  ASSERT_EQ(ar.exit_code, 0) << ar.err;
  const auto r = nlohmann::json::parse(ar.out);
  EXPECT_NEAR(r["algbw_gbps"].get<double>(), 53.687091198, 1e-6);
  EXPECT_NEAR(r["busbw_gbps"].get<double>(), 53.687091198, 1e-6);
  // The text summary says the same, with its unit.
  const RunResult text = run_tacos(
      "synthesize --collective all-gather --topology ring:2 "
      "--latency 0 --size 2GB");
  EXPECT_NE(text.out.find("algbw / busbw    107.37 / 53.69 GB/s (1e9 B/s, as nccl-tests)"),
            std::string::npos)
      << text.out;
  // Broadcast's bus factor is 1; Gather's (n-1)/n.
  const RunResult bc = run_tacos("synthesize --collective broadcast" + common);
  const auto b = nlohmann::json::parse(bc.out);
  EXPECT_DOUBLE_EQ(b["busbw_gbps"].get<double>(), b["algbw_gbps"].get<double>());
  const RunResult ga = run_tacos("synthesize --collective gather" + common);
  const auto g = nlohmann::json::parse(ga.out);
  EXPECT_NEAR(g["busbw_gbps"].get<double>(), g["algbw_gbps"].get<double>() / 2, 1e-9);
}

// --help states both units: inputs in 2^30 B/s, reports in 1e9 B/s.
TEST(Cli, HelpStatesBothBandwidthUnits) {
  const RunResult r = run_tacos("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("2^30 bytes per second"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("10^9 bytes per second"), std::string::npos) << r.out;
  for (const char* command : {"synthesize", "compare", "simulate", "bound"}) {
    const RunResult help = run_tacos(std::string(command) + " --help");
    EXPECT_NE(help.out.find("GB/s of 10^9 B/s, as nccl-tests"), std::string::npos) << command;
    EXPECT_NE(help.out.find("GB/s (2^30 B/s)"), std::string::npos) << command;  // --bandwidth
  }
}

// `tacos` alone prints the help (naming the subcommands) and exits 1, not CLI11's 106.
TEST(Cli, NoSubcommandPrintsHelp) {
  const RunResult r = run_tacos("");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("synthesize"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Subcommands"), std::string::npos) << r.err;
}

}  // namespace
