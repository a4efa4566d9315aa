#include "tacos/topology/generators.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos {
namespace {

// Caps keep a typo such as "fc:1000000" from exhausting memory before anything is reported.
constexpr std::int64_t kMaxNpus = std::int64_t{1} << 24;
constexpr std::int64_t kMaxLinks = std::int64_t{1} << 26;

constexpr const char* kKinds =
    "ring, uniring, fc, switch, mesh2d, torus2d, mesh3d, torus3d, hypercube";

// How the NPUs of one dimension group (or one mesh/torus axis) are wired together.
enum class Wiring { kLine, kRing, kUniRing, kFullyConnected, kSwitch };

struct Dimension {
  Wiring wiring;
  std::int64_t size;
};

// Built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
std::string in_quotes(std::string_view text) {
  std::string result(1, '\'');
  result.append(text);
  result.push_back('\'');
  return result;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

std::int64_t parse_count(std::string_view text, std::string_view spec) {
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    throw Error("--topology " + in_quotes(spec) + ": expected a whole number, got " +
                in_quotes(text));
  if (value <= 0)
    throw Error("--topology " + in_quotes(spec) + ": sizes must be at least 1, got " +
                in_quotes(text));
  if (value > kMaxNpus)
    throw Error("--topology " + in_quotes(spec) + ": " + in_quotes(text) +
                " is too large (at most " + std::to_string(kMaxNpus) + " NPUs)");
  return value;
}

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
std::vector<Dimension> parse_spec(std::string_view spec) {
  const std::vector<std::string> items = split_list(spec, ',');
  if (items.size() == 1) {
    auto [kind, size] = split_kind(items[0], spec);
    auto grid = [&](std::size_t axes, Wiring wiring) {
      std::vector<Dimension> dims;
      for (std::int64_t extent : parse_extents(size, axes, spec)) dims.push_back({wiring, extent});
      return dims;
    };
    if (kind == "mesh2d") return grid(2, Wiring::kLine);
    if (kind == "torus2d") return grid(2, Wiring::kRing);
    if (kind == "mesh3d") return grid(3, Wiring::kLine);
    if (kind == "torus3d") return grid(3, Wiring::kRing);
    if (kind == "hypercube") {
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
    auto [kind, size] = split_kind(trim(item), spec);
    dims.push_back({dimension_wiring(kind, spec), parse_count(size, spec)});
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
    }
  }

  Topology build(std::string name) {
    return Topology(npus_, switches_, std::move(links_), std::move(name));
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
};

}  // namespace

LinkParams parse_link_params(std::string_view bandwidth, std::string_view latency) {
  LinkParams params;
  if (!trim(bandwidth).empty()) {
    params.bandwidth_gbps.clear();
    for (const std::string& item : split_list(bandwidth))
      params.bandwidth_gbps.push_back(parse_bandwidth(item, "--bandwidth"));
  }
  if (!trim(latency).empty()) {
    params.latency_ps.clear();
    for (const std::string& item : split_list(latency))
      params.latency_ps.push_back(parse_latency(item, kPicosPerMicro, "--latency"));
  }
  return params;
}

Topology generate_topology(std::string_view spec, const LinkParams& params) {
  if (trim(spec).empty())
    throw Error(std::string("--topology: expected a spec such as torus2d:4x4 (kinds: ") + kKinds +
                ")");
  const std::vector<Dimension> dims = parse_spec(spec);
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
  return builder.build(std::string(spec));
}

std::string generator_help() {
  return "Topology generators (--topology SPEC):\n"
         "  ring:N          bidirectional ring of N NPUs\n"
         "  uniring:N       unidirectional ring, i -> i+1 mod N\n"
         "  fc:N            fully connected, a link per ordered NPU pair\n"
         "  switch:N        N NPUs attached to one switch (bandwidth = port bandwidth)\n"
         "  mesh2d:WxH      2D mesh, NPU id = x + W*y\n"
         "  torus2d:WxH     2D torus (wrap-around mesh)\n"
         "  mesh3d:XxYxZ    3D mesh, NPU id = x + X*y + X*Y*z\n"
         "  torus3d:XxYxZ   3D torus\n"
         "  hypercube:N     hypercube of N = 2^d NPUs, links along each of the d dimensions\n"
         "  ring:4,fc:8,... ASTRA-sim style dimensions of ring/uniring/fc/switch, dimension 0\n"
         "                  first and fastest in the NPU id; switches numbered after the NPUs\n"
         "--bandwidth (GB/s) and --latency (bare numbers in us) take one value or one per\n"
         "axis (x, y, z) or dimension, e.g. --bandwidth 50,25.\n";
}

}  // namespace tacos
