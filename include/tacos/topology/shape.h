#pragma once
// What built a Topology, as data: the generator kind, the NPUs' dimensions, the capabilities
// their switches were declared with and, for fat-trees, the tiers. Generators and loaders fill
// it in and the Topology carries it, so code that needs a topology's structure (the baselines'
// rings and hierarchy, the ASTRA-sim network of a bundle, plans for NVLS or SHARP) reads it here
// instead of parsing the spec string again.
#include <cstddef>
#include <string>
#include <vector>

namespace tacos {

// How the NPUs of one dimension (or one mesh/torus axis) are wired together.
enum class DimensionWiring { kLine, kRing, kUniRing, kFullyConnected, kSwitch };

struct ShapeDimension {
  DimensionWiring wiring = DimensionWiring::kRing;
  int size = 1;
  friend bool operator==(const ShapeDimension&, const ShapeDimension&) = default;
};

// What the switches of one dimension do beyond forwarding, as the spec declared it
// (switch:N:multicast, :nvls = multicast + reduce, dgx pods' :sharp on the InfiniBand tier).
// Topology::is_multicast / is_reducing hold it per switch and are what timing reads.
struct SwitchCapability {
  bool multicast = false;  // one copy in, many out
  bool reduce = false;     // contributions to one chunk added up inside the switch
  bool any() const { return multicast || reduce; }
  friend bool operator==(const SwitchCapability&, const SwitchCapability&) = default;
};

enum class TopologyKind {
  kCustom,      // links given one by one (a tacos YAML links file, a test): no shape
  kDimensions,  // ring/uniring/fc/switch dimensions ("ring:4,fc:8"; also "ring:8")
  kMesh2d,
  kTorus2d,
  kMesh3d,
  kTorus3d,
  kHypercube,
  kDgx1,
  kDgxA100,
  kDgxH100,
  kDgxH200,
  kDgxB200,
  kGb200Nvl72,  // gb200-nvl72:RACKS: 72 GPUs per rack on one NVLink domain, NIC rails between
  kFatTree,     // fattree:HxLxS
  kFatTree3,    // fattree3:HxLxSxP
};

struct TopologyShape {
  TopologyKind kind = TopologyKind::kCustom;
  // Dimension 0 first, fastest-varying in the NPU id (NPU id = sum of coordinate x stride).
  // Switch fabrics as dimensions: a DGX cluster is the 8 GPUs of a node (NVSwitch), then the
  // nodes along each rail; a fat-tree the hosts of a leaf, then the leaves (hosts of equal
  // index across leaves meet through the spines). Empty for dgx1 and custom topologies.
  std::vector<ShapeDimension> dimensions;
  // capabilities[d]: what the switches of dimension d were declared to do (a DGX pod: [0] its
  // NVSwitches, [1] the rail leaves and spines). Empty when no switch was declared anything;
  // read it through capability(d). The spec's declaration: an unwound view keeps it but has
  // no switches, so ask the Topology (is_multicast, is_reducing) what a device does.
  std::vector<SwitchCapability> capabilities;
  // Fat-trees: hosts per leaf, leaves and spines per pod, pods (1 for fattree).
  int hosts = 0, leaves = 0, spines = 0, pods = 0;
  // Read from an ASTRA-sim network config: its text, which a Chakra bundle copies as it is.
  std::string astra_network_text;

  SwitchCapability capability(std::size_t dimension) const {
    return dimension < capabilities.size() ? capabilities[dimension] : SwitchCapability{};
  }
};

std::string to_string(TopologyKind kind);

}  // namespace tacos
