#include "tacos/topology/generators.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <utility>

#include "spec_text.h"
#include "switch_suffix.h"
#include "system_generators.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos {
namespace {

using spec::in_quotes;
using spec::kMaxNpus;
using spec::parse_count;
using spec::trim;

// 2^24 links (fc:4096) take about 0.5 GiB as a topology, before any synthesis state.
constexpr std::int64_t kMaxLinks = std::int64_t{1} << 24;

constexpr const char* kKinds =
    "ring, uniring, fc, switch, mesh2d, torus2d, mesh3d, torus3d, hypercube, dgx1, dgx-a100, "
    "dgx-h100, dgx-h200, dgx-b200, gb200-nvl72, fattree, fattree3";

using Wiring = DimensionWiring;

struct Dimension {
  Wiring wiring;
  std::int64_t size;
  SwitchCapability capability = {};  // switch dimensions: "switch:N:multicast", "switch:N:nvls"
};

// "4x4x2" -> {4, 4, 2}; exactly `axes` values are required.
std::vector<std::int64_t> parse_extents(std::string_view text, std::size_t axes,
                                        std::string_view spec) {
  const std::vector<std::string> items = split_list(text, 'x');
  if (items.size() != axes)
    throw Error("--topology " + in_quotes(spec) + ": expected " + std::to_string(axes) +
                " sizes separated by 'x', got " + in_quotes(text));
  std::vector<std::int64_t> extents;
  for (const std::string& item : items) extents.push_back(parse_count(item, spec));
  return extents;
}

bool is_grid_kind(std::string_view kind) {
  return kind == "mesh2d" || kind == "torus2d" || kind == "mesh3d" || kind == "torus3d" ||
         kind == "hypercube";
}

Wiring dimension_wiring(std::string_view kind, std::string_view spec) {
  if (kind == "ring") return Wiring::kRing;
  if (kind == "uniring") return Wiring::kUniRing;
  if (kind == "fc") return Wiring::kFullyConnected;
  if (kind == "switch") return Wiring::kSwitch;
  if (is_grid_kind(kind))
    throw Error("--topology " + in_quotes(spec) + ": " + in_quotes(kind) +
                " cannot be a dimension of a multi-dimensional spec (use ring, uniring, fc or "
                "switch)");
  throw Error("--topology " + in_quotes(spec) + ": unknown kind " + in_quotes(kind) +
              " (valid: " + kKinds + ")");
}

// Splits one "kind:size" item, rejecting a missing ':' with the list of valid kinds.
std::pair<std::string_view, std::string_view> split_kind(std::string_view item,
                                                         std::string_view spec) {
  const std::size_t colon = item.find(':');
  if (colon == std::string_view::npos)
    throw Error("--topology " + in_quotes(spec) +
                ": expected KIND:SIZE such as ring:8 (kinds: " + kKinds + ")");
  return {trim(item.substr(0, colon)), trim(item.substr(colon + 1))};
}

// Mesh, torus and hypercube are one item; ring/uniring/fc/switch lists are ASTRA-sim style
// dimensions. Both become a list of dimensions wired by the same builder.
std::vector<Dimension> parse_spec(std::string_view spec, TopologyKind& shape_kind) {
  const std::vector<std::string> items = split_list(spec, ',');
  shape_kind = TopologyKind::kDimensions;
  if (items.size() == 1) {
    const auto [kind, size_text] = split_kind(items[0], spec);
    // A named copy: clang 14 cannot capture structured bindings in a lambda (sanitizer build).
    const auto size = size_text;
    auto grid = [&](std::size_t axes, Wiring wiring) {
      std::vector<Dimension> dims;
      for (std::int64_t extent : parse_extents(size, axes, spec)) dims.push_back({wiring, extent});
      return dims;
    };
    if (kind == "mesh2d") return shape_kind = TopologyKind::kMesh2d, grid(2, Wiring::kLine);
    if (kind == "torus2d") return shape_kind = TopologyKind::kTorus2d, grid(2, Wiring::kRing);
    if (kind == "mesh3d") return shape_kind = TopologyKind::kMesh3d, grid(3, Wiring::kLine);
    if (kind == "torus3d") return shape_kind = TopologyKind::kTorus3d, grid(3, Wiring::kRing);
    if (kind == "hypercube") {
      shape_kind = TopologyKind::kHypercube;
      const std::int64_t n = parse_count(size, spec);
      if ((n & (n - 1)) != 0)
        throw Error("--topology " + in_quotes(spec) +
                    ": hypercube size must be a power of two, got " + std::to_string(n));
      std::vector<Dimension> dims;
      for (std::int64_t m = n; m > 1; m /= 2) dims.push_back({Wiring::kLine, 2});
      return dims;
    }
  }
  std::vector<Dimension> dims;
  for (const std::string& item : items) {
    const auto [kind, rest] = split_kind(trim(item), spec);
    const spec::SwitchSuffix words = spec::split_switch_suffix(rest, spec);
    const std::string_view size = words.size_omitted ? trim(rest) : words.size;
    const Wiring wiring = dimension_wiring(kind, spec);
    const std::string where = in_quotes(trim(item));
    if (words.sharp)
      throw Error(spec::prefix(spec) + "':sharp' declares the InfiniBand leaves and spines of a " +
                  "dgx or gb200-nvl72 pod, not a dimension (" + where +
                  "; write switch:N:nvls for a switch that multicasts and reduces)");
    if (words.any() && wiring != Wiring::kSwitch)
      throw Error(spec::prefix(spec) + "only switches can be " +
                  (words.nvls ? "NVLS (multicast + reduce)" : "multicast") + " (" + where +
                  "; write switch:N:" + (words.nvls ? "nvls" : "multicast") + ")");
    if (size.find(':') != std::string_view::npos)
      throw Error(spec::prefix(spec) + "unexpected " + in_quotes(size.substr(size.find(':'))) +
                  " in " + where +
                  (wiring == Wiring::kSwitch
                       ? " (expected switch:N, switch:N:multicast or switch:N:nvls)"
                       : " (expected " + std::string(kind) + ":N)"));
    dims.push_back({wiring, parse_count(size, spec), {words.multicast || words.nvls, words.nvls}});
  }
  return dims;
}

// Directed links one group of `n` NPUs adds (switch groups: links to and from the switch).
std::int64_t group_links(const Dimension& dim) {
  const std::int64_t n = dim.size;
  if (n == 1) return 0;
  switch (dim.wiring) {
    case Wiring::kLine:
      return 2 * (n - 1);
    case Wiring::kRing:
      return n == 2 ? 2 : 2 * n;
    case Wiring::kUniRing:
      return n;
    case Wiring::kFullyConnected:
      return n * (n - 1);
    case Wiring::kSwitch:
      return 2 * n;
  }
  return 0;
}

void check_sizes(const std::vector<Dimension>& dims, std::string_view spec) {
  std::int64_t npus = 1;
  for (const Dimension& dim : dims) {
    if (npus > kMaxNpus / dim.size)
      throw Error("--topology " + in_quotes(spec) + ": too many NPUs (at most " +
                  std::to_string(kMaxNpus) + ")");
    npus *= dim.size;
  }
  std::int64_t links = 0;
  for (const Dimension& dim : dims) {
    // group_links(dim) <= size^2 <= 2^48 and groups <= 2^24, so check before multiplying.
    const std::int64_t per_group = group_links(dim);
    const std::int64_t groups = npus / dim.size;
    if (per_group != 0 && groups > (kMaxLinks - links) / per_group)
      throw Error("--topology " + in_quotes(spec) + ": too many links (at most " +
                  std::to_string(kMaxLinks) + ")");
    links += groups * per_group;
  }
}

template <typename T>
std::vector<T> per_dimension(const std::vector<T>& values, std::size_t dims, const char* flag,
                             std::string_view spec) {
  if (values.size() == 1) return std::vector<T>(dims, values[0]);
  if (values.size() == dims) return values;
  throw Error(std::string(flag) + ": expected 1 or " + std::to_string(dims) +
              " values (one per axis or dimension of " + in_quotes(spec) + "), got " +
              std::to_string(values.size()));
}

class Builder {
 public:
  explicit Builder(std::int64_t npus) : npus_(static_cast<int>(npus)) {}

  // Wires every group of NPUs that differ only in coordinate `stride`-th place.
  void add_dimension(const Dimension& dim, std::int64_t stride, double gbps, Time latency) {
    if (dim.size == 1) return;  // A single NPU along an axis has nobody to talk to.
    for (std::int64_t base = 0; base < npus_; ++base) {
      if ((base / stride) % dim.size != 0) continue;  // Only the coordinate-0 member leads.
      std::vector<DeviceId> members;
      for (std::int64_t k = 0; k < dim.size; ++k)
        members.push_back(static_cast<DeviceId>(base + k * stride));
      add_group(dim.wiring, members, gbps, latency);
      if (dim.wiring != Wiring::kSwitch) continue;
      if (dim.capability.multicast) multicast_.push_back(npus_ + switches_ - 1);
      if (dim.capability.reduce) reducing_.push_back(npus_ + switches_ - 1);
    }
  }

  Topology build(std::string name) {
    Topology topology(npus_, switches_, std::move(links_), std::move(name));
    for (DeviceId s : multicast_) topology.set_multicast(s);
    for (DeviceId s : reducing_) topology.set_reducing(s);
    return topology;
  }

 private:
  void both_ways(DeviceId a, DeviceId b, double gbps, Time latency) {
    links_.push_back({a, b, gbps, latency});
    links_.push_back({b, a, gbps, latency});
  }

  void add_group(Wiring wiring, const std::vector<DeviceId>& m, double gbps, Time latency) {
    const std::size_t n = m.size();
    switch (wiring) {
      case Wiring::kLine:
        for (std::size_t k = 0; k + 1 < n; ++k) both_ways(m[k], m[k + 1], gbps, latency);
        break;
      case Wiring::kRing:
        // Two NPUs are neighbours both ways round the ring; one pair of links, not two.
        for (std::size_t k = 0; k < (n == 2 ? 1 : n); ++k)
          both_ways(m[k], m[(k + 1) % n], gbps, latency);
        break;
      case Wiring::kUniRing:
        for (std::size_t k = 0; k < n; ++k) links_.push_back({m[k], m[(k + 1) % n], gbps, latency});
        break;
      case Wiring::kFullyConnected:
        for (DeviceId a : m)
          for (DeviceId b : m)
            if (a != b) links_.push_back({a, b, gbps, latency});
        break;
      case Wiring::kSwitch: {
        const DeviceId sw = npus_ + switches_++;
        for (DeviceId a : m) both_ways(a, sw, gbps, latency);
        break;
      }
    }
  }

  int npus_;
  int switches_ = 0;
  std::vector<Link> links_;
  std::vector<DeviceId> multicast_;  // switches of multicast dimensions
  std::vector<DeviceId> reducing_;   // switches of reducing (nvls) dimensions
};

// ---- Clos fabrics ---------------------------------------------------------------------

// Clos / fat-tree. fattree:HxLxS: L leaves of H hosts, S spines, every leaf linked to every
// spine. fattree3:HxLxSxP: P pods of that shape (S aggregation switches per pod) and S core
// switches, core j joined to aggregation switch j of every pod. One bandwidth / latency per
// tier (host, leaf-up, aggregation-up) or one for all; oversubscription follows from them.
Topology make_fat_tree(std::string_view spec, std::string_view kind, std::string_view size,
                       const LinkParams& params) {
  const bool three = kind == "fattree3";
  const auto extents = parse_extents(size, three ? 4 : 3, spec);
  const std::int64_t hosts = extents[0], leaves = extents[1], spines = extents[2];
  const std::int64_t pods = three ? extents[3] : 1;
  const std::size_t tiers = three ? 3 : 2;
  const auto gbps = per_dimension(params.bandwidth_gbps, tiers, "--bandwidth", spec);
  const auto latency = per_dimension(params.latency_ps, tiers, "--latency", spec);
  const std::int64_t npus = hosts * leaves * pods;
  const std::int64_t switches = pods * (leaves + spines) + (three ? spines : 0);
  if (npus > kMaxNpus || switches > kMaxNpus)
    throw Error("--topology " + in_quotes(spec) + ": too many devices (at most " +
                std::to_string(kMaxNpus) + " NPUs)");
  if (npus < 2) throw Error("--topology " + in_quotes(spec) + ": needs at least 2 NPUs");
  if (2 * (npus + pods * leaves * spines + (three ? pods * spines : 0)) > kMaxLinks)
    throw Error("--topology " + in_quotes(spec) + ": too many links");
  std::vector<Link> links;
  auto both = [&](std::int64_t a, std::int64_t b, std::size_t tier) {
    links.push_back(
        {static_cast<DeviceId>(a), static_cast<DeviceId>(b), gbps[tier], latency[tier]});
    links.push_back(
        {static_cast<DeviceId>(b), static_cast<DeviceId>(a), gbps[tier], latency[tier]});
  };
  // Switch ids: per pod its leaves then its spines (aggregation), then the cores.
  auto leaf_id = [&](std::int64_t pod, std::int64_t leaf) {
    return npus + pod * (leaves + spines) + leaf;
  };
  auto spine_id = [&](std::int64_t pod, std::int64_t spine) {
    return npus + pod * (leaves + spines) + leaves + spine;
  };
  for (std::int64_t host = 0; host < npus; ++host)
    both(host, leaf_id(host / (hosts * leaves), (host / hosts) % leaves), 0);
  for (std::int64_t pod = 0; pod < pods; ++pod)
    for (std::int64_t leaf = 0; leaf < leaves; ++leaf)
      for (std::int64_t spine = 0; spine < spines; ++spine)
        both(leaf_id(pod, leaf), spine_id(pod, spine), 1);
  if (three)
    for (std::int64_t pod = 0; pod < pods; ++pod)
      for (std::int64_t spine = 0; spine < spines; ++spine)
        both(spine_id(pod, spine), npus + pods * (leaves + spines) + spine, 2);
  Topology topology(static_cast<int>(npus), static_cast<int>(switches), std::move(links),
                    std::string(spec));
  TopologyShape shape;
  shape.kind = three ? TopologyKind::kFatTree3 : TopologyKind::kFatTree;
  shape.hosts = static_cast<int>(hosts);
  shape.leaves = static_cast<int>(leaves);
  shape.spines = static_cast<int>(spines);
  shape.pods = static_cast<int>(pods);
  // Only fattree's leaves are one dimension; fattree3's pods are not (leaves meet through
  // their pod's spines, pods through the cores).
  if (!three)
    shape.dimensions = {{Wiring::kSwitch, static_cast<int>(hosts)},
                        {Wiring::kSwitch, static_cast<int>(leaves)}};
  topology.set_shape(std::move(shape));
  return topology;
}

// The Builder's topology of `dims`; `spec` names it (and its errors).
Topology build_dimensions(const std::vector<Dimension>& dims, TopologyKind kind,
                          std::string_view spec, const LinkParams& params) {
  check_sizes(dims, spec);
  // Hypercube:1 has no dimensions; its parameters still need to be one value or none.
  const std::size_t count = std::max<std::size_t>(dims.size(), 1);
  const auto gbps = per_dimension(params.bandwidth_gbps, count, "--bandwidth", spec);
  const auto latency = per_dimension(params.latency_ps, count, "--latency", spec);
  std::int64_t npus = 1;
  for (const Dimension& dim : dims) npus *= dim.size;
  Builder builder(npus);
  std::int64_t stride = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    builder.add_dimension(dims[d], stride, gbps[d], latency[d]);
    stride *= dims[d].size;
  }
  TopologyShape shape;
  shape.kind = kind;
  for (const Dimension& dim : dims)
    shape.dimensions.push_back({dim.wiring, static_cast<int>(dim.size)});
  if (std::any_of(dims.begin(), dims.end(), [](const Dimension& d) { return d.capability.any(); }))
    for (const Dimension& dim : dims) shape.capabilities.push_back(dim.capability);
  Topology topology = builder.build(std::string(spec));
  topology.set_shape(std::move(shape));
  return topology;
}

}  // namespace

LinkParams parse_link_params(std::string_view bandwidth, std::string_view latency) {
  LinkParams params;
  if (!trim(bandwidth).empty()) {
    params.bandwidth_gbps.clear();
    params.bandwidth_given = true;
    for (const std::string& item : split_list(bandwidth))
      params.bandwidth_gbps.push_back(parse_bandwidth(item, "--bandwidth"));
  }
  if (!trim(latency).empty()) {
    params.latency_ps.clear();
    params.latency_given = true;
    for (const std::string& item : split_list(latency))
      params.latency_ps.push_back(parse_latency(item, kPicosPerMicro, "--latency"));
  }
  return params;
}

Topology generate_topology(std::string_view spec, const LinkParams& params) {
  if (trim(spec).empty())
    throw Error(std::string("--topology: expected a spec such as torus2d:4x4 (kinds: ") + kKinds +
                ")");
  {
    const std::string_view head = trim(spec.substr(0, std::min(spec.find(':'), spec.find(','))));
    if (spec::is_system_kind(head)) return spec::generate_system(trim(spec), params);
    if (head == "fattree" || head == "fattree3") {
      if (spec.find(',') != std::string_view::npos || spec.find(':') == std::string_view::npos)
        throw Error("--topology " + in_quotes(spec) + ": expected " + std::string(head) +
                    (head == "fattree" ? ":HOSTSxLEAVESxSPINES" : ":HOSTSxLEAVESxSPINESxPODS") +
                    ", alone");
      return make_fat_tree(trim(spec), head, trim(spec.substr(spec.find(':') + 1)), params);
    }
  }
  TopologyKind kind = TopologyKind::kDimensions;
  const std::vector<Dimension> dims = parse_spec(spec, kind);
  return build_dimensions(dims, kind, spec, params);
}

Topology generate_dimensions(const std::vector<ShapeDimension>& dimensions,
                             const LinkParams& params, const std::string& name) {
  std::vector<Dimension> dims;
  for (const ShapeDimension& d : dimensions) {
    if (d.size < 1)
      throw Error("--topology " + in_quotes(name) + ": sizes must be at least 1, got " +
                  std::to_string(d.size));
    dims.push_back({d.wiring, d.size});
  }
  return build_dimensions(dims, TopologyKind::kDimensions, name, params);
}

std::string generator_help() {
  return "Topology generators (--topology SPEC):\n"
         "  ring:N          bidirectional ring of N NPUs\n"
         "  uniring:N       unidirectional ring, i -> i+1 mod N\n"
         "  fc:N            fully connected, a link per ordered NPU pair\n"
         "  switch:N        N NPUs attached to one switch (bandwidth = port bandwidth)\n"
         "  switch:N:multicast  the same switch, multicast (one copy in, many out)\n"
         "  switch:N:nvls   the same switch, multicast and reducing (NVLink SHARP: adds up the\n"
         "                  contributions that pass through); both also as a dimension\n"
         "                  (ring:2,switch:4:nvls)\n"
         "  mesh2d:WxH      2D mesh, NPU id = x + W*y\n"
         "  torus2d:WxH     2D torus (wrap-around mesh)\n"
         "  mesh3d:XxYxZ    3D mesh, NPU id = x + X*y + X*Y*z\n"
         "  torus3d:XxYxZ   3D torus\n"
         "  hypercube:N     hypercube of N = 2^d NPUs, links along each of the d dimensions\n"
         "  ring:4,fc:8,... ASTRA-sim style dimensions of ring/uniring/fc/switch, dimension 0\n"
         "                  first and fastest in the NPU id; switches numbered after the NPUs\n"
         "  dgx1            NVIDIA DGX-1 (V100): 8 GPUs in the NVLink hybrid cube-mesh; a pair\n"
         "                  with k NVLinks is one link each way of k x 25 GB/s\n"
         "  dgx-a100:NODES  NODES x 8 A100 on one NVSwitch per node (300 GB/s per GPU and\n"
         "                  direction, 0.25 us per port); NODES > 1 adds a rail-optimized "
         "network:\n"
         "                  GPU g's 200 Gb/s HDR NIC (25 GB/s, 1 us per port) on rail g's leaf\n"
         "                  (40 ports); above 40 nodes, 20 nodes per leaf and spines above\n"
         "  dgx-h100:NODES  the same with H100: NVSwitch 450 GB/s, 400 Gb/s NDR NICs (50 GB/s),\n"
         "                  64-port leaves (32 nodes per leaf with spines above 64 nodes)\n"
         "  dgx-h200:NODES  the same as dgx-h100 with H200 (same NVLink 4 fabric and NICs)\n"
         "  dgx-b200:NODES  the same with B200: NVLink 5, NVSwitch 900 GB/s, 400 Gb/s NICs\n"
         "  gb200-nvl72:RACKS  72 Blackwell GPUs per rack on one NVLink domain (900 GB/s),\n"
         "                  GPU g's 400 Gb/s NIC on rail g's leaf (64 racks at most)\n"
         "                  NPU id = node*GPUS + gpu; switches: NVSwitches, leaves (rail-major), "
         "spines\n"
         "    :multicast    after NODES: the NVSwitches multicast (not dgx-a100)\n"
         "    :nvls         the NVSwitches multicast and reduce (NVLink SHARP; not dgx-a100)\n"
         "    :sharp        the InfiniBand leaves and spines multicast and reduce (SHARP;\n"
         "                  NODES > 1); combinable: dgx-h100:4:nvls:sharp\n"
         "  fattree:HxLxS   two-tier Clos: L leaves of H hosts, S spines, every leaf to every\n"
         "                  spine; --bandwidth HOST,UPLINK sets the oversubscription\n"
         "  fattree3:HxLxSxP three tiers: P pods of fattree:HxLxS, S cores (core j to each pod's\n"
         "                  aggregation switch j); --bandwidth HOST,LEAF-UP,AGG-UP\n"
         "--bandwidth (GB/s) and --latency (bare numbers in us) take one value or one per\n"
         "axis (x, y, z) or dimension, e.g. --bandwidth 50,25. dgx1 reads them as per-NVLink\n"
         "bandwidth and link latency; the other dgx kinds and gb200-nvl72 as NVSwitch\n"
         "port[,network port]. Left at their defaults (50, 0.5us) these kinds use datasheet\n"
         "numbers (docs/topologies.md).\n";
}

std::string to_string(TopologyKind kind) {
  static constexpr std::pair<TopologyKind, const char*> kNames[] = {
      {TopologyKind::kCustom, "custom"},          {TopologyKind::kDimensions, "dimensions"},
      {TopologyKind::kMesh2d, "mesh2d"},          {TopologyKind::kTorus2d, "torus2d"},
      {TopologyKind::kMesh3d, "mesh3d"},          {TopologyKind::kTorus3d, "torus3d"},
      {TopologyKind::kHypercube, "hypercube"},    {TopologyKind::kDgx1, "dgx1"},
      {TopologyKind::kDgxA100, "dgx-a100"},       {TopologyKind::kDgxH100, "dgx-h100"},
      {TopologyKind::kDgxH200, "dgx-h200"},       {TopologyKind::kDgxB200, "dgx-b200"},
      {TopologyKind::kGb200Nvl72, "gb200-nvl72"}, {TopologyKind::kFatTree, "fattree"},
      {TopologyKind::kFatTree3, "fattree3"}};
  for (const auto& [k, name] : kNames)
    if (k == kind) return name;
  return "custom";
}

}  // namespace tacos
