// SVG/HTML pictures (algorithm timeline, time-expanded network, bar chart) and `tacos visualize`.
#include "tacos/io/svg.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tacos/common/error.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"
#include "test_temp_dir.h"

namespace tacos {
namespace {

namespace fs = std::filesystem;

// A small XML well-formedness check: one root element, balanced and properly nested tags,
// quoted unique attributes, known entities, no stray '<' or '&'. Returns "" or the problem.
std::string xml_problem(const std::string& text) {
  auto valid_entity = [&](std::size_t at) {
    const std::size_t semi = text.find(';', at);
    if (semi == std::string::npos || semi - at > 10) return false;
    const std::string name = text.substr(at + 1, semi - at - 1);
    if (name == "amp" || name == "lt" || name == "gt" || name == "quot" || name == "apos")
      return true;
    if (name.size() >= 2 && name[0] == '#') {
      for (std::size_t i = 1; i < name.size(); ++i)
        if (!std::isxdigit(static_cast<unsigned char>(name[i])) && !(i == 1 && name[i] == 'x'))
          return false;
      return true;
    }
    return false;
  };
  auto is_name_char = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == ':' ||
           ch == '.';
  };
  std::vector<std::string> open;
  int roots = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const char ch = text[i];
    if (ch == '&') {
      if (!valid_entity(i)) return "bad entity at " + std::to_string(i);
      ++i;
      continue;
    }
    if (ch == '>') return "stray '>' at " + std::to_string(i);
    if (ch != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(ch)))
        return "text outside the root at " + std::to_string(i);
      ++i;
      continue;
    }
    if (text.compare(i, 4, "<!--") == 0) {
      const std::size_t end = text.find("-->", i);
      if (end == std::string::npos) return "unterminated comment";
      i = end + 3;
      continue;
    }
    if (text.compare(i, 2, "<?") == 0) {
      const std::size_t end = text.find("?>", i);
      if (end == std::string::npos) return "unterminated declaration";
      i = end + 2;
      continue;
    }
    const bool closing = text.compare(i, 2, "</") == 0;
    std::size_t p = i + (closing ? 2 : 1);
    const std::size_t name_start = p;
    while (p < text.size() && is_name_char(text[p])) ++p;
    const std::string name = text.substr(name_start, p - name_start);
    if (name.empty()) return "missing tag name at " + std::to_string(i);
    if (closing) {
      while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
      if (p >= text.size() || text[p] != '>') return "bad closing tag </" + name;
      if (open.empty() || open.back() != name)
        return "</" + name + "> does not close " + (open.empty() ? "anything" : open.back());
      open.pop_back();
      i = p + 1;
      continue;
    }
    std::set<std::string> attributes;
    bool self_closing = false;
    for (;;) {
      while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
      if (p >= text.size()) return "unterminated tag <" + name;
      if (text[p] == '>') {
        ++p;
        break;
      }
      if (text.compare(p, 2, "/>") == 0) {
        self_closing = true;
        p += 2;
        break;
      }
      const std::size_t attr_start = p;
      while (p < text.size() && is_name_char(text[p])) ++p;
      const std::string attr = text.substr(attr_start, p - attr_start);
      if (attr.empty()) return "bad attribute in <" + name;
      if (!attributes.insert(attr).second) return "duplicate attribute " + attr + " in <" + name;
      if (p + 1 >= text.size() || text[p] != '=' || (text[p + 1] != '"' && text[p + 1] != '\''))
        return "unquoted attribute " + attr + " in <" + name;
      const char quote = text[p + 1];
      const std::size_t value_end = text.find(quote, p + 2);
      if (value_end == std::string::npos) return "unterminated attribute " + attr;
      for (std::size_t k = p + 2; k < value_end; ++k) {
        if (text[k] == '<') return "'<' in attribute " + attr;
        if (text[k] == '&' && !valid_entity(k)) return "bad entity in attribute " + attr;
      }
      p = value_end + 1;
    }
    if (open.empty()) ++roots;
    if (!self_closing) open.push_back(name);
    i = p;
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  if (roots != 1) return "expected one root element, got " + std::to_string(roots);
  return "";
}

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

Topology gen(const std::string& spec) { return generate_topology(spec, LinkParams{}); }

Algorithm synthesized(const Topology& network, CollectiveKind kind, int chunks_per_npu = 1) {
  const Collective c = Collective::make(kind, network.npus(), 1 << 20, chunks_per_npu);
  SynthesisOptions options;
  options.threads = 1;
  options.coalesce = false;  // one arrow per chunk and step, as counted below
  return synthesize_tacos(network, c, options).algorithm;
}

// Distinct links of an algorithm.
std::size_t used_links(const Algorithm& a) {
  std::set<std::pair<DeviceId, DeviceId>> links;
  for (const Transfer& t : a.transfers()) links.insert({t.src, t.dst});
  return links.size();
}

TEST(SvgXmlCheck, CatchesMalformedText) {
  EXPECT_EQ(xml_problem("<a><b x=\"1\"/>t &amp; u</a>"), "");
  EXPECT_NE(xml_problem("<a><b></a></b>"), "");
  EXPECT_NE(xml_problem("<a>"), "");
  EXPECT_NE(xml_problem("<a x=1/>"), "");
  EXPECT_NE(xml_problem("<a>&bogus;</a>"), "");
  EXPECT_NE(xml_problem("<a>1 -> 2</a>"), "");
  EXPECT_NE(xml_problem("<a/><b/>"), "");
  EXPECT_NE(xml_problem("<a x=\"1\" x=\"2\"/>"), "");
}

TEST(SvgAlgorithm, HandBuiltTimeline) {
  const Topology ring = gen("ring:4");
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 4096, 1));
  a.add_transfer(0, 1, 0, 1'000'000, 0);
  a.add_transfer(1, 2, 1'000'000, 2'000'000, 0);
  a.add_transfer(0, 3, 0, 1'000'000, 0);
  a.add_transfer(2, 1, 0, 2'000'000, 2);
  a.collective_time = 4'000'000;
  const std::string svg = algorithm_svg(a, ring);
  EXPECT_EQ(xml_problem(svg), "") << svg;
  EXPECT_EQ(count(svg, "<rect class=\"transfer\""), 4);
  EXPECT_EQ(count(svg, "class=\"link-label\""), 4);
  for (const char* label : {">0-&gt;1<", ">1-&gt;2<", ">0-&gt;3<", ">2-&gt;1<"})
    EXPECT_EQ(count(svg, label), 1) << label;
  EXPECT_EQ(count(svg, "<line class=\"arrow\""), 4);
  // Utilization: 0->1 busy 1 of 4 us, 2->1 busy 2 of 4 us.
  EXPECT_NE(svg.find(">25.0%<"), std::string::npos);
  EXPECT_NE(svg.find(">50.0%<"), std::string::npos);
  // Title: collective, NPUs, collective time.
  EXPECT_NE(svg.find("all-gather on ring:4: 4 NPUs, 4 transfers, collective time 4 us"),
            std::string::npos);
  // Colour by origin: chunk 0 (NPU 0) and chunk 2 (NPU 2) differ.
  EXPECT_EQ(count(svg, "fill=\"#4e79a7\" stroke"), 3);
  EXPECT_EQ(count(svg, "fill=\"#e15759\" stroke"), 1);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
}

TEST(SvgAlgorithm, SynthesizedRingIsWellFormedAndDeterministic) {
  const Topology ring = gen("ring:4");
  const Algorithm a = synthesized(ring, CollectiveKind::kAllGather, 2);
  ASSERT_GT(a.transfers().size(), 0u);
  const std::string svg = algorithm_svg(a, ring);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(count(svg, "<rect class=\"transfer\""), static_cast<int>(a.transfers().size()));
  EXPECT_EQ(count(svg, "class=\"link-label\""), static_cast<int>(used_links(a)));
  EXPECT_EQ(count(svg, "class=\"utilization\""), static_cast<int>(used_links(a)));
  EXPECT_EQ(count(svg, "<line class=\"arrow\""), static_cast<int>(a.transfers().size()));
  EXPECT_EQ(count(svg, "<line class=\"device\""), 4);
  EXPECT_EQ(svg, algorithm_svg(a, ring));
  EXPECT_EQ(svg.find("showing the first"), std::string::npos);
}

TEST(SvgAlgorithm, ReductionsAndSwitchTopologies) {
  // Synthesized on the unwound switch; drawn against the topology with its switch.
  const Topology with_switch = gen("switch:4");
  const Algorithm rs = synthesized(with_switch.unwind_switches(), CollectiveKind::kReduceScatter);
  const std::string svg = algorithm_svg(rs, with_switch);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(count(svg, "<rect class=\"transfer\""), static_cast<int>(rs.transfers().size()));
  EXPECT_NE(svg.find("reductions: the NPU the chunk belongs to"), std::string::npos);
  const Algorithm ar = synthesized(gen("ring:4"), CollectiveKind::kAllReduce);
  EXPECT_EQ(xml_problem(algorithm_svg(ar, gen("ring:4"))), "");
}

TEST(SvgAlgorithm, NoTimeExpandedNetworkAbove16Npus) {
  const Topology ring = gen("ring:17");
  const Algorithm a = synthesized(ring, CollectiveKind::kAllGather);
  const std::string svg = algorithm_svg(a, ring);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(count(svg, "<rect class=\"transfer\""), static_cast<int>(a.transfers().size()));
  EXPECT_EQ(count(svg, "class=\"link-label\""), static_cast<int>(used_links(a)));
  EXPECT_EQ(count(svg, "<line class=\"arrow\""), 0);
  const Topology sixteen = gen("ring:16");
  const std::string small =
      algorithm_svg(synthesized(sixteen, CollectiveKind::kAllGather), sixteen);
  EXPECT_GT(count(small, "<line class=\"arrow\""), 0);
}

// Colours follow the origin NPU without repeating: 64 NPUs get 64 colours, no two closer than
// 26 in RGB (main cycled 10 colours, so NPU 10 looked like NPU 0).
TEST(SvgAlgorithm, ColoursDoNotRepeatOver64Npus) {
  const Topology ring = gen("ring:64");
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 64, 64 * 1024, 1));
  for (int npu = 0; npu < 64; ++npu) a.add_transfer(npu, (npu + 1) % 64, 0, 1'000'000, npu);
  const std::string svg = algorithm_svg(a, ring);
  EXPECT_EQ(xml_problem(svg), "");
  std::vector<std::array<int, 3>> colours;
  const std::string key = "<rect class=\"transfer\"";
  for (std::size_t at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
    const std::size_t fill = svg.find("fill=\"#", at) + 7;
    std::array<int, 3> rgb{};
    for (int k = 0; k < 3; ++k) rgb[k] = std::stoi(svg.substr(fill + 2 * k, 2), nullptr, 16);
    colours.push_back(rgb);
  }
  ASSERT_EQ(colours.size(), 64u);
  double closest = 1e9;
  for (std::size_t i = 0; i < colours.size(); ++i)
    for (std::size_t j = i + 1; j < colours.size(); ++j) {
      double d2 = 0;
      for (int k = 0; k < 3; ++k) d2 += std::pow(colours[i][k] - colours[j][k], 2);
      closest = std::min(closest, std::sqrt(d2));
    }
  EXPECT_GE(closest, 26.0);
  EXPECT_NE(svg.find("NPUs 0-15 shown"), std::string::npos);
}

// Rows of the time-expanded network follow the links: on ring:16 every arrow spans at most two
// rows (in NPU order the wrap-around link 15 -> 0 crossed all 16).
TEST(SvgAlgorithm, TimeExpandedNetworkKeepsArrowsShortAt16Npus) {
  const Topology ring = gen("ring:16");
  const std::string svg = algorithm_svg(synthesized(ring, CollectiveKind::kAllGather), ring);
  EXPECT_EQ(xml_problem(svg), "");
  const std::regex arrow(
      R"re(<line class="arrow" x1="[0-9.]+" y1="([0-9.]+)" x2="[0-9.]+" y2="([0-9.]+)")re");
  int arrows = 0;
  double longest = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), arrow); it != std::sregex_iterator();
       ++it) {
    ++arrows;
    longest = std::max(longest, std::fabs(std::stod((*it)[1]) - std::stod((*it)[2])));
  }
  EXPECT_EQ(arrows, 16 * 15);
  EXPECT_LE(longest, 2 * 28.0 + 1e-6);  // two rows of 28 px

  // torus2d:4x4 All-Reduce: in NPU order arrows average 3.68 rows and reach 12 (0 <-> 12); the
  // order keeps the average and shortens the longest to 9.
  const Topology torus = gen("torus2d:4x4");
  const std::string t = algorithm_svg(synthesized(torus, CollectiveKind::kAllReduce), torus);
  double sum = 0, most = 0;
  int n = 0;
  for (auto it = std::sregex_iterator(t.begin(), t.end(), arrow); it != std::sregex_iterator();
       ++it, ++n) {
    const double rows = std::fabs(std::stod((*it)[1]) - std::stod((*it)[2])) / 28.0;
    sum += rows;
    most = std::max(most, rows);
  }
  ASSERT_EQ(n, 480);
  EXPECT_LE(sum / n, 3.68);
  EXPECT_LE(most, 9.0 + 1e-9);
}

// Reduce transfers are hatched bars and dashed arrows, copies plain; the legend says so.
TEST(SvgAlgorithm, ReduceTransfersLookDifferentFromCopies) {
  const Topology ring = gen("ring:4");
  const Algorithm ar = synthesized(ring, CollectiveKind::kAllReduce);
  int reduces = 0;
  for (const Transfer& t : ar.transfers()) reduces += t.reduce ? 1 : 0;
  ASSERT_GT(reduces, 0);
  ASSERT_LT(reduces, static_cast<int>(ar.transfers().size()));
  const std::string svg = algorithm_svg(ar, ring);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(count(svg, "<rect class=\"reduce-mark\""), reduces);
  EXPECT_EQ(count(svg, "stroke-dasharray=\"4 2\" marker-end"), reduces);
  EXPECT_NE(svg.find("class=\"legend-reduce\""), std::string::npos);
  EXPECT_NE(svg.find("reduce (hatched bar, dashed arrow"), std::string::npos);
}

// The compare chart: an x axis with ticks and a label, and the lower bound as a dashed mark.
TEST(SvgBarChart, AxisTicksAndLowerBoundMark) {
  const std::string svg = bar_chart_svg("t", {{"tacos", 681.0625}, {"ring", 2523.9375}}, "us",
                                        "collective time", BarChartMark{"lower bound", 615.234375});
  EXPECT_EQ(xml_problem(svg), "") << svg;
  // Ticks every 500 us from 0 to 2500 over 460 px for 2523.9375 us.
  EXPECT_EQ(count(svg, "class=\"tick-label\""), 6);
  EXPECT_NE(svg.find(">2500</text>"), std::string::npos);
  EXPECT_NE(svg.find(">collective time (us)</text>"), std::string::npos);
  EXPECT_EQ(count(svg, "<line class=\"mark\""), 1);
  EXPECT_NE(svg.find(">lower bound 615.23 us</text>"), std::string::npos);
  // The mark sits at 615.234375 / 2523.9375 of the 460 px from the labels' edge (80 px).
  char x[32];
  std::snprintf(x, sizeof(x), "x1=\"%.2f\"", 80 + 460 * 615.234375 / 2523.9375);
  EXPECT_NE(svg.find(std::string("<line class=\"mark\" ") + x), std::string::npos) << x;
}

// The colour legend stays on the page: 16 entries after the longest legend text (reductions).
TEST(SvgAlgorithm, LegendFitsThePage) {
  for (const char* spec : {"torus2d:4x4", "ring:20"}) {
    const Topology t = gen(spec);
    const std::string svg = algorithm_svg(synthesized(t, CollectiveKind::kAllReduce), t);
    const std::regex label(R"re(<text x="([0-9.]+)" y="67">15</text>)re");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(svg, m, label)) << spec;
    EXPECT_LE(std::stod(m[1]) + 14, 1090.0) << spec;  // the page is 1090 px wide
  }
}

TEST(SvgAlgorithm, EmptyAlgorithm) {
  const Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 4096, 1));
  const std::string svg = algorithm_svg(a, gen("ring:4"));
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(count(svg, "<rect class=\"transfer\""), 0);
  EXPECT_NE(svg.find("no transfers"), std::string::npos);
}

TEST(SvgAlgorithm, LargeAlgorithmsAreCapped) {
  const int chunks = kSvgMaxTransfers / 2 + 100;  // two NPUs: 2 * chunks transfers
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 2, Bytes{2} * chunks * 64, chunks));
  for (int k = 0; k < chunks; ++k) {
    a.add_transfer(0, 1, Time{k} * 1000, Time{k + 1} * 1000, k);
    a.add_transfer(1, 0, Time{k} * 1000, Time{k + 1} * 1000, chunks + k);
  }
  const std::string svg = algorithm_svg(a, gen("ring:2"));
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(count(svg, "<rect class=\"transfer\""), kSvgMaxTransfers);
  EXPECT_NE(svg.find("showing the first " + std::to_string(kSvgMaxTransfers) + " of " +
                     std::to_string(2 * chunks) + " transfers"),
            std::string::npos);
  // Utilization still counts every transfer: both links are busy the whole time.
  EXPECT_EQ(count(svg, ">100.0%<"), 2);
}

TEST(SvgAlgorithm, RejectsLinksTheTopologyLacks) {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 4096, 1));
  a.add_transfer(0, 2, 0, 1000, 0);  // not a ring:4 link
  try {
    algorithm_svg(a, gen("ring:4"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no link 0->2"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(algorithm_svg(a, gen("fc:4")));
  EXPECT_NO_THROW(algorithm_svg(a, gen("switch:4")));    // its unwound form has 0->2
  EXPECT_THROW(algorithm_svg(a, gen("ring:8")), Error);  // NPU count differs
  Algorithm far(Collective::make(CollectiveKind::kAllGather, 4, 4096, 1));
  far.add_transfer(0, 9, 0, 1000, 0);
  EXPECT_THROW(algorithm_svg(far, gen("ring:4")), Error);
}

TEST(SvgBarChart, ThreeBars) {
  const std::string svg =
      bar_chart_svg("collective time <all-gather>",
                    {{"tacos", 16.1484}, {"ring", 24.0}, {"direct & co", 0.5}}, "us");
  EXPECT_EQ(xml_problem(svg), "") << svg;
  EXPECT_EQ(count(svg, "<rect class=\"bar\""), 3);
  EXPECT_EQ(count(svg, "class=\"bar-label\""), 3);
  EXPECT_NE(svg.find("16.15 us"), std::string::npos);
  EXPECT_NE(svg.find("24.00 us"), std::string::npos);
  EXPECT_NE(svg.find("direct &amp; co"), std::string::npos);
  EXPECT_NE(svg.find("collective time &lt;all-gather&gt;"), std::string::npos);
  // The longest bar is the largest value.
  EXPECT_NE(svg.find("width=\"460.00\""), std::string::npos);
}

TEST(SvgBarChart, MissingValuesAreNa) {
  const std::string svg = bar_chart_svg(
      "t", {{"a", 1.0}, {"b", std::numeric_limits<double>::quiet_NaN()}, {"c", 2.0}}, "GB/s");
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(count(svg, "<rect class=\"bar\""), 2);
  EXPECT_EQ(count(svg, ">n/a<"), 1);
  EXPECT_EQ(xml_problem(bar_chart_svg("empty", {}, "")), "");
  const std::string all_missing =
      bar_chart_svg("t", {{"x", std::numeric_limits<double>::quiet_NaN()}}, "us");
  EXPECT_EQ(xml_problem(all_missing), "");
}

TEST(SvgHtml, WrapsTheSvgStandalone) {
  const std::string svg = bar_chart_svg("t", {{"a", 1.0}}, "us");
  const std::string html = wrap_html(svg, "a <b> page");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find(svg), std::string::npos);
  EXPECT_NE(html.find("<title>a &lt;b&gt; page</title>"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

// ---- tacos visualize ---------------------------------------------------------------------

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

fs::path scratch(const std::string& name) {
  const fs::path dir =
      tacos_test::TestTempDir::path() / ("tacos_svg_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

RunResult run_tacos(const std::string& args, const fs::path& dir) {
  const fs::path err_file = dir / "stderr.txt";
  const std::string command = std::string(TACOS_CLI_PATH) + " " + args + " 2>" + err_file.string();
  RunResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_text(err_file);
  return result;
}

TEST(SvgCli, VisualizeWritesSvgAndHtml) {
  const fs::path dir = scratch("cli");
  const Topology ring = gen("ring:4");
  const Algorithm a = synthesized(ring, CollectiveKind::kAllGather);
  write_algorithm_json(a, (dir / "algorithm.json").string());
  const std::string common =
      "visualize --algorithm " + (dir / "algorithm.json").string() + " --topology ring:4 --out ";
  RunResult r = run_tacos(common + (dir / "a.svg").string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote"), std::string::npos);
  const std::string svg = read_text(dir / "a.svg");
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(svg, algorithm_svg(read_algorithm_json((dir / "algorithm.json").string()), ring));
  r = run_tacos(common + (dir / "a.html").string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_text(dir / "a.html");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find(svg), std::string::npos);
}

TEST(SvgCli, BadInputFailsWithOneLineAndNoOutput) {
  const fs::path dir = scratch("bad");
  const Algorithm a = synthesized(gen("ring:4"), CollectiveKind::kAllGather);
  const std::string good = (dir / "algorithm.json").string();
  write_algorithm_json(a, good);
  std::ofstream(dir / "broken.json") << "{\"format\": \"tacos-algorithm\", ";
  struct Case {
    std::string args;
    std::string expect;
  };
  const fs::path out = dir / "out.svg";
  const Case cases[] = {
      {"--algorithm " + (dir / "missing.json").string() + " --topology ring:4 --out " +
           out.string(),
       "missing.json"},
      {"--algorithm " + (dir / "broken.json").string() + " --topology ring:4 --out " + out.string(),
       "broken.json"},
      {"--algorithm " + good + " --topology uniring:4 --out " + out.string(), "no link"},
      {"--algorithm " + good + " --topology ring:8 --out " + out.string(), "NPUs"},
      {"--algorithm " + good + " --topology ring:4 --out " + (dir / "out.png").string(), "--out"},
  };
  for (const Case& c : cases) {
    const RunResult r = run_tacos("visualize " + c.args, dir);
    EXPECT_EQ(r.exit_code, 1) << c.args;
    EXPECT_NE(r.err.find("tacos: error: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.args;
    EXPECT_FALSE(fs::exists(dir / "out.png"));
  }
}

}  // namespace
}  // namespace tacos
