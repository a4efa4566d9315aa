// Declaring what switches do beyond forwarding (docs/switch-fabrics.md "Declaring switch
// capabilities"): the generator words :multicast, :nvls (multicast + reduce) and :sharp, the
// YAML switch list's {multicast, reduce}, the typed shape and `topology describe`.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli_support.h"
#include "tacos/common/error.h"
#include "tacos/io/chakra.h"
#include "tacos/io/topology_yaml.h"
#include "tacos/topology/describe.h"
#include "tacos/topology/generators.h"
#include "tacos/topology/topology.h"
#include "test_temp_dir.h"

namespace tacos {
namespace {

namespace fs = std::filesystem;

Topology gen(const std::string& spec) { return generate_topology(spec, LinkParams{}); }

using tacos_test::message_of;

// Which switches multicast and reduce, as "m" / "r" / "mr" / "-" per switch.
std::string flags(const Topology& t) {
  std::string text;
  for (DeviceId s = t.npus(); s < t.devices(); ++s) {
    if (!text.empty()) text.push_back(' ');
    if (t.is_multicast(s)) text.push_back('m');
    if (t.is_reducing(s)) text.push_back('r');
    if (!t.is_multicast(s) && !t.is_reducing(s)) text.push_back('-');
  }
  return text;
}

constexpr SwitchCapability kNone{};
constexpr SwitchCapability kMulticast{true, false};
constexpr SwitchCapability kBoth{true, true};

TEST(SwitchCapability, NvlsDimensionsMulticastAndReduce) {
  const Topology nvls = gen("switch:8:nvls");
  EXPECT_EQ(flags(nvls), "mr");
  EXPECT_EQ(nvls.reducing_switches(), 1);
  EXPECT_EQ(nvls.multicast_switches(), 1);
  EXPECT_EQ(nvls.shape().capabilities, std::vector<SwitchCapability>{kBoth});
  // A capability, not a dimension: the links and dimensions are switch:8's.
  const Topology plain = gen("switch:8");
  EXPECT_EQ(nvls.shape().dimensions, plain.shape().dimensions);
  EXPECT_EQ(nvls.num_links(), plain.num_links());
  EXPECT_TRUE(plain.shape().capabilities.empty());
  EXPECT_EQ(plain.reducing_switches(), 0);
  // :multicast keeps meaning exactly what it did: copies, no reduction.
  const Topology multicast = gen("switch:8:multicast");
  EXPECT_EQ(flags(multicast), "m");
  EXPECT_EQ(multicast.shape().capabilities, std::vector<SwitchCapability>{kMulticast});
  // As a dimension: only that dimension's switches.
  const Topology dims = gen("ring:2,switch:4:nvls");
  EXPECT_EQ(flags(dims), "mr mr");
  EXPECT_EQ(dims.shape().capabilities, (std::vector<SwitchCapability>{kNone, kBoth}));
  EXPECT_EQ(dims.shape().capability(1), kBoth);
  EXPECT_EQ(dims.shape().capability(7), kNone);
  EXPECT_EQ(flags(gen("switch:2,switch:4:nvls")), "- - - - mr mr");
  EXPECT_EQ(flags(gen("switch:2:multicast,switch:2:nvls")), "m m mr mr");
  // A copy keeps the flags; the unwound view has no switches left.
  const Topology copy = nvls;
  EXPECT_TRUE(copy.is_reducing(8));
  EXPECT_EQ(nvls.unwind_switches().reducing_switches(), 0);
}

TEST(SwitchCapability, DimensionWordErrorsAreOneLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"switch:8:sharp",
       "--topology 'switch:8:sharp': ':sharp' declares the InfiniBand leaves and spines of a dgx "
       "or gb200-nvl72 pod, not a dimension ('switch:8:sharp'; write switch:N:nvls for a switch "
       "that multicasts and reduces)"},
      {"ring:4:nvls",
       "--topology 'ring:4:nvls': only switches can be NVLS (multicast + reduce) ('ring:4:nvls'; "
       "write switch:N:nvls)"},
      {"switch:8:nvls:nvls", "--topology 'switch:8:nvls:nvls': ':nvls' is given twice"},
      {"switch:8:multicast:nvls",
       "--topology 'switch:8:multicast:nvls': ':multicast' and ':nvls' both declare the "
       "NVSwitch; give one (nvls is multicast + reduce)"},
      {"switch:nvls", "--topology 'switch:nvls': expected a whole number, got 'nvls'"},
      {"switch::nvls", "--topology 'switch::nvls': expected a whole number, got ''"},
      {"switch:8:nvls:x",
       "--topology 'switch:8:nvls:x': unexpected ':nvls:x' in 'switch:8:nvls:x' (expected "
       "switch:N, switch:N:multicast or switch:N:nvls)"},
  };
  // clang 14 (the sanitizer build) cannot capture a structured binding: name the pair.
  for (const auto& item : cases) EXPECT_EQ(message_of([&] { gen(item.first); }), item.second);
}

TEST(SwitchCapability, DgxWordsDeclareTheNvSwitchesAndTheInfiniBandTier) {
  // dgx-h100:4: NPUs 0..31, NVSwitches 32..35, rail leaves 36..43.
  EXPECT_EQ(flags(gen("dgx-h100:4")), "- - - - - - - - - - - -");
  EXPECT_EQ(flags(gen("dgx-h100:4:nvls")), "mr mr mr mr - - - - - - - -");
  EXPECT_EQ(flags(gen("dgx-h100:4:multicast")), "m m m m - - - - - - - -");
  EXPECT_EQ(flags(gen("dgx-h100:4:sharp")), "- - - - mr mr mr mr mr mr mr mr");
  EXPECT_EQ(flags(gen("dgx-h100:4:nvls:sharp")), "mr mr mr mr mr mr mr mr mr mr mr mr");
  EXPECT_EQ(flags(gen("dgx-h100:4:sharp:nvls")), flags(gen("dgx-h100:4:nvls:sharp")));
  EXPECT_EQ(flags(gen("dgx-h100:4:multicast:sharp")), "m m m m mr mr mr mr mr mr mr mr");
  // The shape: [0] the NVSwitches, [1] the rail network; the dimensions are dgx-h100:4's.
  const Topology both = gen("dgx-h100:4:nvls:sharp");
  EXPECT_EQ(both.shape().capabilities, (std::vector<SwitchCapability>{kBoth, kBoth}));
  EXPECT_EQ(gen("dgx-h100:4:sharp").shape().capabilities,
            (std::vector<SwitchCapability>{kNone, kBoth}));
  EXPECT_EQ(both.shape().dimensions, gen("dgx-h100:4").shape().dimensions);
  EXPECT_EQ(both.num_links(), gen("dgx-h100:4").num_links());
  EXPECT_TRUE(gen("dgx-h100:4").shape().capabilities.empty());
  // One node: the NVSwitch alone, with or without the count.
  EXPECT_EQ(flags(gen("dgx-h100:nvls")), "mr");
  EXPECT_EQ(flags(gen("dgx-h100:1:nvls")), "mr");
  // Spines reduce too: dgx-h100:128 has 128 NVSwitches, 32 leaves and 16 spines.
  const Topology big = gen("dgx-h100:128:sharp");
  EXPECT_EQ(big.reducing_switches(), 48);
  EXPECT_FALSE(big.is_reducing(1024 + 127));
  EXPECT_TRUE(big.is_reducing(big.devices() - 1));
  // A100's HDR Quantum leaves have SHARP; its NVSwitch has no NVLink SHARP.
  EXPECT_EQ(gen("dgx-a100:2:sharp").reducing_switches(), 8);
  // The new systems.
  EXPECT_EQ(flags(gen("dgx-h200:2:nvls")), "mr mr - - - - - - - -");
  EXPECT_EQ(gen("dgx-b200:2:nvls:sharp").reducing_switches(), 10);
  EXPECT_EQ(gen("gb200-nvl72:nvls").reducing_switches(), 1);
  const Topology racks = gen("gb200-nvl72:2:nvls:sharp");
  EXPECT_EQ(racks.reducing_switches(), 2 + 72);
  EXPECT_EQ(racks.multicast_switches(), 2 + 72);
}

TEST(SwitchCapability, DgxWordErrorsAreOneLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"dgx-a100:2:nvls",
       "--topology 'dgx-a100:2:nvls': dgx-a100's NVSwitch has no NVLink SHARP, so it cannot be "
       "':nvls' (dgx-h100, dgx-h200, dgx-b200, gb200-nvl72 can)"},
      {"dgx-h100:1:sharp",
       "--topology 'dgx-h100:1:sharp': ':sharp' declares the InfiniBand leaves and spines, and "
       "one node has none (give 2 or more nodes)"},
      {"dgx-h100:sharp",
       "--topology 'dgx-h100:sharp': ':sharp' declares the InfiniBand leaves and spines, and one "
       "node has none (give 2 or more nodes)"},
      {"gb200-nvl72:1:sharp",
       "--topology 'gb200-nvl72:1:sharp': ':sharp' declares the InfiniBand leaves and spines, "
       "and one rack has none (give 2 or more racks)"},
      {"dgx-h100:4:nvls:multicast",
       "--topology 'dgx-h100:4:nvls:multicast': ':multicast' and ':nvls' both declare the "
       "NVSwitch; give one (nvls is multicast + reduce)"},
      {"dgx-h100:4:sharp:sharp", "--topology 'dgx-h100:4:sharp:sharp': ':sharp' is given twice"},
      {"dgx-h100::nvls",
       "--topology 'dgx-h100::nvls': expected a node count after ':', such as dgx-h100:2"},
      {"gb200-nvl72:",
       "--topology 'gb200-nvl72:': expected a rack count after ':', such as gb200-nvl72:2"},
      {"dgx-h100:4:fast",
       "--topology 'dgx-h100:4:fast': unexpected ':fast' (expected dgx-h100:NODES then "
       ":multicast, :nvls or :sharp)"},
      {"dgx1:nvls", "--topology 'dgx1:nvls': dgx1 takes no size (it is 8 GPUs)"},
  };
  // clang 14 (the sanitizer build) cannot capture a structured binding: name the pair.
  for (const auto& item : cases) EXPECT_EQ(message_of([&] { gen(item.first); }), item.second);
}

std::string write_yaml(const std::string& name, const std::string& text) {
  const fs::path dir = tacos_test::TestTempDir::path() / "switch_capability";
  fs::create_directories(dir);
  const fs::path path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

// Two pods of 2 NPUs: NPUs 0, 1 on switch 4; NPUs 2, 3 on switch 5.
const char* const kTwoPods =
    "links:\n"
    "  - {src: 0, dst: 4, bandwidth: 50, latency: 0.5us, bidirectional: true}\n"
    "  - {src: 1, dst: 4, bandwidth: 50, latency: 0.5us, bidirectional: true}\n"
    "  - {src: 2, dst: 5, bandwidth: 50, latency: 0.5us, bidirectional: true}\n"
    "  - {src: 3, dst: 5, bandwidth: 50, latency: 0.5us, bidirectional: true}\n"
    "  - {src: 4, dst: 5, bandwidth: 50, latency: 0.5us, bidirectional: true}\n";

TEST(SwitchCapability, YamlSwitchListDeclaresReduce) {
  const Topology t = read_topology_yaml(write_yaml(
      "nvls.yaml",
      std::string("npus: 4\nswitches:\n  - {multicast: true, reduce: true}\n  - {reduce: true}\n") +
          kTwoPods));
  EXPECT_EQ(flags(t), "mr r");  // reduce without multicast: one receiver per reduced message
  EXPECT_EQ(describe_topology(t).reducing_switches, 2);
  EXPECT_EQ(describe_topology(t).multicast_switches, 1);
  const Topology off = read_topology_yaml(write_yaml(
      "off.yaml",
      std::string("npus: 4\nswitches:\n  - {reduce: false}\n  - {multicast: true}\n") + kTwoPods));
  EXPECT_EQ(flags(off), "- m");
  // The generate block takes the words, as --topology does.
  const Topology generated = read_topology_yaml(
      write_yaml("gen.yaml", "generate: {topology: \"dgx-h100:2:nvls:sharp\"}\n"));
  EXPECT_EQ(flags(generated), flags(gen("dgx-h100:2:nvls:sharp")));
  // Errors name the file, the line and the field.
  const std::string bad = write_yaml(
      "bad.yaml", std::string("npus: 4\nswitches:\n  - {}\n  - {reduce: yes please}\n") + kTwoPods);
  EXPECT_EQ(message_of([&] { read_topology_yaml(bad); }),
            bad + ":4: expected true or false for switches[1].reduce");
  const std::string typo = write_yaml(
      "typo.yaml", std::string("npus: 4\nswitches:\n  - {reduction: true}\n  - {}\n") + kTwoPods);
  EXPECT_EQ(message_of([&] { read_topology_yaml(typo); }),
            typo + ":3: unknown key 'reduction' in switches[0] (expected multicast, reduce)");
  const std::string word = write_yaml("word.yaml", "generate: {topology: \"dgx-a100:2:nvls\"}\n");
  EXPECT_EQ(message_of([&] { read_topology_yaml(word); }),
            word +
                ":1: --topology 'dgx-a100:2:nvls': dgx-a100's NVSwitch has no NVLink SHARP, so "
                "it cannot be ':nvls' (dgx-h100, dgx-h200, dgx-b200, gb200-nvl72 can)");
}

TEST(SwitchCapability, ExampleFileLoads) {
  const Topology t = read_topology_yaml(TACOS_SOURCE_DIR "/examples/nvls_pod.yaml");
  EXPECT_EQ(t.npus(), 8);
  EXPECT_EQ(flags(t), "mr -");
}

TEST(SwitchCapability, DescribeShowsReducingSwitches) {
  using tacos_test::run_tacos;
  const tacos_test::RunResult text =
      run_tacos("topology describe --topology dgx-h100:2:nvls:sharp");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("switches          10 (10 multicast: one copy in, many out; 10 "
                          "reducing: add up the contributions that pass through)\n"),
            std::string::npos)
      << text.out;
  const tacos_test::RunResult only = run_tacos("topology describe --topology dgx-h100:2:nvls");
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_NE(only.out.find("switches          10 (2 multicast: one copy in, many out; 2 reducing: "
                          "add up the contributions that pass through)\n"),
            std::string::npos)
      << only.out;
  const tacos_test::RunResult plain = run_tacos("topology describe --topology dgx-h100:2");
  EXPECT_NE(plain.out.find("switches          10\n"), std::string::npos) << plain.out;

  const tacos_test::RunResult j = run_tacos("topology describe --json --topology dgx-b200:2:sharp");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto json = nlohmann::json::parse(j.out);
  EXPECT_EQ(json["multicast_switches"], 8);
  EXPECT_EQ(json["reducing_switches"], 8);
  EXPECT_EQ(json["kind"], "dgx-b200");
  EXPECT_EQ(json["dimensions"], nlohmann::json::parse(R"([{"wiring": "switch", "size": 8},
      {"wiring": "switch", "size": 2, "multicast": true, "reduce": true}])"));
  const tacos_test::RunResult p = run_tacos("topology describe --json --topology switch:8");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(nlohmann::json::parse(p.out)["reducing_switches"], 0);
  EXPECT_EQ(nlohmann::json::parse(p.out)["dimensions"],
            nlohmann::json::parse(R"([{"wiring": "switch", "size": 8}])"));
  // A wrong word is one line on stderr and a failing exit.
  const tacos_test::RunResult bad = run_tacos("topology describe --topology dgx-a100:2:nvls");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("dgx-a100's NVSwitch has no NVLink SHARP"), std::string::npos) << bad.err;
}

// ASTRA-sim has neither multicast nor in-network reduction: a declared switch is written as the
// plain Switch it also is (the comment line names the spec).
TEST(SwitchCapability, AstraNetworkIgnoresTheCapability) {
  auto body = [](const std::string& spec) {
    const std::optional<std::string> text = astra_network_yaml(gen(spec));
    EXPECT_TRUE(text.has_value()) << spec;
    return text ? text->substr(text->find('\n') + 1) : std::string();
  };
  EXPECT_EQ(body("switch:8:nvls"), body("switch:8"));
  EXPECT_EQ(body("ring:2,switch:4:nvls"), body("ring:2,switch:4"));
  EXPECT_FALSE(astra_network_yaml(gen("dgx-h100:2:nvls:sharp")).has_value());  // as dgx-h100:2
}

}  // namespace
}  // namespace tacos
