// End-to-end: compare, the three file formats through simulate / verify / convert.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "cli_support.h"

namespace {

using namespace tacos_test;

const fs::path kData = TACOS_SHARED_DATA_DIR;

TEST(CliCompare, JsonHasEveryKeyAndSkippedReasons) {
  const fs::path plot = scratch_dir("compare") / "plot.svg";
  const RunResult r =
      run_tacos("compare --topology ring:8 --collective all-reduce --size 1MiB --json --plot " +
                plot.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 11u);
  for (const auto& row : j["results"])
    for (const char* key :
         {"algorithm", "collective_time_us", "algbw_gbps", "busbw_gbps", "lower_bound_us",
          "bound_ratio", "verified", "synthesis_seconds", "skipped_reason"})
      EXPECT_TRUE(row.contains(key)) << row["algorithm"] << " lacks " << key;
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& row : j["results"]) by_name[row["algorithm"]] = row;
  // ring All-Reduce on ring:8, 1 MiB: 14 x (0.5 us + 131072 B / 50 GB/s).
  EXPECT_NEAR(by_name["ring"]["collective_time_us"].get<double>(), 41.1796875, 1e-4);
  // Exactly 14 x (500000 ps + ceil(2441406.25 ps)) = 41.179698 us. nccl-tests' units:
  // algbw = 1048576 B / 41.179698 us = 25.4634213 GB/s (1e9 B/s); All-Reduce busbw = algbw x
  // 2(n-1)/n = x 14/8 = 44.5609873.
  EXPECT_NEAR(by_name["ring"]["collective_time_us"].get<double>(), 41.179698, 1e-9);
  EXPECT_NEAR(by_name["ring"]["algbw_gbps"].get<double>(), 25.46342132, 1e-6);
  EXPECT_NEAR(by_name["ring"]["busbw_gbps"].get<double>(), 44.56098731, 1e-6);
  EXPECT_TRUE(by_name["hierarchical"]["collective_time_us"].is_null());
  EXPECT_FALSE(by_name["hierarchical"]["skipped_reason"].get<std::string>().empty());
  for (const char* name : {"tacos", "ring", "direct", "rhd", "dbt", "biring", "bucket"})
    EXPECT_TRUE(by_name[name]["verified"].get<bool>()) << name;
  EXPECT_LE(by_name["tacos"]["collective_time_us"].get<double>(),
            by_name["ring"]["collective_time_us"].get<double>());
  const std::string svg = read_file(plot);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
}

// Every format tacos writes reads back, verifies and simulates to the synthesized time.
TEST(CliFormats, RoundTripsThroughEveryFormat) {
  for (const char* collective : {"all-gather", "reduce-scatter", "all-reduce", "all-to-all"}) {
    const fs::path dir = scratch_dir(std::string("formats_") + collective);
    const RunResult made = run_tacos(
        std::string("synthesize --topology torus2d:4x4 --chunks-per-npu 2 --size 8MiB --json "
                    "--format json,chakra,msccl --collective ") +
        collective + " --out " + (dir / "out").string());
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const double synthesized = nlohmann::json::parse(made.out)["collective_time_us"];
    const std::string xml =
        (dir / "out" / "msccl" / (std::string("tacos_") + collective + ".xml")).string();
    for (const std::string& file :
         {(dir / "out" / "algorithm.json").string(), xml, (dir / "out" / "chakra").string()}) {
      const RunResult sim = run_tacos("simulate --topology torus2d:4x4 --json --algorithm " + file);
      ASSERT_EQ(sim.exit_code, 0) << file << ": " << sim.err;
      const auto j = nlohmann::json::parse(sim.out);
      EXPECT_TRUE(j["verified"].get<bool>()) << file << ": " << j.dump();
      EXPECT_DOUBLE_EQ(j["collective_time_us"].get<double>(), synthesized) << file;
    }
  }
}

TEST(CliFormats, ConvertJsonToXmlAndBack) {
  const fs::path dir = scratch_dir("convert");
  ASSERT_EQ(run_tacos("synthesize --topology ring:4 --size 4MiB --out " + dir.string()).exit_code,
            0);
  const RunResult to_xml =
      run_tacos("convert --topology ring:4 " + (dir / "algorithm.json").string() + " " +
                (dir / "ag.xml").string());
  ASSERT_EQ(to_xml.exit_code, 0) << to_xml.err;
  const RunResult back = run_tacos("convert --topology ring:4 " + (dir / "ag.xml").string() + " " +
                                   (dir / "back.json").string());
  ASSERT_EQ(back.exit_code, 0) << back.err;
  const RunResult check =
      run_tacos("verify --topology ring:4 --algorithm " + (dir / "back.json").string());
  EXPECT_EQ(check.exit_code, 0) << check.err;
}

TEST(CliFormats, VerifyRejectsAnAlteredSample) {
  const fs::path sample = kData / "msccl" / "allreduce_ring_3gpus.xml";
  if (!fs::exists(sample)) GTEST_SKIP() << "../shared/data is absent; sample test skipped";
  std::string xml = read_file(sample);
  const std::size_t at = xml.find("type=\"rrcs\"");
  ASSERT_NE(at, std::string::npos);
  xml.replace(at, 11, "type=\"rcs\"");
  const fs::path altered = write_temp("altered_ring3.xml", xml);
  const RunResult r =
      run_tacos("verify --topology ring:3 --size 3MiB --algorithm " + altered.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("lacks the contribution"), std::string::npos) << r.err;
  const RunResult good =
      run_tacos("verify --topology ring:3 --size 3MiB --algorithm " + sample.string());
  EXPECT_EQ(good.exit_code, 0) << good.err;
}

TEST(CliFormats, SimulatesTheChakraSample) {
  const fs::path sample = kData / "chakra" / "custom_ring_allreduce_8npus";
  if (!fs::exists(sample)) GTEST_SKIP() << "../shared/data is absent; sample test skipped";
  const RunResult r = run_tacos(
      "simulate --topology ring:8 --link-model astra --json --algorithm " + sample.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // 14 ring steps of 0.5 us + 131072 B / 50 GB/s, and 7 reductions of 7 us.
  EXPECT_NEAR(j["collective_time_us"].get<double>(), 14 * (0.5 + 2.441407) + 7 * 7.0, 1e-4);
  EXPECT_FALSE(j["verified"].get<bool>());  // other producers record no chunk identity
}

TEST(CliFormats, BadFilesFailCleanly) {
  const fs::path garbage = write_temp("garbage.0.et", "not a protobuf at all");
  const RunResult r = run_tacos("simulate --topology ring:1 --algorithm " +
                                (garbage.parent_path() / "garbage").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(r.err.empty());
  const fs::path no_attr =
      write_temp("noattr.xml", "<algo name=\"x\" ngpus=\"2\"><gpu id=\"0\"/></algo>\n");
  const RunResult x = run_tacos("verify --topology ring:2 --algorithm " + no_attr.string());
  EXPECT_NE(x.exit_code, 0);
  EXPECT_NE(x.err.find("noattr.xml"), std::string::npos) << x.err;
}

}  // namespace

namespace tacos_test {
namespace {

TEST(CliOut, HoldsExactlyThisRunsFormatsAndLeavesTheRestAlone) {
  const fs::path dir = scratch_dir("out_formats");
  const fs::path out = dir / "run";
  fs::create_directories(out);
  std::ofstream(out / "notes.txt") << "mine";
  // A folder of the user's named like the old fixed staging path is never touched.
  fs::create_directories(dir / "run.partial");
  std::ofstream(dir / "run.partial" / "x") << "mine too";
  ASSERT_EQ(run_tacos("synthesize --topology ring:4 --size 1MiB --format json,msccl --out " +
                      out.string())
                .exit_code,
            0);
  EXPECT_TRUE(fs::exists(out / "algorithm.json"));
  EXPECT_TRUE(fs::exists(out / "msccl"));
  ASSERT_EQ(run_tacos("synthesize --topology ring:4 --size 1MiB --collective all-reduce --format "
                      "chakra --out " +
                      out.string())
                .exit_code,
            0);
  // The earlier all-gather's JSON and XML are gone: simulate DIR would otherwise read them.
  EXPECT_FALSE(fs::exists(out / "algorithm.json"));
  EXPECT_FALSE(fs::exists(out / "msccl"));
  EXPECT_TRUE(fs::exists(out / "chakra"));
  EXPECT_TRUE(fs::exists(out / "astra"));
  EXPECT_EQ(read_file(out / "notes.txt"), "mine");
  EXPECT_EQ(read_file(dir / "run.partial" / "x"), "mine too");
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename().string().find("tacos-staging"), std::string::npos)
        << "staging folder left behind: " << entry.path();
  fs::remove_all(dir);
}

TEST(CliOut, FormatWithoutOutAndNoSubcommandAreErrors) {
  const RunResult format = run_tacos("synthesize --topology ring:4 --format chakra");
  EXPECT_EQ(format.exit_code, 1);
  EXPECT_EQ(format.err,
            "tacos: error: --format chakra needs --out DIR (where to write the files)\n");
  const RunResult none = run_tacos("");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("synthesize"), std::string::npos) << none.err;  // the help
  EXPECT_EQ(run_tacos("--help").exit_code, 0);
}

TEST(CliVerify, ChecksTheRecordedTimesOfJsonFiles) {
  // Every transfer squeezed into [0, 1] ps: the re-simulated schedule is fine, the file is not.
  const fs::path dir = scratch_dir("verify_recorded");
  ASSERT_EQ(run_tacos("synthesize --topology ring:4 --size 1MiB --out " + dir.string()).exit_code,
            0);
  const RunResult good =
      run_tacos("verify --algorithm " + (dir / "algorithm.json").string() + " --topology ring:4");
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find("and the recorded times (causality, link occupancy, link model tacos)"),
            std::string::npos)
      << good.out;
  std::string text = read_file(dir / "algorithm.json");
  const std::regex times(R"(\[(\d+), (\d+), \d+, \d+, \[)");
  text = std::regex_replace(text, times, "[$1, $2, 0, 1, [");
  std::ofstream(dir / "squeezed.json") << text;
  const RunResult bad =
      run_tacos("verify --algorithm " + (dir / "squeezed.json").string() + " --topology ring:4");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("recorded times (link model tacos): transfer 0"), std::string::npos)
      << bad.err;
  fs::remove_all(dir);
}

TEST(CliVisualize, ReadsEveryFormatAndDefaultsTheTopology) {
  const fs::path dir = scratch_dir("visualize_formats");
  ASSERT_EQ(run_tacos("synthesize --topology ring:4 --size 1MiB --format json,msccl,chakra --out " +
                      dir.string())
                .exit_code,
            0);
  const RunResult json = run_tacos("visualize --algorithm " + (dir / "algorithm.json").string() +
                                   " --out " + (dir / "a.svg").string());
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("all-gather on fc:4, 12 transfers"), std::string::npos) << json.out;
  const RunResult xml =
      run_tacos("visualize --algorithm " + (dir / "msccl" / "tacos_all-gather.xml").string() +
                " --topology ring:4 --out " + (dir / "x.svg").string());
  EXPECT_EQ(xml.exit_code, 0) << xml.err;
  EXPECT_NE(xml.out.find("all-gather on ring:4, 12 transfers, collective time 10.765626 us"),
            std::string::npos)
      << xml.out;
  const RunResult chakra = run_tacos("visualize --algorithm " + (dir / "chakra").string() +
                                     " --topology ring:4 --out " + (dir / "c.html").string());
  EXPECT_EQ(chakra.exit_code, 0) << chakra.err;
  EXPECT_TRUE(fs::exists(dir / "c.html"));
  fs::remove_all(dir);
}

TEST(CliHelp, FileCommandsShowNoMisleadingDefaultTopology) {
  // Without --topology they use a fully connected topology of the file's NPUs, not torus2d:8x8.
  for (const char* command : {"simulate", "verify", "convert", "visualize"}) {
    const RunResult help = run_tacos(std::string(command) + " --help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_EQ(help.out.find("--topology TEXT=torus2d:8x8"), std::string::npos) << command;
    EXPECT_NE(help.out.find("fully connected"), std::string::npos) << command;
  }
}

TEST(CliVerify, OtherToolsXmlNeedsNoSize) {
  const fs::path sample = fs::path(TACOS_SHARED_DATA_DIR) / "msccl" / "allreduce_ring_3gpus.xml";
  if (!fs::exists(sample)) GTEST_SKIP() << "sample not found: " << sample;
  const RunResult r = run_tacos("verify --algorithm " + sample.string() + " --topology ring:3");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("a correct all-reduce (3 NPUs, 12 messages"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("checked with 1 MiB per MSCCL chunk"), std::string::npos) << r.out;
}

TEST(CliFormats, HugeMscclRootTagIsAnErrorNotACrash) {
  // A 40 KB root tag used to overflow the stack of the regex that read ngpus.
  const fs::path path = write_temp("huge_root.xml", "<algo name=\"x\" " + std::string(40000, 'a') +
                                                        "=\"1\" ngpus=\"99999999999\">\n</algo>\n");
  const RunResult r = run_tacos("simulate --algorithm " + path.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("<algo ngpus=\"99999999999\">: expected a whole number up to 16777216"),
            std::string::npos)
      << r.err;
  fs::remove(path);
}

// An --out that cannot be written is the user's input: a one-line error and exit 1 (main said
// "internal error" and exited 3 for a name too long), and nothing is left behind.
TEST(CliOut, UnwritableOutIsAOneLineErrorWithExit1) {
  const fs::path dir = scratch_dir("unwritable_out");
  std::ofstream(dir / "a_file") << "x";
  const std::string too_long = (dir / (std::string(300, 'x') + "/out")).string();
  for (const std::string& out : {too_long, (dir / "a_file" / "out").string()}) {
    const RunResult r = run_tacos("synthesize --topology ring:4 --size 1MiB --out " + out);
    EXPECT_EQ(r.exit_code, 1) << out << ": " << r.err;
    EXPECT_EQ(r.err.rfind("tacos: error: ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
    EXPECT_EQ(r.err.find("internal"), std::string::npos) << r.err;
  }
  const RunResult plot =
      run_tacos("compare --topology ring:4 --size 1MiB --plot " + too_long + ".svg");
  EXPECT_EQ(plot.exit_code, 1) << plot.err;
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1u);  // only a_file: no staging folder left
  fs::remove_all(dir);
}

// Another tool's MSCCL XML shipped in examples/ verifies from a clone without --size (main
// needed ../shared/data for this check).
TEST(CliVerify, ShippedForeignXmlNeedsNoSize) {
  const std::string sample =
      (fs::path(TACOS_SOURCE_DIR) / "examples" / "msccl_ring_allreduce_4gpus.xml").string();
  const RunResult r = run_tacos("verify --algorithm " + sample + " --topology ring:4");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("a correct all-reduce (4 NPUs, 24 messages"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("checked with 1 MiB per MSCCL chunk"), std::string::npos) << r.out;
}

// tacos's MSCCL All-Reduce is verified for both kinds of call, and verify says so; verify of a
// tacos file bigger than 16 MiB works (main rejected tacos_size_bytes above 2^24).
TEST(CliVerify, MscclAllReduceIsCheckedForBothCalls) {
  const fs::path dir = scratch_dir("verify_both_calls");
  ASSERT_EQ(run_tacos("synthesize --topology ring:4 --collective all-reduce --size 64MiB "
                      "--format msccl --msccl-protocol LL128 --out " +
                      dir.string())
                .exit_code,
            0);
  const fs::path xml = dir / "msccl" / "tacos_all-reduce.xml";
  EXPECT_NE(read_file(xml).find(R"(proto="LL128")"), std::string::npos);
  const RunResult r = run_tacos("verify --algorithm " + xml.string() + " --topology ring:4");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("of an out-of-place and an in-place call"), std::string::npos) << r.out;
  const RunResult bad = run_tacos("synthesize --topology ring:4 --format msccl --out " +
                                  dir.string() + " --msccl-protocol LL64");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--msccl-protocol: unknown MSCCL protocol 'LL64'"), std::string::npos)
      << bad.err;
  fs::remove_all(dir);
}

// --msccl-* flags shape the MSCCL file only: without one to write they are errors, not ignored.
TEST(CliOut, MscclFlagsWithoutAnMscclFileAreErrors) {
  const fs::path dir = scratch_dir("msccl_flags");
  const RunResult none = run_tacos("synthesize --topology ring:4 --msccl-max-steps 32");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err,
            "tacos: error: --msccl-max-steps needs --out DIR --format msccl (it shapes the MSCCL "
            "file only)\n");
  const RunResult json =
      run_tacos("synthesize --topology ring:4 --msccl-protocol LL --out " + (dir / "out").string());
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_FALSE(fs::exists(dir / "out"));
  const std::string sample =
      (fs::path(TACOS_SOURCE_DIR) / "examples" / "msccl_ring_allreduce_4gpus.xml").string();
  const RunResult to_json = run_tacos("convert " + sample + " " + (dir / "r.json").string() +
                                      " --size 4MiB --msccl-max-steps 100");
  EXPECT_EQ(to_json.exit_code, 1);
  EXPECT_NE(to_json.err.find("--msccl-max-steps needs an .xml OUT"), std::string::npos);
  const RunResult to_xml =
      run_tacos("convert " + sample + " " + (dir / "r.xml").string() +
                " --topology ring:4 --size 4MiB --msccl-max-steps 100 --msccl-protocol LL");
  ASSERT_EQ(to_xml.exit_code, 0) << to_xml.err;
  const std::string xml = read_file(dir / "r.xml");
  EXPECT_NE(xml.find(R"(proto="LL")"), std::string::npos);
  // Another tool's in-place ring becomes a tacos file for both kinds of call.
  EXPECT_NE(xml.find(R"(inplace="1" outofplace="1")"), std::string::npos);
  EXPECT_EQ(run_tacos("verify --topology ring:4 --algorithm " + (dir / "r.xml").string()).exit_code,
            0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tacos_test
