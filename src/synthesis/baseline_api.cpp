// The baselines' public entry points (baselines.h): names, applicability, dispatch.
#include <cstdint>
#include <cstdio>

#include "in_switch.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/synthesis/request.h"
#include "tacos/topology/switch_routes.h"

namespace tacos {
namespace {

struct BaselineName {
  Baseline baseline;
  std::string_view name;
};
constexpr BaselineName kNames[] = {{Baseline::kRing, "ring"},
                                   {Baseline::kDirect, "direct"},
                                   {Baseline::kRhd, "rhd"},
                                   {Baseline::kDbt, "dbt"},
                                   {Baseline::kHierarchical, "hierarchical"},
                                   {Baseline::kBiring, "biring"},
                                   {Baseline::kBucket, "bucket"},
                                   {Baseline::kNodeDirect, "node-direct"},
                                   {Baseline::kRelay, "relay"},
                                   {Baseline::kTorusTrees, "torus-trees"},
                                   {Baseline::kNvls, "nvls"},
                                   {Baseline::kNvlsTree, "nvls-tree"},
                                   {Baseline::kCollnet, "collnet"}};

}  // namespace

Baseline parse_baseline(std::string_view text) {
  for (const auto& n : kNames)
    if (n.name == text) return n.baseline;
  throw Error(
      "--algorithm: unknown baseline " + single_quoted(text) +
      " (expected ring, direct, rhd, dbt, hierarchical, biring, bucket, node-direct, relay, "
      "torus-trees, nvls, nvls-tree or collnet)");
}

std::string to_string(Baseline baseline) {
  for (const auto& n : kNames)
    if (n.baseline == baseline) return std::string(n.name);
  return "unknown";
}

std::optional<std::string> baseline_inapplicable(Baseline baseline, const Topology& network,
                                                 const Collective& collective) {
  const CollectiveKind kind = collective.kind();
  const int n = collective.num_members();
  const AlgorithmInfo& info = find_algorithm(to_string(baseline));
  if (!info.applies_to(kind)) {
    std::string kinds;
    for (std::size_t i = 0; i < info.collectives.size(); ++i) {
      if (i > 0) kinds += i + 1 == info.collectives.size() ? " and " : ", ";
      kinds += to_string(info.collectives[i]);
    }
    return info.name + " is defined for " + kinds + ", not " + to_string(kind);
  }
  switch (baseline) {
    case Baseline::kRing:
    case Baseline::kDirect:
    case Baseline::kBiring:
    case Baseline::kDbt:
      return std::nullopt;
    case Baseline::kBucket:
      return detail::bucket_inapplicable(network, collective);
    case Baseline::kNodeDirect:
      return detail::node_direct_inapplicable(network, collective);
    case Baseline::kRelay:
      return detail::relay_inapplicable(network, collective);
    case Baseline::kTorusTrees:
      return detail::torus_trees_inapplicable(network, collective);
    case Baseline::kNvls:
      return detail::nvls_inapplicable(network, collective);
    case Baseline::kNvlsTree:
    case Baseline::kCollnet:
      return detail::nvls_tree_inapplicable(network, collective, baseline == Baseline::kCollnet);
    case Baseline::kRhd:
      if ((n & (n - 1)) != 0)
        return "rhd needs a power-of-two NPU count (N = " + std::to_string(n) + ")";
      return std::nullopt;
    case Baseline::kHierarchical: {
      if (n != network.npus())
        return "hierarchical needs every NPU of the topology in the collective (" +
               std::to_string(n) + " of " + std::to_string(network.npus()) + " selected)";
      const auto& dims = network.shape().dimensions;
      if (dims.empty())
        return "hierarchical needs the dimensions of a generator topology (such as "
               "ring:4,fc:8 or torus2d:4x4); " +
               single_quoted(network.name()) + " has none";
      std::int64_t npus = 1;
      int active = 0;
      for (const auto& d : dims) {
        npus *= d.size;
        active += d.size > 1 ? 1 : 0;
      }
      if (npus != network.npus())
        return "hierarchical: " + single_quoted(network.name()) + " has " + std::to_string(npus) +
               " NPUs in its dimensions but " + std::to_string(network.npus()) + " in all";
      if (active < 2)
        return "hierarchical needs two or more dimensions of size > 1; " +
               single_quoted(network.name()) + " has " + std::to_string(active);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

Algorithm synthesize_baseline(Baseline baseline, const Topology& network,
                              const Collective& collective, LinkModel model) {
  if (auto reason = baseline_inapplicable(baseline, network, collective)) throw Error(*reason);
  // In-switch plans name the switch: they are made and timed on the network itself.
  if (baseline == Baseline::kNvls) return detail::nvls_baseline(network, collective, model);
  if (baseline == Baseline::kNvlsTree || baseline == Baseline::kCollnet)
    return detail::nvls_tree_baseline(network, collective, model, baseline == Baseline::kCollnet);
  // Switches are devices: plan between NPUs over the switch routes, time on the switches.
  const Topology view = network.switches() > 0 ? switch_route_view(network) : Topology();
  const Topology& planned = network.switches() > 0 ? view : network;
  switch (baseline) {
    case Baseline::kRing:
      return detail::ring_baseline(planned, network, collective, model);
    case Baseline::kBiring:
      return detail::biring_baseline(planned, network, collective, model);
    case Baseline::kBucket:
      return detail::bucket_baseline(planned, network, collective, model);
    case Baseline::kNodeDirect:
      return detail::node_direct_baseline(planned, network, collective, model);
    case Baseline::kRelay:
      return detail::relay_baseline(planned, network, collective, model);
    case Baseline::kTorusTrees:
      return detail::torus_trees_baseline(planned, network, collective, model);
    case Baseline::kDirect:
      return detail::direct_baseline(planned, network, collective, model);
    case Baseline::kRhd:
      return detail::rhd_baseline(planned, network, collective, model);
    case Baseline::kDbt:
      return detail::dbt_baseline(planned, network, collective, model);
    case Baseline::kNvls:
    case Baseline::kNvlsTree:
    case Baseline::kCollnet:
      break;
    case Baseline::kHierarchical:
      if (const auto shape = detail::leaf_relay_shape(network.shape(), network.npus()))
        return detail::leaf_relay_baseline(planned, network, collective, model, shape->first,
                                           shape->second);
      return detail::hierarchical_baseline(planned, network, collective, model);
  }
  throw Error("unknown baseline");
}

namespace detail {

void require_transfers_within(double transfers, double budget, const char* format) {
  if (transfers <= budget) return;
  char text[200];
  std::snprintf(text, sizeof text, format, transfers, budget);
  throw BaselineOverBudget(text);
}

}  // namespace detail
}  // namespace tacos
