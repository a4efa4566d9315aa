// Generators, link parameters, loader dispatch and describe_topology.
#include "tacos/topology/topology.h"

#include <gtest/gtest.h>

#include <string>

#include "tacos/common/error.h"
#include "tacos/topology/describe.h"
#include "tacos/topology/generators.h"
#include "tacos/topology/loader.h"

namespace tacos {
namespace {

Topology gen(const std::string& spec, const std::string& bandwidth = "",
             const std::string& latency = "") {
  return generate_topology(spec, parse_link_params(bandwidth, latency));
}

int count_links(const Topology& t, DeviceId src, DeviceId dst) {
  int count = 0;
  for (const Link& l : t.links()) count += l.src == src && l.dst == dst;
  return count;
}

// Every link u -> v of a bidirectional generator has its reverse.
void expect_symmetric(const Topology& t) {
  for (const Link& l : t.links()) EXPECT_GE(t.find_link(l.dst, l.src), 0) << t.name();
}

TEST(TopologyGen, LinkCounts) {
  struct Case {
    const char* spec;
    int npus, switches, links;
  };
  const Case cases[] = {
      {"ring:8", 8, 0, 16},       {"uniring:4", 4, 0, 4},        {"fc:8", 8, 0, 56},
      {"switch:8", 8, 1, 16},     {"mesh2d:5x5", 25, 0, 80},     {"torus2d:4x4", 16, 0, 64},
      {"mesh3d:2x2x2", 8, 0, 24}, {"torus3d:3x3x3", 27, 0, 162}, {"hypercube:16", 16, 0, 64},
      {"torus2d:2x3", 6, 0, 18},  {"ring:2", 2, 0, 2},           {"ring:1", 1, 0, 0},
      {"hypercube:1", 1, 0, 0},   {"uniring:2", 2, 0, 2},        {"mesh2d:1x4", 4, 0, 6},
  };
  for (const Case& c : cases) {
    const Topology t = gen(c.spec);
    EXPECT_EQ(t.npus(), c.npus) << c.spec;
    EXPECT_EQ(t.switches(), c.switches) << c.spec;
    EXPECT_EQ(t.num_links(), c.links) << c.spec;
    EXPECT_EQ(t.name(), c.spec);
  }
}

TEST(TopologyGen, RingAndUniRingDirections) {
  const Topology ring = gen("ring:8");
  expect_symmetric(ring);
  EXPECT_GE(ring.find_link(7, 0), 0);
  EXPECT_GE(ring.find_link(0, 7), 0);
  const Topology uni = gen("uniring:4");
  for (int i = 0; i < 4; ++i) {
    EXPECT_GE(uni.find_link(i, (i + 1) % 4), 0);
    EXPECT_EQ(uni.find_link((i + 1) % 4, i), -1);
  }
}

TEST(TopologyGen, SwitchLinksGoThroughTheSwitch) {
  const Topology t = gen("switch:8");
  for (int n = 0; n < 8; ++n) {
    EXPECT_GE(t.find_link(n, 8), 0);
    EXPECT_GE(t.find_link(8, n), 0);
  }
  EXPECT_TRUE(t.is_switch(8));
}

TEST(TopologyGen, TorusOfTwoHasNoDuplicates) {
  const Topology t = gen("torus2d:2x3");
  for (const Link& l : t.links()) EXPECT_EQ(count_links(t, l.src, l.dst), 1);
  EXPECT_GE(t.find_link(0, 1), 0);  // x axis of size 2: one pair
  EXPECT_GE(t.find_link(0, 4), 0);  // y wrap: 0 -> (0, 2) = 4
  expect_symmetric(t);
}

TEST(TopologyGen, MeshAndTorusIdsAreXFirst) {
  const Topology mesh = gen("mesh2d:4x3");
  EXPECT_GE(mesh.find_link(0, 1), 0);   // x neighbour
  EXPECT_GE(mesh.find_link(0, 4), 0);   // y neighbour: id + W
  EXPECT_EQ(mesh.find_link(3, 4), -1);  // no wrap in a mesh
  EXPECT_EQ(mesh.find_link(0, 3), -1);
  const Topology torus = gen("torus3d:3x3x3");
  EXPECT_GE(torus.find_link(0, 2), 0);   // x wrap
  EXPECT_GE(torus.find_link(0, 6), 0);   // y wrap: 2 * W
  EXPECT_GE(torus.find_link(0, 18), 0);  // z wrap: 2 * W * H
  EXPECT_GE(torus.find_link(0, 9), 0);   // z neighbour
  expect_symmetric(torus);
  for (DeviceId d = 0; d < torus.devices(); ++d) EXPECT_EQ(torus.out_links(d).size(), 6u);
}

TEST(TopologyGen, HypercubeLinksFlipOneBit) {
  const Topology t = gen("hypercube:16");
  for (const Link& l : t.links()) {
    const int diff = l.src ^ l.dst;
    EXPECT_EQ(diff & (diff - 1), 0) << l.src << " -> " << l.dst;
  }
  for (DeviceId d = 0; d < 16; ++d) EXPECT_EQ(t.out_links(d).size(), 4u);
}

TEST(TopologyGen, MultiDimensional) {
  const Topology t = gen("ring:4,fc:8,switch:4");
  EXPECT_EQ(t.npus(), 128);
  EXPECT_EQ(t.switches(), 32);
  // Per group: ring 8 links, fc 56, switch 8; groups: 32, 16, 32.
  EXPECT_EQ(t.num_links(), 32 * 8 + 16 * 56 + 32 * 8);
  EXPECT_GE(t.find_link(0, 1), 0);    // dim 0 ring, stride 1
  EXPECT_GE(t.find_link(0, 3), 0);    // ring wrap
  EXPECT_GE(t.find_link(0, 28), 0);   // dim 1 fc, stride 4: coordinate 7
  EXPECT_EQ(t.find_link(0, 2), -1);   // ring:4 has no chord
  EXPECT_GE(t.find_link(0, 128), 0);  // the first switch group: 0, 32, 64, 96
  EXPECT_GE(t.find_link(96, 128), 0);
  EXPECT_GE(t.find_link(1, 129), 0);
  EXPECT_EQ(t.find_link(1, 128), -1);
  EXPECT_EQ(t.name(), "ring:4,fc:8,switch:4");
  const Topology uni = gen("uniring:3,ring:2");
  EXPECT_EQ(uni.num_links(), 2 * 3 + 3 * 2);
}

TEST(TopologyGen, PerAxisBandwidthLandsOnItsAxis) {
  const Topology t = gen("mesh2d:3x2", "50,25");
  EXPECT_DOUBLE_EQ(t.link(t.find_link(0, 1)).bandwidth_gbps, 50);
  EXPECT_DOUBLE_EQ(t.link(t.find_link(0, 3)).bandwidth_gbps, 25);
  EXPECT_DOUBLE_EQ(t.link(t.find_link(3, 0)).bandwidth_gbps, 25);
  const Topology lat = gen("torus3d:2x2x2", "", "1us,2us,500ns");
  EXPECT_EQ(lat.link(lat.find_link(0, 1)).latency_ps, 1'000'000);
  EXPECT_EQ(lat.link(lat.find_link(0, 2)).latency_ps, 2'000'000);
  EXPECT_EQ(lat.link(lat.find_link(0, 4)).latency_ps, 500'000);
  const Topology dims = gen("ring:2,switch:2", "200,50", "0.1,2");
  EXPECT_DOUBLE_EQ(dims.link(dims.find_link(0, 1)).bandwidth_gbps, 200);
  EXPECT_DOUBLE_EQ(dims.link(dims.find_link(0, 4)).bandwidth_gbps, 50);
  EXPECT_EQ(dims.link(dims.find_link(4, 2)).latency_ps, 2'000'000);
  const Topology cube = gen("hypercube:8", "10,20,40");
  EXPECT_DOUBLE_EQ(cube.link(cube.find_link(0, 4)).bandwidth_gbps, 40);
}

TEST(TopologyGen, LinkParamDefaultsAndUnits) {
  const LinkParams defaults = parse_link_params("", "");
  EXPECT_EQ(defaults.bandwidth_gbps, std::vector<double>{50.0});
  EXPECT_EQ(defaults.latency_ps, std::vector<Time>{500'000});
  const LinkParams p = parse_link_params("100,25", "0.5,250ns,1ms");
  EXPECT_EQ(p.bandwidth_gbps, (std::vector<double>{100, 25}));
  EXPECT_EQ(p.latency_ps, (std::vector<Time>{500'000, 250'000, 1'000'000'000}));
  const Topology t = generate_topology("ring:4", LinkParams{});
  EXPECT_DOUBLE_EQ(t.link(0).bandwidth_gbps, 50);
  EXPECT_EQ(t.link(0).latency_ps, 500'000);
}

TEST(TopologyGen, UnwindSwitch) {
  const Topology t = gen("switch:4", "100", "0.5us").unwind_switches();
  EXPECT_EQ(t.npus(), 4);
  EXPECT_EQ(t.switches(), 0);
  ASSERT_EQ(t.num_links(), 12);
  for (const Link& l : t.links()) {
    EXPECT_DOUBLE_EQ(l.bandwidth_gbps, 100.0 / 3);
    EXPECT_EQ(l.latency_ps, 1'000'000);
  }
}

void expect_error(const std::string& spec, const std::string& bandwidth, const std::string& latency,
                  const std::string& fragment) {
  try {
    gen(spec, bandwidth, latency);
    ADD_FAILURE() << spec << " did not throw";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(fragment), std::string::npos) << spec << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(TopologyGen, BadSpecsThrow) {
  expect_error("donut:4", "", "", "unknown kind 'donut'");
  expect_error("donut:4", "", "", "torus2d");  // lists the valid kinds
  expect_error("ring:4,donut:2", "", "", "unknown kind");
  expect_error("ring", "", "", "KIND:SIZE");
  expect_error("", "", "", "--topology");
  expect_error("ring:abc", "", "", "whole number");
  expect_error("ring:4x", "", "", "whole number");
  expect_error("ring:", "", "", "whole number");
  expect_error("ring:-3", "", "", "at least 1");
  expect_error("ring:0", "", "", "at least 1");
  expect_error("mesh2d:4x0", "", "", "at least 1");
  expect_error("mesh2d:4", "", "", "expected 2 sizes");
  expect_error("torus3d:4x4", "", "", "expected 3 sizes");
  expect_error("hypercube:12", "", "", "power of two");
  expect_error("ring:99999999999999999999", "", "", "whole number");
  expect_error("ring:100000000", "", "", "too large");
  expect_error("ring:4096,ring:4096,ring:4", "", "", "too many NPUs");
  expect_error("fc:100000", "", "", "too many links");
  expect_error("ring:4,mesh2d:2x2", "", "", "cannot be a dimension");
  expect_error("mesh2d:3x2", "50,25,10", "", "expected 1 or 2 values");
  expect_error("ring:4,fc:4", "", "1us,2us,3us", "expected 1 or 2 values");
  expect_error("hypercube:8", "1,2", "", "expected 1 or 3 values");
  expect_error("ring:4", "fast", "", "--bandwidth");
  expect_error("ring:4", "0", "", "greater than zero");
  expect_error("ring:4", "", "-1us", "--latency");
  expect_error("ring:4", "", "5 parsecs", "--latency");
}

TEST(TopologyGen, HelpListsEveryKind) {
  const std::string help = generator_help();
  for (const char* kind : {"ring:N", "uniring:N", "fc:N", "switch:N", "mesh2d:WxH", "torus2d:WxH",
                           "mesh3d:XxYxZ", "torus3d:XxYxZ", "hypercube:N"})
    EXPECT_NE(help.find(kind), std::string::npos) << kind;
}

TEST(TopologyLoader, SpecOrFile) {
  EXPECT_EQ(load_topology("ring:4", LinkParams{}).num_links(), 8);
  const Topology t = load_topology(TACOS_SOURCE_DIR "/examples/asymmetric_ring4.yaml",
                                   parse_link_params("1", "1us"));
  EXPECT_EQ(t.npus(), 4);
  EXPECT_NE(t.link(0).bandwidth_gbps, 1);  // --bandwidth does not apply to files
  for (const std::string missing : {"/no/such/topo.yaml", "nosuch.yml", "no/such/file"}) {
    try {
      load_topology(missing, LinkParams{});
      ADD_FAILURE() << missing;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), missing + ": cannot open");
    }
  }
}

TEST(TopologyDescribe, Ring) {
  const TopologySummary s = describe_topology(gen("ring:8", "", "0.5us"));
  EXPECT_EQ(s.npus, 8);
  EXPECT_EQ(s.switches, 0);
  EXPECT_EQ(s.links, 16);
  EXPECT_EQ(s.min_degree, 2);
  EXPECT_EQ(s.max_degree, 2);
  EXPECT_EQ(s.diameter_hops, 4);
  EXPECT_EQ(s.diameter_latency_ps, 2'000'000);
  EXPECT_DOUBLE_EQ(s.min_ingress_gbps, 100);
  EXPECT_DOUBLE_EQ(s.max_ingress_gbps, 100);
  EXPECT_TRUE(s.connected);
}

TEST(TopologyDescribe, MeshAndUniRing) {
  const TopologySummary mesh = describe_topology(gen("mesh2d:3x3"));
  EXPECT_EQ(mesh.diameter_hops, 4);
  EXPECT_EQ(mesh.min_degree, 2);
  EXPECT_EQ(mesh.max_degree, 4);
  const TopologySummary uni = describe_topology(gen("uniring:5", "", "1us"));
  EXPECT_EQ(uni.diameter_hops, 4);
  EXPECT_EQ(uni.diameter_latency_ps, 4'000'000);
  EXPECT_TRUE(uni.connected);
}

TEST(TopologyDescribe, HeterogeneousIngress) {
  // Corner NPU 0: x 50 + y 25; centre NPU 4: 2 x 50 + 2 x 25.
  const TopologySummary s = describe_topology(gen("mesh2d:3x3", "50,25"));
  EXPECT_DOUBLE_EQ(s.min_ingress_gbps, 75);
  EXPECT_DOUBLE_EQ(s.max_ingress_gbps, 150);
}

TEST(TopologyDescribe, SwitchesRelay) {
  const TopologySummary s = describe_topology(gen("switch:4", "100", "0.5us"));
  EXPECT_EQ(s.switches, 1);
  EXPECT_EQ(s.min_degree, 1);
  EXPECT_EQ(s.max_degree, 4);
  EXPECT_EQ(s.diameter_hops, 2);
  EXPECT_EQ(s.diameter_latency_ps, 1'000'000);
  EXPECT_DOUBLE_EQ(s.max_ingress_gbps, 100);
  EXPECT_TRUE(s.connected);
}

TEST(TopologyDescribe, LatencyPicksTheFastestPath) {
  // 0 -> 2 directly costs 10 us; through 1 it costs 2 us in two hops.
  const Topology t(3, 0,
                   {{0, 1, 10, 1'000'000},
                    {1, 2, 10, 1'000'000},
                    {0, 2, 10, 10'000'000},
                    {2, 0, 10, 1'000'000}});
  const TopologySummary s = describe_topology(t);
  EXPECT_EQ(s.diameter_hops, 2);  // 1 -> 0 goes through 2
  EXPECT_EQ(s.diameter_latency_ps, 2'000'000);
  EXPECT_TRUE(s.connected);
}

TEST(TopologyDescribe, DisconnectedDoesNotCrash) {
  const Topology t(4, 0, {{0, 1, 10, 1'000'000}, {1, 0, 10, 1'000'000}, {2, 3, 10, 3'000'000}});
  const TopologySummary s = describe_topology(t);
  EXPECT_FALSE(s.connected);
  EXPECT_EQ(s.diameter_hops, 1);
  EXPECT_EQ(s.diameter_latency_ps, 3'000'000);
  EXPECT_EQ(s.min_degree, 0);
  EXPECT_DOUBLE_EQ(s.min_ingress_gbps, 0);
  const TopologySummary lone = describe_topology(gen("ring:1"));
  EXPECT_TRUE(lone.connected);
  EXPECT_EQ(lone.diameter_hops, 0);
}

}  // namespace
}  // namespace tacos
