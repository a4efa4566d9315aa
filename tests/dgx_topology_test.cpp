// Real-system generators: dgx1, dgx-a100 / dgx-h100 / dgx-h200 / dgx-b200:NODES and
// gb200-nvl72:RACKS (numbers: docs/topologies.md).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tacos/common/error.h"
#include "tacos/topology/generators.h"
#include "tacos/topology/loader.h"
#include "tacos/topology/switch_routes.h"
#include "tacos/topology/topology.h"
#include "test_printers.h"

namespace tacos {
namespace {

Topology gen(const std::string& spec, const std::string& bandwidth = "",
             const std::string& latency = "") {
  return generate_topology(spec, parse_link_params(bandwidth, latency));
}

// The DGX-1 NVLink multiplicity matrix as published (rows 0..7).
constexpr int kNvLinks[8][8] = {
    {0, 2, 1, 1, 2, 0, 0, 0}, {2, 0, 1, 2, 0, 1, 0, 0}, {1, 1, 0, 2, 0, 0, 2, 0},
    {1, 2, 2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2, 1, 1}, {0, 1, 0, 0, 2, 0, 1, 2},
    {0, 0, 2, 0, 1, 1, 0, 2}, {0, 0, 0, 1, 1, 2, 2, 0},
};

TEST(DgxTopology, Dgx1MatrixIsSymmetricWithSixNvLinksPerGpu) {
  for (int a = 0; a < 8; ++a) {
    int total = 0;
    for (int b = 0; b < 8; ++b) {
      EXPECT_EQ(kNvLinks[a][b], kNvLinks[b][a]) << a << "," << b;
      total += kNvLinks[a][b];
    }
    EXPECT_EQ(total, 6) << "GPU " << a;
  }
}

TEST(DgxTopology, Dgx1LinksFollowTheMatrix) {
  const Topology t = gen("dgx1");
  EXPECT_EQ(t.npus(), 8);
  EXPECT_EQ(t.switches(), 0);
  EXPECT_EQ(t.num_links(), 32);  // 16 connected pairs, one link each way
  EXPECT_EQ(t.name(), "dgx1");
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) {
      const LinkId id = t.find_link(a, b);
      if (kNvLinks[a][b] == 0) {
        EXPECT_EQ(id, -1) << a << "->" << b;
        continue;
      }
      ASSERT_GE(id, 0) << a << "->" << b;
      EXPECT_DOUBLE_EQ(t.link(id).bandwidth_gbps, 25.0 * kNvLinks[a][b]);
      EXPECT_EQ(t.link(id).latency_ps, 500'000);
      // Symmetric: the reverse link has the same bandwidth.
      const LinkId back = t.find_link(b, a);
      ASSERT_GE(back, 0);
      EXPECT_DOUBLE_EQ(t.link(back).bandwidth_gbps, t.link(id).bandwidth_gbps);
    }
  t.require_strongly_connected();
}

TEST(DgxTopology, Dgx1TakesExplicitPerNvLinkBandwidthAndLatency) {
  const Topology t = gen("dgx1", "20", "1us");
  EXPECT_DOUBLE_EQ(t.link(t.find_link(0, 1)).bandwidth_gbps, 40.0);
  EXPECT_DOUBLE_EQ(t.link(t.find_link(0, 2)).bandwidth_gbps, 20.0);
  EXPECT_EQ(t.link(t.find_link(0, 2)).latency_ps, 1'000'000);
  EXPECT_THROW(gen("dgx1", "20,30"), Error);
  EXPECT_THROW(gen("dgx1:2"), Error);
}

std::string message_of_third_tier(const std::string& spec) {
  try {
    gen(spec);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

struct ClusterCase {
  const char* spec;
  int nodes;
  double nvswitch_gbps, nic_gbps;
};
void PrintTo(const ClusterCase& c, std::ostream* os) { *os << c.spec; }

class DgxCluster : public ::testing::TestWithParam<ClusterCase> {};

TEST_P(DgxCluster, DevicesLinksAndBandwidths) {
  // NVSwitch per node; NIC g of every node on the leaf of rail g (one leaf per rail: these
  // node counts fit a leaf's ports).
  const ClusterCase& c = GetParam();
  const Topology t = gen(c.spec);
  const int npus = 8 * c.nodes;
  EXPECT_EQ(t.npus(), npus);
  EXPECT_EQ(t.switches(), c.nodes == 1 ? 1 : c.nodes + 8);
  EXPECT_EQ(t.num_links(), c.nodes == 1 ? 2 * npus : 4 * npus);
  for (int gpu = 0; gpu < npus; ++gpu) {
    const DeviceId nvswitch = npus + gpu / 8;
    ASSERT_TRUE(t.is_switch(nvswitch));
    const LinkId up = t.find_link(gpu, nvswitch);
    const LinkId down = t.find_link(nvswitch, gpu);
    ASSERT_GE(up, 0);
    ASSERT_GE(down, 0);
    EXPECT_DOUBLE_EQ(t.link(up).bandwidth_gbps, c.nvswitch_gbps);
    EXPECT_DOUBLE_EQ(t.link(down).bandwidth_gbps, c.nvswitch_gbps);
    EXPECT_EQ(t.link(up).latency_ps, 250'000);
    // No NVSwitch reaches another node's GPUs.
    for (DeviceId other = npus; other < npus + c.nodes; ++other)
      if (other != nvswitch) {
        EXPECT_EQ(t.find_link(gpu, other), -1);
      }
    if (c.nodes > 1) {
      const DeviceId leaf = npus + c.nodes + gpu % 8;
      const LinkId nic = t.find_link(gpu, leaf);
      ASSERT_GE(nic, 0);
      ASSERT_GE(t.find_link(leaf, gpu), 0);
      EXPECT_DOUBLE_EQ(t.link(nic).bandwidth_gbps, c.nic_gbps);
      EXPECT_EQ(t.link(nic).latency_ps, 1'000'000);
      EXPECT_EQ(t.out_links(gpu).size(), 2u);
    }
  }
  t.require_strongly_connected();
}

TEST_P(DgxCluster, SwitchRoutesStayOnTheNodeOrTheRail) {
  const ClusterCase& c = GetParam();
  const Topology t = gen(c.spec);
  const SwitchRoutes routes(t);
  const int npus = 8 * c.nodes;
  for (int a = 0; a < npus; ++a)
    for (int b = 0; b < npus; ++b) {
      if (a == b) continue;
      const auto route = routes.route(a, b);
      if (a / 8 == b / 8) {
        ASSERT_EQ(route.size(), 2u) << a << "->" << b;
        EXPECT_EQ(t.link(route[0]).dst, npus + a / 8);
      } else if (a % 8 == b % 8) {
        ASSERT_EQ(route.size(), 2u) << a << "->" << b;
        EXPECT_EQ(t.link(route[0]).dst, npus + c.nodes + a % 8);
      } else {
        EXPECT_TRUE(route.empty()) << a << "->" << b << ": other node, other rail: relay";
      }
    }
}

TEST_P(DgxCluster, UnwindsToDirectLinks) {
  const ClusterCase& c = GetParam();
  const Topology t = gen(c.spec).unwind_switches();
  const int npus = 8 * c.nodes;
  EXPECT_EQ(t.switches(), 0);
  EXPECT_EQ(t.npus(), npus);
  // Same node: through the NVSwitch; same rail on another node: through the rail's leaf.
  EXPECT_EQ(t.num_links(), npus * 7 + (c.nodes > 1 ? npus * (c.nodes - 1) : 0));
  for (int a = 0; a < npus; ++a)
    for (int b = 0; b < npus; ++b) {
      if (a == b) continue;
      const LinkId id = t.find_link(a, b);
      if (a / 8 == b / 8) {
        ASSERT_GE(id, 0) << a << "->" << b;
        // P = 8 GPUs on the NVSwitch: B / (P - 1), latency 2L.
        EXPECT_DOUBLE_EQ(t.link(id).bandwidth_gbps, c.nvswitch_gbps / 7);
        EXPECT_EQ(t.link(id).latency_ps, 500'000);
      } else if (a % 8 == b % 8) {
        ASSERT_GE(id, 0) << a << "->" << b;
        EXPECT_DOUBLE_EQ(t.link(id).bandwidth_gbps, c.nic_gbps / (c.nodes - 1));
        EXPECT_EQ(t.link(id).latency_ps, 2'000'000);
      } else {
        EXPECT_EQ(id, -1);
      }
    }
}

TEST(DgxTopology, SpinesAboveTheLeavesWhenNodesExceedALeaf) {
  // dgx-h100:128: Quantum-2 leaves of 64 ports, 32 down and 32 up: 4 leaves per rail (32
  // leaves), 32 x 32 uplinks over 16 spines of 64 ports: 2 cables (100 GB/s) per leaf-spine.
  const Topology h = gen("dgx-h100:128");
  EXPECT_EQ(h.npus(), 1024);
  EXPECT_EQ(h.switches(), 128 + 32 + 16);
  const DeviceId first_leaf = 1024 + 128, first_spine = first_leaf + 32;
  // GPU 3 of node 40 is on rail 3's second leaf (nodes 32..63).
  EXPECT_GE(h.find_link(40 * 8 + 3, first_leaf + 3 * 4 + 1), 0);
  const LinkId up = h.find_link(first_leaf, first_spine + 15);
  ASSERT_GE(up, 0);
  EXPECT_DOUBLE_EQ(h.link(up).bandwidth_gbps, 100.0);
  const SwitchRoutes routes(h);
  EXPECT_EQ(routes.route(3, 40 * 8 + 3).size(), 4u);  // leaf, spine, leaf
  EXPECT_EQ(routes.route(3, 20 * 8 + 3).size(), 2u);  // the same leaf
  // dgx-a100:64: 40-port HDR leaves, 20 down: 4 leaves per rail, 32 x 20 uplinks over 16
  // spines: 1.25 cables per leaf-spine pair on average, entered as 31.25 GB/s.
  const Topology a = gen("dgx-a100:64");
  EXPECT_EQ(a.switches(), 64 + 32 + 16);
  const LinkId a_up = a.find_link(512 + 64, 512 + 64 + 32);
  ASSERT_GE(a_up, 0);
  EXPECT_DOUBLE_EQ(a.link(a_up).bandwidth_gbps, 31.25);
  EXPECT_THROW(gen("dgx-a100:101"), Error);  // would need a third tier
}

INSTANTIATE_TEST_SUITE_P(Dgx, DgxCluster,
                         ::testing::Values(ClusterCase{"dgx-a100:1", 1, 300.0, 25.0},
                                           ClusterCase{"dgx-a100:2", 2, 300.0, 25.0},
                                           ClusterCase{"dgx-a100:4", 4, 300.0, 25.0},
                                           ClusterCase{"dgx-h100:1", 1, 450.0, 50.0},
                                           ClusterCase{"dgx-h100:3", 3, 450.0, 50.0},
                                           ClusterCase{"dgx-h200:1", 1, 450.0, 50.0},
                                           ClusterCase{"dgx-h200:3", 3, 450.0, 50.0},
                                           ClusterCase{"dgx-b200:1", 1, 900.0, 50.0},
                                           ClusterCase{"dgx-b200:4", 4, 900.0, 50.0}),
                         [](const auto& info) {
                           std::string name = info.param.spec;
                           for (char& ch : name)
                             if (ch == '-' || ch == ':') ch = '_';
                           return name;
                         });

TEST(DgxTopology, ClusterWithoutNodeCountIsOneNode) {
  const Topology t = gen("dgx-h100");
  EXPECT_EQ(t.npus(), 8);
  EXPECT_EQ(t.switches(), 1);
}

TEST(DgxTopology, ExplicitParametersOverrideTheDatasheet) {
  const Topology t = gen("dgx-a100:2", "100,10", "0.1us,2us");
  const LinkId intra = t.find_link(0, 16);
  const LinkId inter = t.find_link(0, 18);  // GPU 0's NIC on rail 0's leaf
  ASSERT_GE(intra, 0);
  ASSERT_GE(inter, 0);
  EXPECT_DOUBLE_EQ(t.link(intra).bandwidth_gbps, 100.0);
  EXPECT_EQ(t.link(intra).latency_ps, 100'000);
  EXPECT_DOUBLE_EQ(t.link(inter).bandwidth_gbps, 10.0);
  EXPECT_EQ(t.link(inter).latency_ps, 2'000'000);
  const Topology one = gen("dgx-a100:2", "100");
  EXPECT_DOUBLE_EQ(one.link(one.find_link(0, 18)).bandwidth_gbps, 100.0);
  EXPECT_THROW(gen("dgx-a100:2", "1,2,3"), Error);
}

TEST(DgxTopology, BadSpecsThrow) {
  for (const char* spec : {"dgx-b200:0", "gb200-nvl72:x", "gb200-nvl72:2,ring:2", "dgx-h200:-3"})
    EXPECT_THROW(gen(spec), Error) << spec;
  for (const char* spec : {"dgx-a100:0", "dgx-a100:x", "dgx-a100:", "dgx-h100:-1", "dgx-h100:2x2",
                           "dgx-a100:1,ring:4", "ring:4,dgx1", "dgx-a100:99999999999"})
    EXPECT_THROW(gen(spec), Error) << spec;
}

TEST(DgxTopology, LoaderAndHelpKnowTheKinds) {
  EXPECT_EQ(load_topology("dgx1", LinkParams{}).npus(), 8);
  EXPECT_EQ(load_topology("dgx-h100:2", LinkParams{}).npus(), 16);
  const std::string help = generator_help();
  EXPECT_NE(help.find("dgx1"), std::string::npos);
  EXPECT_NE(help.find("dgx-a100:NODES"), std::string::npos);
  EXPECT_NE(help.find("dgx-h100:NODES"), std::string::npos);
  for (const char* kind : {"dgx-h200:NODES", "dgx-b200:NODES", "gb200-nvl72:RACKS", ":nvls",
                           ":sharp", "switch:N:nvls"})
    EXPECT_NE(help.find(kind), std::string::npos) << kind;
  EXPECT_EQ(to_string(gen("dgx-h200:2").shape().kind), "dgx-h200");
  EXPECT_EQ(to_string(gen("dgx-b200:2").shape().kind), "dgx-b200");
  EXPECT_EQ(to_string(gen("gb200-nvl72:2").shape().kind), "gb200-nvl72");
}

// DGX H200 is DGX H100's fabric (NVLink 4, four NVSwitch chips, 8 x 400 Gb/s ConnectX-7):
// link for link the same topology, spines included.
TEST(DgxTopology, H200IsTheH100Fabric) {
  for (const char* nodes : {"1", "4", "128"}) {
    const Topology h200 = gen(std::string("dgx-h200:") + nodes);
    const Topology h100 = gen(std::string("dgx-h100:") + nodes);
    ASSERT_EQ(h200.devices(), h100.devices()) << nodes;
    ASSERT_EQ(h200.num_links(), h100.num_links()) << nodes;
    for (LinkId id = 0; id < h200.num_links(); ++id) {
      EXPECT_EQ(h200.link(id).src, h100.link(id).src);
      EXPECT_EQ(h200.link(id).dst, h100.link(id).dst);
      EXPECT_DOUBLE_EQ(h200.link(id).bandwidth_gbps, h100.link(id).bandwidth_gbps);
      EXPECT_EQ(h200.link(id).latency_ps, h100.link(id).latency_ps);
    }
    EXPECT_EQ(h200.shape().dimensions, h100.shape().dimensions);
  }
  EXPECT_EQ(message_of_third_tier("dgx-h200:257"),
            "--topology 'dgx-h200:257': more than 256 nodes need a third switch tier, which dgx "
            "kinds do not build (use fattree3 or a topology file)");
}

// DGX B200: NVLink 5 (1.8 TB/s bidirectional per GPU = 900 GB/s per direction) on the
// NVSwitch, 8 x 400 Gb/s ConnectX-7 (50 GB/s) on Quantum-2 leaves of 64 ports.
TEST(DgxTopology, B200DoublesTheNvLinkAndKeepsTheNics) {
  const Topology t = gen("dgx-b200:2");
  EXPECT_EQ(t.npus(), 16);
  EXPECT_EQ(t.switches(), 2 + 8);
  EXPECT_DOUBLE_EQ(t.link(t.find_link(5, 16)).bandwidth_gbps, 900.0);
  EXPECT_EQ(t.link(t.find_link(16, 5)).latency_ps, 250'000);
  EXPECT_DOUBLE_EQ(t.link(t.find_link(13, 18 + 5)).bandwidth_gbps, 50.0);
  EXPECT_EQ(t.link(t.find_link(18 + 5, 13)).latency_ps, 1'000'000);
  // 128 nodes: 4 leaves per rail, 16 spines, 2 cables per leaf-spine pair, as dgx-h100.
  const Topology big = gen("dgx-b200:128");
  EXPECT_EQ(big.switches(), 128 + 32 + 16);
  EXPECT_DOUBLE_EQ(big.link(big.find_link(1024 + 128, 1024 + 128 + 32)).bandwidth_gbps, 100.0);
  // --bandwidth / --latency override the datasheet as for the other dgx kinds.
  const Topology slow = gen("dgx-b200:2", "450,25", "0.5us,2us");
  EXPECT_DOUBLE_EQ(slow.link(slow.find_link(0, 16)).bandwidth_gbps, 450.0);
  EXPECT_DOUBLE_EQ(slow.link(slow.find_link(0, 18)).bandwidth_gbps, 25.0);
  EXPECT_EQ(slow.link(slow.find_link(0, 18)).latency_ps, 2'000'000);
}

// GB200 NVL72: 72 GPUs of a rack on one NVLink domain (18 NVLink 5 links per GPU to 18
// NVLink switch chips: one logical switch of 72 ports at 900 GB/s per direction); GPU g of
// every rack on rail g's leaf through its 400 Gb/s ConnectX-7.
TEST(DgxTopology, Gb200Nvl72RacksOnRails) {
  const Topology one = gen("gb200-nvl72");
  EXPECT_EQ(one.npus(), 72);
  EXPECT_EQ(one.switches(), 1);
  EXPECT_EQ(one.num_links(), 144);
  for (DeviceId gpu = 0; gpu < 72; ++gpu) {
    const LinkId up = one.find_link(gpu, 72);
    ASSERT_GE(up, 0) << gpu;
    EXPECT_DOUBLE_EQ(one.link(up).bandwidth_gbps, 900.0);
    EXPECT_EQ(one.link(up).latency_ps, 250'000);
  }
  EXPECT_EQ(one.shape().dimensions, (std::vector<ShapeDimension>{{DimensionWiring::kSwitch, 72},
                                                                 {DimensionWiring::kSwitch, 1}}));
  // Two racks: NPUs 0..143, NVSwitches 144, 145, rail leaves 146..217 (rail g: 146 + g).
  const Topology two = gen("gb200-nvl72:2");
  EXPECT_EQ(two.npus(), 144);
  EXPECT_EQ(two.switches(), 2 + 72);
  EXPECT_EQ(two.num_links(), 4 * 144);
  const LinkId nic = two.find_link(72 + 40, 146 + 40);  // rack 1, GPU 40: rail 40
  ASSERT_GE(nic, 0);
  EXPECT_DOUBLE_EQ(two.link(nic).bandwidth_gbps, 50.0);
  EXPECT_EQ(two.link(nic).latency_ps, 1'000'000);
  EXPECT_GE(two.find_link(146 + 40, 40), 0);   // rack 0, GPU 40: the same leaf
  EXPECT_EQ(two.find_link(72 + 40, 144), -1);  // no NVLink across racks
  const SwitchRoutes routes(two);
  EXPECT_EQ(routes.route(40, 72 + 40).size(), 2u);  // rail 40's leaf
  EXPECT_EQ(routes.route(3, 70).size(), 2u);        // the rack's NVLink domain
  EXPECT_TRUE(routes.route(3, 72 + 40).empty());    // other rack, other rail: relayed
  two.require_strongly_connected();
  // 64 racks fit one 64-port leaf per rail; more would need spines for 72 rails, which a
  // two-tier network of 64-port switches cannot give.
  EXPECT_EQ(gen("gb200-nvl72:64").switches(), 64 + 72);
  EXPECT_EQ(message_of_third_tier("gb200-nvl72:65"),
            "--topology 'gb200-nvl72:65': more than 64 racks need a third switch tier, which dgx "
            "kinds do not build (use fattree3 or a topology file)");
}

}  // namespace
}  // namespace tacos
