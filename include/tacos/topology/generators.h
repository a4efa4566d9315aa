#pragma once
// Built-in topology generators, selected by a spec string such as "torus2d:4x4" or the
// multi-dimensional ASTRA-sim style "ring:4,fc:8,switch:4".
#include <string>
#include <string_view>
#include <vector>

#include "tacos/topology/topology.h"

namespace tacos {

// Per-axis (mesh/torus: x, y, z) or per-dimension link parameters. A list of one value applies
// to every axis; otherwise it needs one value per axis.
struct LinkParams {
  std::vector<double> bandwidth_gbps{50.0};
  std::vector<Time> latency_ps{500'000};
  // Whether the user gave them; the DGX generators use datasheet numbers otherwise.
  bool bandwidth_given = false;
  bool latency_given = false;
};

// Parses the --bandwidth / --latency flag values ("50" or "50,25"; latency "0.5us,1us", bare
// numbers in us).
LinkParams parse_link_params(std::string_view bandwidth, std::string_view latency);

// Builds a generator topology. Kinds: ring:N, uniring:N, fc:N, switch:N (switch:N:multicast
// declares the switch multicast, switch:N:nvls multicast and reducing), mesh2d:WxH,
// torus2d:WxH, mesh3d:XxYxZ, torus3d:XxYxZ, hypercube:N (N = 2^d), comma-separated
// dimensions of ring/uniring/fc/switch (dimension 0 first; NPU id = sum coordinate x stride),
// dgx1, the pods dgx-a100 / dgx-h100 / dgx-h200 / dgx-b200:NODES and gb200-nvl72:RACKS (with
// :multicast or :nvls for their NVSwitches and :sharp for their InfiniBand leaves and spines),
// fattree:HxLxS and fattree3:HxLxSxP.
// Throws Error for unknown kinds, zero sizes or parameter lists of the wrong length.
Topology generate_topology(std::string_view spec, const LinkParams& params);

// The topology of `dimensions` (ring/uniring/fc/switch, or mesh and torus axes as line and ring),
// dimension 0 first, exactly as generate_topology builds a spec of them; its shape is
// TopologyKind::kDimensions. Throws Error as generate_topology does.
Topology generate_dimensions(const std::vector<ShapeDimension>& dimensions,
                             const LinkParams& params, const std::string& name);

// The list of generator kinds with a one-line description each, for --help texts.
std::string generator_help();

}  // namespace tacos
