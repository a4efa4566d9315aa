#include "system_generators.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "spec_text.h"
#include "switch_suffix.h"
#include "tacos/common/error.h"

namespace tacos::spec {
namespace {

// DGX-1 (V100) hybrid cube-mesh: NVLinks between each GPU pair (6 per GPU, 24 in all).
constexpr int kDgx1Gpus = 8;
constexpr int kDgx1NvLinks[kDgx1Gpus][kDgx1Gpus] = {
    {0, 2, 1, 1, 2, 0, 0, 0}, {2, 0, 1, 2, 0, 1, 0, 0}, {1, 1, 0, 2, 0, 0, 2, 0},
    {1, 2, 2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2, 1, 1}, {0, 1, 0, 0, 2, 0, 1, 2},
    {0, 0, 2, 0, 1, 1, 0, 2}, {0, 0, 0, 1, 1, 2, 2, 0},
};

constexpr bool dgx1_matrix_is_symmetric() {
  for (int a = 0; a < kDgx1Gpus; ++a)
    for (int b = 0; b < kDgx1Gpus; ++b)
      if (kDgx1NvLinks[a][b] != kDgx1NvLinks[b][a]) return false;
  return true;
}
static_assert(dgx1_matrix_is_symmetric(), "DGX-1 NVLink matrix must be symmetric");

// NVLink2 (V100): 25 GB/s per direction per link.
constexpr double kNvLink2Gbps = 25.0;

// One pod kind: the GPUs of a node (a rack for gb200-nvl72) on one NVSwitch domain, modelled
// as one switch device, and a NIC per GPU on its rail's InfiniBand leaf.
struct PodKind {
  const char* name;
  TopologyKind kind;
  const char* unit;           // "node" or "rack", for sizes and messages
  int gpus;                   // per node (rack)
  double nvswitch_port_gbps;  // per GPU per direction
  double nic_gbps;            // per GPU per direction
  Time nvswitch_port_latency_ps;
  Time network_port_latency_ps;
  int leaf_ports;  // ports of the InfiniBand switch the rails are built from
  bool nvls;       // the NVSwitch has NVLink SHARP (multicast and reduce)
};

// Leaves: Quantum QM8790 (40 x HDR 200 Gb/s) for A100, Quantum-2 QM9700 (64 x NDR 400 Gb/s)
// from H100 on, as in the DGX SuperPOD and BasePOD reference architectures. B200 and GB200:
// NVLink 5, 1.8 TB/s bidirectional per GPU = 900 GB/s per direction; ConnectX-7 400 Gb/s NICs.
constexpr PodKind kPods[] = {
    {"dgx-a100", TopologyKind::kDgxA100, "node", 8, 300.0, 25.0, 250'000, 1'000'000, 40, false},
    {"dgx-h100", TopologyKind::kDgxH100, "node", 8, 450.0, 50.0, 250'000, 1'000'000, 64, true},
    {"dgx-h200", TopologyKind::kDgxH200, "node", 8, 450.0, 50.0, 250'000, 1'000'000, 64, true},
    {"dgx-b200", TopologyKind::kDgxB200, "node", 8, 900.0, 50.0, 250'000, 1'000'000, 64, true},
    {"gb200-nvl72", TopologyKind::kGb200Nvl72, "rack", 72, 900.0, 50.0, 250'000, 1'000'000, 64,
     true},
};

const PodKind* find_pod(std::string_view kind) {
  for (const PodKind& pod : kPods)
    if (kind == pod.name) return &pod;
  return nullptr;
}

std::string nvls_kinds() {
  std::string list;
  for (const PodKind& pod : kPods)
    if (pod.nvls) list += std::string(list.empty() ? "" : ", ") + pod.name;
  return list;
}

// The system generators use their datasheet numbers unless --bandwidth / --latency were given.
bool is_default_bandwidth(const LinkParams& params) { return !params.bandwidth_given; }
bool is_default_latency(const LinkParams& params) { return !params.latency_given; }

Topology make_dgx1(std::string_view spec, const LinkParams& params) {
  if (params.bandwidth_gbps.size() != 1)
    throw Error("--bandwidth: dgx1 takes one value (GB/s per NVLink), got " +
                std::to_string(params.bandwidth_gbps.size()));
  if (params.latency_ps.size() != 1)
    throw Error("--latency: dgx1 takes one value, got " + std::to_string(params.latency_ps.size()));
  const double per_nvlink = is_default_bandwidth(params) ? kNvLink2Gbps : params.bandwidth_gbps[0];
  const Time latency = params.latency_ps[0];
  std::vector<Link> links;
  for (DeviceId a = 0; a < kDgx1Gpus; ++a)
    for (DeviceId b = 0; b < kDgx1Gpus; ++b)
      if (kDgx1NvLinks[a][b] > 0) links.push_back({a, b, kDgx1NvLinks[a][b] * per_nvlink, latency});
  Topology topology(kDgx1Gpus, 0, std::move(links), std::string(spec));
  TopologyShape shape;
  shape.kind = TopologyKind::kDgx1;
  topology.set_shape(std::move(shape));
  return topology;
}

// Two values: [NVSwitch port, network port]; one value applies to both.
template <typename T>
std::pair<T, T> pod_pair(const std::vector<T>& values, bool use_default, T intra, T inter,
                         const char* flag, std::string_view spec) {
  if (use_default) return {intra, inter};
  if (values.size() == 1) return {values[0], values[0]};
  if (values.size() == 2) return {values[0], values[1]};
  throw Error(std::string(flag) + ": " + in_quotes(spec) +
              " takes 1 or 2 values (NVSwitch port, network port), got " +
              std::to_string(values.size()));
}

// The largest pod a two-tier rail network builds: one leaf per rail takes up to `ports` nodes;
// beyond, leaves give half their ports to nodes and half to at most ports / 2 spines.
std::int64_t max_two_tier_nodes(const PodKind& pod) {
  const std::int64_t ports = pod.leaf_ports;
  return std::max<std::int64_t>(ports, ports / pod.gpus * (ports / 2));
}

Topology make_pod(const PodKind& pod, std::int64_t nodes, std::string_view spec,
                  const LinkParams& params) {
  const auto [nvswitch_gbps, nic_gbps] =
      pod_pair(params.bandwidth_gbps, is_default_bandwidth(params), pod.nvswitch_port_gbps,
               pod.nic_gbps, "--bandwidth", spec);
  const auto [nvswitch_latency, network_latency] =
      pod_pair(params.latency_ps, is_default_latency(params), pod.nvswitch_port_latency_ps,
               pod.network_port_latency_ps, "--latency", spec);
  if (nodes > max_two_tier_nodes(pod))
    throw Error(prefix(spec) + "more than " + std::to_string(max_two_tier_nodes(pod)) + " " +
                pod.unit +
                "s need a third switch tier, which dgx kinds do not build (use fattree3 or a "
                "topology file)");
  // Rail-optimized: NIC g of every node on a leaf of rail g. Up to leaf_ports nodes one leaf
  // per rail takes them all; beyond, each leaf gives half its ports to nodes and half to the
  // spines, and every leaf reaches every spine (parallel cables become one wider link).
  const int gpus = pod.gpus;
  const int npus = static_cast<int>(nodes * gpus);
  const int ports = pod.leaf_ports;
  const bool spines_needed = nodes > ports;
  const std::int64_t down_ports = spines_needed ? ports / 2 : ports;
  const std::int64_t leaves_per_rail = nodes > 1 ? (nodes + down_ports - 1) / down_ports : 0;
  const std::int64_t leaves = leaves_per_rail * gpus;
  const std::int64_t spines = spines_needed ? (leaves * (ports / 2) + ports - 1) / ports : 0;
  const int switches = static_cast<int>(nodes + leaves + spines);
  std::vector<Link> links;
  links.reserve(static_cast<std::size_t>(npus) * 4 + static_cast<std::size_t>(leaves * spines) * 2);
  const DeviceId first_leaf = npus + static_cast<DeviceId>(nodes);
  const DeviceId first_spine = first_leaf + static_cast<DeviceId>(leaves);
  for (DeviceId gpu = 0; gpu < npus; ++gpu) {
    const DeviceId nvswitch = npus + gpu / gpus;
    links.push_back({gpu, nvswitch, nvswitch_gbps, nvswitch_latency});
    links.push_back({nvswitch, gpu, nvswitch_gbps, nvswitch_latency});
    if (nodes > 1) {
      const std::int64_t rail = gpu % gpus;
      const std::int64_t node_index = gpu / gpus;
      const DeviceId leaf =
          first_leaf + static_cast<DeviceId>(rail * leaves_per_rail + node_index / down_ports);
      links.push_back({gpu, leaf, nic_gbps, network_latency});
      links.push_back({leaf, gpu, nic_gbps, network_latency});
    }
  }
  const double uplink_gbps = nic_gbps * static_cast<double>(ports / 2) /
                             static_cast<double>(std::max<std::int64_t>(spines, 1));
  for (DeviceId leaf = first_leaf; leaf < first_spine; ++leaf)
    for (DeviceId spine = first_spine; spine < first_spine + spines; ++spine) {
      links.push_back({leaf, spine, uplink_gbps, network_latency});
      links.push_back({spine, leaf, uplink_gbps, network_latency});
    }
  Topology topology(npus, switches, std::move(links), std::string(spec));
  TopologyShape shape;
  shape.kind = pod.kind;
  shape.dimensions = {{DimensionWiring::kSwitch, gpus},
                      {DimensionWiring::kSwitch, static_cast<int>(nodes)}};
  topology.set_shape(std::move(shape));
  return topology;
}

// Checks the words against the pod kind and node count; one line per wrong combination.
void check_words(const PodKind& pod, const SwitchSuffix& words, std::int64_t nodes,
                 std::string_view spec) {
  if ((words.multicast || words.nvls) && !pod.nvls)
    throw Error(prefix(spec) + pod.name + "'s NVSwitch has no NVLink SHARP, so it cannot be " +
                (words.nvls ? "':nvls'" : "':multicast'") + " (" + nvls_kinds() + " can)");
  if (words.sharp && nodes == 1)
    throw Error(prefix(spec) + "':sharp' declares the InfiniBand leaves and spines, and one " +
                pod.unit + " has none (give 2 or more " + pod.unit + "s)");
}

// Declares the capabilities: NVSwitches (ids npus .. npus + nodes - 1) for :multicast / :nvls,
// every leaf and spine after them for :sharp; the shape records them per dimension.
void declare(Topology& topology, const SwitchSuffix& words, std::int64_t nodes) {
  const SwitchCapability nvswitch{words.multicast || words.nvls, words.nvls};
  const SwitchCapability network{words.sharp, words.sharp};
  const DeviceId first_leaf = topology.npus() + static_cast<DeviceId>(nodes);
  for (DeviceId s = topology.npus(); s < topology.devices(); ++s) {
    const SwitchCapability c = s < first_leaf ? nvswitch : network;
    if (c.multicast) topology.set_multicast(s);
    if (c.reduce) topology.set_reducing(s);
  }
  if (!words.any()) return;
  TopologyShape shape = topology.shape();
  shape.capabilities = {nvswitch, network};
  topology.set_shape(std::move(shape));
}

}  // namespace

bool is_system_kind(std::string_view kind) { return kind == "dgx1" || find_pod(kind) != nullptr; }

Topology generate_system(std::string_view spec, const LinkParams& params) {
  if (spec.find(',') != std::string_view::npos)
    throw Error(prefix(spec) +
                "dgx1, dgx-a100, dgx-h100, dgx-h200, dgx-b200 and gb200-nvl72 cannot be combined "
                "with other dimensions");
  const std::size_t colon = spec.find(':');
  const std::string_view kind = trim(spec.substr(0, colon));
  if (kind == "dgx1") {
    if (colon != std::string_view::npos)
      throw Error(prefix(spec) + "dgx1 takes no size (it is 8 GPUs)");
    return make_dgx1(spec, params);
  }
  const PodKind& pod = *find_pod(kind);
  SwitchSuffix words;
  if (colon != std::string_view::npos) words = split_switch_suffix(spec.substr(colon + 1), spec);
  std::int64_t nodes = 1;
  if (colon != std::string_view::npos && !words.size_omitted) {
    if (words.size.empty())
      throw Error(prefix(spec) + "expected a " + pod.unit + " count after ':', such as " +
                  pod.name + ":2");
    if (words.size.find(':') != std::string_view::npos)
      throw Error(prefix(spec) + "unexpected " +
                  in_quotes(words.size.substr(words.size.find(':'))) + " (expected " + pod.name +
                  ":" + (pod.unit == std::string_view("rack") ? "RACKS" : "NODES") +
                  " then :multicast, :nvls or :sharp)");
    nodes = parse_count(words.size, spec);
    if (nodes > kMaxNpus / pod.gpus)
      throw Error(prefix(spec) + "too many " + pod.unit + "s (at most " +
                  std::to_string(kMaxNpus / pod.gpus) + ")");
  }
  check_words(pod, words, nodes, spec);
  Topology topology = make_pod(pod, nodes, spec, params);
  declare(topology, words, nodes);
  return topology;
}

}  // namespace tacos::spec
