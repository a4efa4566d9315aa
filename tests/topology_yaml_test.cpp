// Topology YAML files: the tacos format, the generate block and ASTRA-sim network configs.
#include "tacos/io/topology_yaml.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tacos/common/error.h"
#include "tacos/topology/describe.h"
#include "tacos/topology/loader.h"
#include "tacos/topology/switch_routes.h"
#include "test_temp_dir.h"

namespace tacos {
namespace {

namespace fs = std::filesystem;

const std::string kExamples = TACOS_SOURCE_DIR "/examples/";

// Writes `text` to a fresh file in GoogleTest's temporary directory and returns its path.
std::string write_temp(const std::string& name, const std::string& text) {
  const fs::path dir = tacos_test::TestTempDir::path() / "tacos_topology_yaml";
  fs::create_directories(dir);
  const fs::path path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

// Expects read_topology_yaml to fail with "FILE:LINE: ..." containing `fragment`.
void expect_yaml_error(const std::string& name, const std::string& text, int line,
                       const std::string& fragment) {
  const std::string path = write_temp(name, text);
  try {
    read_topology_yaml(path);
    ADD_FAILURE() << name << " did not throw";
  } catch (const Error& e) {
    const std::string message = e.what();
    const std::string prefix = path + ":" + std::to_string(line) + ": ";
    EXPECT_EQ(message.rfind(prefix, 0), 0u) << name << ": " << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << name << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(TopologyYaml, AsymmetricRingExample) {
  const Topology t = read_topology_yaml(kExamples + "asymmetric_ring4.yaml");
  EXPECT_EQ(t.npus(), 4);
  EXPECT_EQ(t.num_links(), 8);
  EXPECT_EQ(t.name(), "asymmetric-ring4");
  EXPECT_DOUBLE_EQ(t.link(t.find_link(0, 1)).bandwidth_gbps, 100);
  EXPECT_DOUBLE_EQ(t.link(t.find_link(1, 0)).bandwidth_gbps, 25);
  EXPECT_EQ(t.link(t.find_link(3, 0)).latency_ps, 500'000);
}

TEST(TopologyYaml, SwitchPodExample) {
  const Topology t = read_topology_yaml(kExamples + "switch_pod.yaml");
  EXPECT_EQ(t.npus(), 8);
  EXPECT_EQ(t.switches(), 2);
  EXPECT_EQ(t.num_links(), 24);
  EXPECT_GE(t.find_link(9, 7), 0);  // bidirectional adds the reverse
  const TopologySummary s = describe_topology(t);
  EXPECT_TRUE(s.connected);
  EXPECT_EQ(s.diameter_hops, 3);  // e.g. 0 -> 8 -> 1 -> 5
  const Topology unwound = t.unwind_switches();
  EXPECT_EQ(unwound.switches(), 0);
  EXPECT_DOUBLE_EQ(unwound.link(unwound.find_link(0, 1)).bandwidth_gbps, 50.0 / 3);
}

TEST(TopologyYaml, AstraSimExample) {
  const Topology t = read_topology_yaml(kExamples + "astra_ring_fc_switch.yml");
  EXPECT_EQ(t.npus(), 16);
  EXPECT_EQ(t.switches(), 8);
  // Dim 0 ring of 2: one pair; bare latencies are ns in ASTRA-sim files.
  const Link& ring = t.link(t.find_link(0, 1));
  EXPECT_EQ(ring.latency_ps, 50'000);
  EXPECT_DOUBLE_EQ(ring.bandwidth_gbps, 200);
  const Link& fc = t.link(t.find_link(0, 6));  // dim 1, stride 2
  EXPECT_EQ(fc.latency_ps, 500'000);
  EXPECT_DOUBLE_EQ(fc.bandwidth_gbps, 100);
  const Link& sw = t.link(t.find_link(8, 16));  // dim 2 group {0, 8} -> switch 16
  EXPECT_EQ(sw.latency_ps, 2'000'000);
  EXPECT_DOUBLE_EQ(sw.bandwidth_gbps, 50);
  // 8 ring groups x 2 + 4 fc groups x 12 + 8 switch groups x 4.
  EXPECT_EQ(t.num_links(), 16 + 48 + 32);
}

TEST(TopologyYaml, GenerateExample) {
  const Topology t = read_topology_yaml(kExamples + "hetero_mesh.yaml");
  EXPECT_EQ(t.npus(), 16);
  EXPECT_EQ(t.num_links(), 48);
  EXPECT_EQ(t.name(), "hetero-mesh-4x4");
  EXPECT_DOUBLE_EQ(t.link(t.find_link(0, 1)).bandwidth_gbps, 100);
  EXPECT_DOUBLE_EQ(t.link(t.find_link(0, 4)).bandwidth_gbps, 25);
  const TopologySummary s = describe_topology(t);
  EXPECT_DOUBLE_EQ(s.min_ingress_gbps, 125);  // corner: 100 + 25
  EXPECT_DOUBLE_EQ(s.max_ingress_gbps, 250);  // inner: 2 x 100 + 2 x 25
}

TEST(TopologyYaml, EveryExampleLoads) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kExamples)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".yaml" && ext != ".yml") continue;
    ++files;
    const Topology t = load_topology(entry.path().string(), LinkParams{});
    EXPECT_GT(t.npus(), 1) << entry.path();
    EXPECT_NO_THROW(t.require_strongly_connected()) << entry.path();
  }
  EXPECT_GE(files, 4);
}

// The examples and these tests must work without ../shared/data (it is not shipped): copy the
// examples somewhere else, load them there, and make sure none refers to the shared folder.
TEST(TopologyYaml, SharedDataIsNotNeeded) {
  const fs::path dir = tacos_test::TestTempDir::path() / "tacos_examples_copy";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(kExamples)) {
    if (!entry.is_regular_file()) continue;  // examples/sweeps/: Python sweep files
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str().find("shared/data"), std::string::npos) << entry.path();
    EXPECT_EQ(text.str().find("TACOS_SHARED_DATA_DIR"), std::string::npos) << entry.path();
    fs::copy_file(entry.path(), dir / entry.path().filename());
  }
  EXPECT_EQ(read_topology_yaml((dir / "astra_ring_fc_switch.yml").string()).npus(), 16);
  EXPECT_EQ(read_topology_yaml((dir / "asymmetric_ring4.yaml").string()).npus(), 4);
}

TEST(TopologyYaml, LinksWithSwitchesAndDefaults) {
  const std::string path = write_temp("ok.yaml",
                                      "npus: 2\n"
                                      "switches: 1\n"
                                      "links:\n"
                                      "  - src: 0\n"
                                      "    dst: 2\n"
                                      "    bandwidth: 12.5\n"
                                      "    latency: 250ns\n"
                                      "    bidirectional: true\n"
                                      "  - {src: 1, dst: 2, bandwidth: \"10\", latency: 2}\n"
                                      "  - {src: 2, dst: 1, bandwidth: 10, latency: 1ms}\n");
  const Topology t = read_topology_yaml(path);
  EXPECT_EQ(t.switches(), 1);
  EXPECT_EQ(t.num_links(), 4);
  EXPECT_EQ(t.name(), path);
  EXPECT_EQ(t.link(t.find_link(2, 0)).latency_ps, 250'000);
  EXPECT_DOUBLE_EQ(t.link(t.find_link(2, 0)).bandwidth_gbps, 12.5);
  EXPECT_EQ(t.link(t.find_link(1, 2)).latency_ps, 2'000'000);  // bare = us
  EXPECT_EQ(t.link(t.find_link(2, 1)).latency_ps, 1'000'000'000);
}

TEST(TopologyYaml, GenerateBlockVariants) {
  const Topology numbers = read_topology_yaml(write_temp(
      "gen_numbers.yaml", "generate: {topology: \"torus2d:4x4\", bandwidth: 40, latency: 2}\n"));
  EXPECT_EQ(numbers.num_links(), 64);
  EXPECT_EQ(numbers.name(), "torus2d:4x4");
  EXPECT_DOUBLE_EQ(numbers.link(0).bandwidth_gbps, 40);
  EXPECT_EQ(numbers.link(0).latency_ps, 2'000'000);
  const Topology defaults =
      read_topology_yaml(write_temp("gen_defaults.yaml", "generate:\n  topology: ring:4,fc:2\n"));
  EXPECT_EQ(defaults.npus(), 8);
  EXPECT_DOUBLE_EQ(defaults.link(0).bandwidth_gbps, 50);
  EXPECT_EQ(defaults.link(0).latency_ps, 500'000);
}

TEST(TopologyYaml, AstraSuffixesAndExtraKeys) {
  const Topology t = read_topology_yaml(write_temp("astra_ok.yml",
                                                   "topology: [Switch]\n"
                                                   "npus_count: [4]\n"
                                                   "bandwidth: [100]\n"
                                                   "latency: [1us]\n"
                                                   "comment: ignored as ASTRA-sim does\n"));
  EXPECT_EQ(t.npus(), 4);
  EXPECT_EQ(t.switches(), 1);
  EXPECT_EQ(t.link(0).latency_ps, 1'000'000);
}

TEST(TopologyYaml, FileErrors) {
  const std::string missing = ::testing::TempDir() + "/tacos_no_such_file.yaml";
  try {
    read_topology_yaml(missing);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), missing + ": cannot open");
  }
  EXPECT_THROW(read_topology_yaml(tacos_test::TestTempDir::path().string()), Error);  // a directory
}

TEST(TopologyYaml, SyntaxAndShapeErrors) {
  expect_yaml_error("malformed.yaml", "npus: 4\nlinks: [\n  {src: 0, dst: 1\n", 4, "malformed");
  expect_yaml_error("mismatched.yaml", "npus: 4\nlinks:\n  - {src: 0, dst: 1]\n", 3, "malformed");
  expect_yaml_error("empty.yaml", "", 1, "expected a map");
  expect_yaml_error("list.yaml", "- 1\n- 2\n", 1, "expected a map");
  expect_yaml_error("unknown_key.yaml", "npus: 2\nlinkz: []\n", 2, "unknown key 'linkz'");
  expect_yaml_error("no_npus.yaml", "links: []\n", 1, "needs 'npus'");
  expect_yaml_error("no_links.yaml", "npus: 2\n", 1, "needs 'links'");
  expect_yaml_error("npus_text.yaml", "npus: four\nlinks: []\n", 1, "whole number for npus");
  expect_yaml_error("npus_zero.yaml", "npus: 0\nlinks: []\n", 1, "npus must be between 1");
  expect_yaml_error("npus_huge.yaml", "npus: 999999999\nlinks: []\n", 1, "npus must be");
  expect_yaml_error("switches_neg.yaml", "npus: 2\nswitches: -1\nlinks: []\n", 2, "switches");
  expect_yaml_error("links_map.yaml", "npus: 2\nlinks: {src: 0}\n", 2, "expected a list for links");
}

TEST(TopologyYaml, LinkErrors) {
  const std::string head = "npus: 2\nlinks:\n";
  expect_yaml_error("link_scalar.yaml", head + "  - 7\n", 3, "expected a map");
  expect_yaml_error("missing_npu.yaml", head + "  - {src: 0, dst: 5, bandwidth: 1, latency: 1}\n",
                    3, "links[0].dst = 5 names no device");
  expect_yaml_error("negative_src.yaml",
                    head +
                        "  - {src: 0, dst: 1, bandwidth: 1, latency: 1}\n"
                        "  - {src: -1, dst: 1, bandwidth: 1, latency: 1}\n",
                    4, "links[1].src = -1");
  expect_yaml_error(
      "missing_switch.yaml",
      "npus: 2\nswitches: 1\nlinks:\n  - {src: 0, dst: 3, bandwidth: 1, latency: 1}\n", 4,
      "names no device");
  expect_yaml_error("no_dst.yaml", head + "  - {src: 0, bandwidth: 1, latency: 1}\n", 3,
                    "links[0] needs 'dst'");
  expect_yaml_error("no_latency.yaml", head + "  - {src: 0, dst: 1, bandwidth: 1}\n", 3,
                    "needs 'latency'");
  expect_yaml_error("zero_bw.yaml",
                    head +
                        "  - {src: 0, dst: 1, bandwidth: 1, latency: 1}\n"
                        "  - {src: 1, dst: 0, bandwidth: 0, latency: 1}\n",
                    4, "greater than zero");
  expect_yaml_error("text_bw.yaml", head + "  - {src: 0, dst: 1, bandwidth: fast, latency: 1}\n", 3,
                    "links[0].bandwidth");
  expect_yaml_error("neg_latency.yaml",
                    head + "  - {src: 0, dst: 1, bandwidth: 1, latency: -2us}\n", 3,
                    "must not be negative");
  expect_yaml_error("bad_unit.yaml", head + "  - {src: 0, dst: 1, bandwidth: 1, latency: 2 days}\n",
                    3, "unknown latency unit");
  expect_yaml_error("list_bw.yaml", head + "  - {src: 0, dst: 1, bandwidth: [1], latency: 1}\n", 3,
                    "expected a value for links[0].bandwidth");
  expect_yaml_error("bad_bool.yaml",
                    head + "  - {src: 0, dst: 1, bandwidth: 1, latency: 1, bidirectional: maybe}\n",
                    3, "true or false");
  expect_yaml_error("link_key.yaml",
                    head + "  - {src: 0, dst: 1, bandwidth: 1, latency: 1, colour: red}\n", 3,
                    "unknown key 'colour'");
  expect_yaml_error("self_loop.yaml", head + "  - {src: 1, dst: 1, bandwidth: 1, latency: 1}\n", 3,
                    "self loop");
  expect_yaml_error("duplicate.yaml",
                    head +
                        "  - {src: 0, dst: 1, bandwidth: 1, latency: 1, bidirectional: true}\n"
                        "  - {src: 1, dst: 0, bandwidth: 2, latency: 1}\n",
                    4, "duplicate link 1 -> 0 (first given on line 3)");
}

TEST(TopologyYaml, SwitchToSwitchLinksMakeTiers) {
  // NPU 0 on leaf 2, NPU 1 on leaf 3, the leaves joined: a message crosses both switches.
  const std::string path =
      write_temp("two_tier.yaml",
                 "npus: 2\nswitches: 2\nlinks:\n"
                 "  - {src: 0, dst: 2, bandwidth: 50, latency: 1us, bidirectional: true}\n"
                 "  - {src: 1, dst: 3, bandwidth: 50, latency: 1us, bidirectional: true}\n"
                 "  - {src: 2, dst: 3, bandwidth: 100, latency: 1us, bidirectional: true}\n");
  const Topology t = read_topology_yaml(path);
  EXPECT_EQ(t.num_links(), 6);
  const SwitchRoutes routes(t);
  const auto route = routes.route(0, 1);
  ASSERT_EQ(route.size(), 3u);
  EXPECT_EQ(t.link(route[0]).dst, 2);
  EXPECT_EQ(t.link(route[1]).dst, 3);
  EXPECT_EQ(t.link(route[2]).dst, 1);
}

TEST(TopologyYaml, GenerateErrors) {
  expect_yaml_error("gen_kind.yaml", "name: x\ngenerate:\n  topology: donut:4\n", 3,
                    "unknown kind 'donut'");
  expect_yaml_error("gen_params.yaml",
                    "generate: {topology: \"mesh2d:2x2\", bandwidth: \"1,2,3\"}\n", 1,
                    "expected 1 or 2 values");
  expect_yaml_error("gen_bad_bw.yaml", "generate:\n  topology: ring:4\n  bandwidth: -5\n", 2,
                    "--bandwidth");
  expect_yaml_error("gen_no_topology.yaml", "generate:\n  bandwidth: 5\n", 2, "needs 'topology'");
  expect_yaml_error("gen_scalar.yaml", "generate: ring:4\n", 1, "expected a map");
  expect_yaml_error("gen_key.yaml", "generate:\n  topology: ring:4\n  size: 3\n", 3,
                    "unknown key 'size'");
  expect_yaml_error("gen_and_links.yaml", "generate: {topology: ring:4}\nnpus: 4\n", 2,
                    "cannot be combined");
}

TEST(TopologyYaml, AstraErrors) {
  expect_yaml_error("astra_len.yml",
                    "topology: [Ring, Switch]\nnpus_count: [2, 4]\nbandwidth: [1]\n"
                    "latency: [1, 2]\n",
                    3, "'bandwidth' has 1 entries but 'topology' has 2");
  expect_yaml_error("astra_block.yml",
                    "topology: [Ring, Torus]\nnpus_count: [2, 4]\nbandwidth: [1, 1]\n"
                    "latency: [1, 2]\n",
                    1, "unknown building block 'Torus'");
  expect_yaml_error("astra_npus.yml",
                    "topology: [Ring]\nnpus_count: [1]\nbandwidth: [1]\nlatency: [1]\n", 2,
                    "npus_count[0] must be between 2");
  expect_yaml_error("astra_bw.yml",
                    "topology: [Ring]\nnpus_count: [4]\nbandwidth: [0]\nlatency: [1]\n", 3,
                    "greater than zero");
  expect_yaml_error("astra_lat.yml",
                    "topology: [Ring]\nnpus_count: [4]\nbandwidth: [1]\nlatency: [-1]\n", 4,
                    "must not be negative");
  expect_yaml_error("astra_missing.yml", "topology: [Ring]\nnpus_count: [4]\nbandwidth: [1]\n", 1,
                    "needs 'latency'");
  expect_yaml_error("astra_scalar.yml",
                    "topology: Ring\nnpus_count: [4]\nbandwidth: [1]\nlatency: [1]\n", 1,
                    "expected a list for topology");
  expect_yaml_error("astra_empty.yml", "topology: []\nnpus_count: []\nbandwidth: []\nlatency: []\n",
                    1, "at least one dimension");
  expect_yaml_error("astra_big.yml",
                    "topology: [Ring, Ring, Ring]\nnpus_count: [4096, 4096, 4096]\n"
                    "bandwidth: [1, 1, 1]\nlatency: [1, 1, 1]\n",
                    2, "too many NPUs");
}

}  // namespace
}  // namespace tacos
