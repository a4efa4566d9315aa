// The viewer page's data and page text (include/tacos/io/viewer.h, `tacos view`); the page in a
// browser is tests/browser/viewer_test.py.
#include "tacos/io/viewer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "cli_support.h"
#include "one_way_ring.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/topology/generators.h"

namespace tacos {
namespace {

using nlohmann::json;

// The one-way ring of one_way_ring.h: six 977.5625 us messages.
struct OneWayRing : tacos_test::OneWayRing {
  std::vector<ViewedSchedule> schedules() const {
    return {{"ring", &algorithm, simulate(algorithm, topology, LinkModel::kTacos)}};
  }
};

TEST(Viewer, DataOfASmallScheduleListsEveryMessage) {
  const OneWayRing ring;
  const json data = json::parse(viewer_data_json(ring.topology, ring.schedules()));
  EXPECT_EQ(data["topology"]["family"], "force");  // built link by link: no shape
  EXPECT_EQ(data["topology"]["links"], json::parse("[[0,1],[1,2],[2,0]]"));
  const json& s = data["schedules"][0];
  EXPECT_EQ(s["detail"], true);
  EXPECT_EQ(s["time_ps"], 1955125000);
  EXPECT_EQ(s["transfers"], 6);
  // Lanes by (src, dst), each with its route (the direct link's id).
  EXPECT_EQ(s["pairs"], json::parse("[[0,1,[0]],[1,2,[1]],[2,0,[2]]]"));
  EXPECT_EQ(s["tx"]["pair"], json::parse("[0,1,2,0,1,2]"));
  EXPECT_EQ(s["tx"]["start"], json::parse("[0,0,0,977562500,977562500,977562500]"));
  EXPECT_EQ(s["tx"]["end"], json::parse("[977562500,977562500,977562500,1955125000,1955125000,"
                                        "1955125000]"));
  EXPECT_EQ(s["tx"]["step"], json::parse("[0,0,0,1,1,1]"));
  EXPECT_EQ(s["tx"]["chunks"], json::parse("[[0],[1],[2],[2],[0],[1]]"));
  // NPU 0 holds chunk 0, gets chunk 2 after one hop and chunk 1 after two.
  EXPECT_EQ(s["completions"][0], json::parse("[0,977562500,1955125000]"));
}

TEST(Viewer, PageIsSelfContainedAndDeterministic) {
  const OneWayRing ring;
  const std::string page = viewer_html(ring.topology, ring.schedules());
  EXPECT_EQ(page, viewer_html(ring.topology, ring.schedules()));
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link rel=\"stylesheet\""), std::string::npos);
  EXPECT_EQ(page.find("{{"), std::string::npos);  // every marker filled
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(page.find("window.tacosView"), std::string::npos);
  // No URL other than the SVG namespace the script creates elements in.
  const std::regex url("https?://[^'\" ]+");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), url); it != std::sregex_iterator();
       ++it)
    EXPECT_EQ(it->str(), "http://www.w3.org/2000/svg");
}

TEST(Viewer, ALabelCannotEndTheDataScript) {
  OneWayRing ring;
  std::vector<ViewedSchedule> schedules = ring.schedules();
  schedules[0].label = "</script><script>alert(1)//{{DATA}}";
  const std::string page = viewer_html(ring.topology, schedules);
  EXPECT_EQ(page.find("</script><script>alert"), std::string::npos);
  EXPECT_NE(page.find("<\\/script><script>alert(1)//{{DATA}}"), std::string::npos);
}

// Above kViewerDetailLimit messages, each lane's utilization bytes add up to its busy time.
TEST(Viewer, LargeScheduleIsAggregatedIntoUtilizationBins) {
  const Topology ring = generate_topology("ring:8", LinkParams{});
  Algorithm algorithm(Collective::make(CollectiveKind::kAllGather, 8, 8 << 20, 1));
  // 5600 messages 0 -> 1 of chunk 0: one lane, busy from 0 to the end.
  for (int k = 0; k < 5600; ++k) algorithm.add_transfer(0, 1, k, k, 0);
  ASSERT_GT(algorithm.transfers().size(), kViewerDetailLimit);
  const SimulationResult simulated = simulate(algorithm, ring, LinkModel::kTacos);
  const json data = json::parse(viewer_data_json(ring, {{"many", &algorithm, simulated}}));
  const json& s = data["schedules"][0];
  EXPECT_EQ(s["detail"], false);
  EXPECT_FALSE(s.contains("tx"));
  EXPECT_EQ(s["bins"], kViewerBins);
  EXPECT_EQ(s["pairs"].size(), 1u);
  const Time bin_ps = s["bin_ps"];
  EXPECT_EQ(bin_ps, (simulated.collective_time + kViewerBins - 1) / kViewerBins);
  // Base64 of 200 bytes: the lane is busy (255) in every bin but maybe the last, which the
  // schedule fills in part.
  const std::string util = s["util"];
  EXPECT_EQ(util.size(), 4u * ((kViewerBins + 2) / 3));
  EXPECT_EQ(util.substr(0, 264), std::string(264, '/'));  // 198 bytes of 255
  // Progress: 8 NPUs x 200 bins; NPU 1 has chunk 0 from the first arrival on.
  const std::string progress = s["progress"];
  EXPECT_EQ(progress.size(), 4u * ((8 * kViewerBins + 2) / 3));
}

TEST(Viewer, ViewCommandWritesOnePageWithBothTotalsAndTheRatio) {
  const auto dir = tacos_test::scratch_dir("view_cmd");
  for (const char* algorithm : {"tacos", "ring"})
    ASSERT_EQ(tacos_test::run_tacos("synthesize --topology mesh2d:3x3 --collective all-gather "
                                    "--size 9MiB --algorithm " +
                                    std::string(algorithm) + " --out " + (dir / algorithm).string())
                  .exit_code,
              0);
  const tacos_test::RunResult run =
      tacos_test::run_tacos("view " + (dir / "tacos" / "algorithm.json").string() + " " +
                            (dir / "ring" / "algorithm.json").string() +
                            " --topology mesh2d:3x3 --out " + (dir / "v.html").string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Algorithm a = read_algorithm_json((dir / "tacos" / "algorithm.json").string());
  const Algorithm b = read_algorithm_json((dir / "ring" / "algorithm.json").string());
  char expected[64];
  std::snprintf(expected, sizeof expected, "B / A = %.3fx",
                static_cast<double>(b.collective_time) / static_cast<double>(a.collective_time));
  EXPECT_NE(run.out.find(expected), std::string::npos) << run.out;
  const std::string page = tacos_test::read_file(dir / "v.html");
  EXPECT_NE(page.find("\"time_ps\":" + std::to_string(a.collective_time)), std::string::npos);
  EXPECT_NE(page.find("\"time_ps\":" + std::to_string(b.collective_time)), std::string::npos);
  EXPECT_NE(page.find("\"family\":\"grid\""), std::string::npos);
  const tacos_test::RunResult bad = tacos_test::run_tacos(
      "view " + (dir / "tacos" / "algorithm.json").string() + " --out " + (dir / "v.svg").string());
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--out: expected a file name ending in .html"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "v.svg"));
  std::filesystem::remove_all(dir);
}

// synthesize --format html: DIR/view.html, the page `tacos view DIR/algorithm.json` writes.
TEST(Viewer, SynthesizeFormatHtmlWritesThePageTacosViewWrites) {
  const auto dir = tacos_test::scratch_dir("view_html");
  const std::string common =
      "--topology ring:5 --collective all-reduce --size 5MiB --format json,html --out ";
  const tacos_test::RunResult run =
      tacos_test::run_tacos("synthesize " + common + (dir / "D").string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(tacos_test::run_tacos("view " + (dir / "D" / "algorithm.json").string() +
                                  " --topology ring:5 --out " + (dir / "v.html").string())
                .exit_code,
            0);
  const std::string page = tacos_test::read_file(dir / "D" / "view.html");
  EXPECT_EQ(page, tacos_test::read_file(dir / "v.html"));
  const Algorithm a = read_algorithm_json((dir / "D" / "algorithm.json").string());
  EXPECT_NE(page.find("\"time_ps\":" + std::to_string(a.collective_time)), std::string::npos);
  EXPECT_NE(page.find("\"family\":\"ring\""), std::string::npos);
  // Another run's formats replace it: no view.html is left behind.
  ASSERT_EQ(tacos_test::run_tacos("synthesize --topology ring:5 --collective all-reduce --size "
                                  "5MiB --format json --out " +
                                  (dir / "D").string())
                .exit_code,
            0);
  EXPECT_FALSE(std::filesystem::exists(dir / "D" / "view.html"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tacos
