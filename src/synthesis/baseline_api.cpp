// The baselines' public entry points (baselines.h): names, applicability, dispatch.
#include <cstdint>

#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"
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
                                   {Baseline::kBiring, "biring"}};

std::string quoted(std::string_view text) {
  std::string result(1, '\'');
  result.append(text);
  result.push_back('\'');
  return result;
}

}  // namespace

Baseline parse_baseline(std::string_view text) {
  for (const auto& n : kNames)
    if (n.name == text) return n.baseline;
  throw Error("--algorithm: unknown baseline " + quoted(text) +
              " (expected ring, direct, rhd, dbt, hierarchical or biring)");
}

std::string to_string(Baseline baseline) {
  for (const auto& n : kNames)
    if (n.baseline == baseline) return std::string(n.name);
  return "unknown";
}

std::optional<std::string> baseline_inapplicable(Baseline baseline, const Topology& unwound,
                                                 const Collective& collective,
                                                 const std::string& topology_spec) {
  const CollectiveKind kind = collective.kind();
  const int n = collective.num_members();
  const bool gather_scatter_family = kind == CollectiveKind::kAllGather ||
                                     kind == CollectiveKind::kReduceScatter ||
                                     kind == CollectiveKind::kAllReduce;
  switch (baseline) {
    case Baseline::kRing:
    case Baseline::kDirect:
      return std::nullopt;
    case Baseline::kBiring:
      if (!gather_scatter_family)
        return "biring is defined for all-gather, reduce-scatter and all-reduce, not " +
               to_string(kind);
      return std::nullopt;
    case Baseline::kRhd:
      if (!gather_scatter_family)
        return "rhd is defined for all-gather, reduce-scatter and all-reduce, not " +
               to_string(kind);
      if ((n & (n - 1)) != 0)
        return "rhd needs a power-of-two NPU count (N = " + std::to_string(n) + ")";
      return std::nullopt;
    case Baseline::kDbt:
      if (kind != CollectiveKind::kAllReduce && kind != CollectiveKind::kBroadcast &&
          kind != CollectiveKind::kReduce)
        return "dbt is defined for all-reduce, broadcast and reduce, not " + to_string(kind);
      return std::nullopt;
    case Baseline::kHierarchical: {
      if (!gather_scatter_family)
        return "hierarchical is defined for all-gather, reduce-scatter and all-reduce, not " +
               to_string(kind);
      if (n != unwound.npus())
        return "hierarchical needs every NPU of the topology in the collective (" +
               std::to_string(n) + " of " + std::to_string(unwound.npus()) + " selected)";
      const auto dims = detail::generator_dimensions(topology_spec);
      if (dims.empty())
        return "hierarchical needs the dimensions of a generator topology (such as "
               "ring:4,fc:8 or torus2d:4x4); " +
               quoted(topology_spec) + " has none";
      std::int64_t npus = 1;
      int active = 0;
      for (const auto& d : dims) {
        npus *= d.size;
        active += d.size > 1 ? 1 : 0;
      }
      if (npus != unwound.npus())
        return "hierarchical: " + quoted(topology_spec) + " has " + std::to_string(npus) +
               " NPUs but the topology " + std::to_string(unwound.npus());
      if (active < 2)
        return "hierarchical needs two or more dimensions of size > 1; " + quoted(topology_spec) +
               " has " + std::to_string(active);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

Algorithm synthesize_baseline(Baseline baseline, const Topology& network,
                              const Collective& collective, LinkModel model,
                              const std::string& topology_spec) {
  if (network.switches() == 0)
    return detail::synthesize_baseline_on(baseline, network, collective, model, topology_spec);
  // Switches are devices: plan between NPUs over the switch routes, time on the switches.
  const Topology view = switch_route_view(network);
  const detail::TimingTopologyScope timing(network);
  return detail::synthesize_baseline_on(baseline, view, collective, model, topology_spec);
}

namespace detail {

namespace {
thread_local const Topology* timing_topology_override = nullptr;
}  // namespace

TimingTopologyScope::TimingTopologyScope(const Topology& timing)
    : previous_(timing_topology_override) {
  timing_topology_override = &timing;
}
TimingTopologyScope::~TimingTopologyScope() { timing_topology_override = previous_; }

const Topology& timing_topology(const Topology& planned_on) {
  return timing_topology_override ? *timing_topology_override : planned_on;
}

Algorithm synthesize_baseline_on(Baseline baseline, const Topology& unwound,
                                 const Collective& collective, LinkModel model,
                                 const std::string& topology_spec) {
  if (auto reason = baseline_inapplicable(baseline, unwound, collective, topology_spec))
    throw Error(*reason);
  switch (baseline) {
    case Baseline::kRing:
      return detail::ring_baseline(unwound, collective, model,
                                   detail::generator_dimensions(topology_spec));
    case Baseline::kBiring:
      return detail::biring_baseline(unwound, collective, model,
                                     detail::generator_dimensions(topology_spec));
    case Baseline::kDirect:
      return detail::direct_baseline(unwound, collective, model);
    case Baseline::kRhd:
      return detail::rhd_baseline(unwound, collective, model);
    case Baseline::kDbt:
      return detail::dbt_baseline(unwound, collective, model);
    case Baseline::kHierarchical: {
      const auto dims = detail::generator_dimensions(topology_spec);
      if (const auto shape = detail::leaf_relay_shape(topology_spec, dims, unwound.npus()))
        return detail::leaf_relay_baseline(unwound, collective, model, shape->first, shape->second);
      return detail::hierarchical_baseline(unwound, collective, model, dims);
    }
  }
  throw Error("unknown baseline");
}

}  // namespace detail

}  // namespace tacos
