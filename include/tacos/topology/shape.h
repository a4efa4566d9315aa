#pragma once
// What built a Topology, as data: the generator kind, the NPUs' dimensions and, for fat-trees,
// the tiers. Generators and loaders fill it in and the Topology carries it, so code that needs
// a topology's structure (the baselines' rings and hierarchy, the ASTRA-sim network of a
// bundle) reads it here instead of parsing the spec string again.
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
  kFatTree,   // fattree:HxLxS
  kFatTree3,  // fattree3:HxLxSxP
};

struct TopologyShape {
  TopologyKind kind = TopologyKind::kCustom;
  // Dimension 0 first, fastest-varying in the NPU id (NPU id = sum of coordinate x stride).
  // Switch fabrics as dimensions: a DGX cluster is the 8 GPUs of a node (NVSwitch), then the
  // nodes along each rail; a fat-tree the hosts of a leaf, then the leaves (hosts of equal
  // index across leaves meet through the spines). Empty for dgx1 and custom topologies.
  std::vector<ShapeDimension> dimensions;
  // Fat-trees: hosts per leaf, leaves and spines per pod, pods (1 for fattree).
  int hosts = 0, leaves = 0, spines = 0, pods = 0;
  // Read from an ASTRA-sim network config: its text, which a Chakra bundle copies as it is.
  std::string astra_network_text;
};

std::string to_string(TopologyKind kind);

}  // namespace tacos
