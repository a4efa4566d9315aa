#include "tacos/io/topology_yaml.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "../common/read_file.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/topology/generators.h"

namespace tacos {
namespace {

// Same cap as the generators: a typo must not allocate gigabytes before it is reported.
constexpr std::int64_t kMaxDevices = std::int64_t{1} << 24;

// Built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
std::string in_quotes(std::string_view text) {
  std::string result(1, '\'');
  result.append(text);
  result.push_back('\'');
  return result;
}

std::string indexed(const std::string& name, std::size_t i) {
  return name + '[' + std::to_string(i) + ']';
}

// Typed access to YAML nodes; every failure names the file and the node's 1-based line.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }

  std::string where(const YAML::Node& at) const {
    const int line = at.IsDefined() ? at.Mark().line : -1;
    return path_ + ":" + std::to_string(line >= 0 ? line + 1 : 1);
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const {
    throw Error(where(at) + ": " + what);
  }

  // Runs `parse` and puts the file and line in front of any Error it throws.
  template <typename F>
  auto at_node(const YAML::Node& at, F&& parse) const {
    try {
      return parse();
    } catch (const Error& e) {
      fail(at, e.what());
    }
  }

  std::string scalar(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node, "expected a value for " + what);
    return node.Scalar();
  }

  std::int64_t integer(const YAML::Node& node, const std::string& what) const {
    const std::string text = scalar(node, what);
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
      fail(node, "expected a whole number for " + what + ", got " + in_quotes(text));
    return value;
  }

  double bandwidth(const YAML::Node& node, const std::string& what) const {
    const std::string text = scalar(node, what);
    return at_node(node, [&] { return parse_bandwidth(text, what); });
  }

  Time latency(const YAML::Node& node, Time bare_unit_ps, const std::string& what) const {
    const std::string text = scalar(node, what);
    return at_node(node, [&] { return parse_latency(text, bare_unit_ps, what); });
  }

  bool boolean(const YAML::Node& node, const std::string& what) const {
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value))
      fail(node, "expected true or false for " + what);
    return value;
  }

  YAML::Node sequence(const YAML::Node& node, const std::string& what) const {
    if (!node.IsSequence()) fail(node, "expected a list for " + what);
    return node;
  }

  // A required key of `map`; a missing key is reported at the map's line.
  YAML::Node require(const YAML::Node& map, const std::string& key,
                     const std::string& context) const {
    const YAML::Node node = map[key];
    if (!node.IsDefined() || node.IsNull()) fail(map, context + " needs '" + key + "'");
    return node;
  }

  // Rejects keys outside `allowed` (typos would otherwise be silently ignored).
  void only_keys(const YAML::Node& map, const std::set<std::string>& allowed,
                 const std::string& context) const {
    for (const auto& entry : map) {
      const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
      if (allowed.count(key)) continue;
      std::string list;
      for (const std::string& k : allowed) list += (list.empty() ? "" : ", ") + k;
      fail(entry.first,
           "unknown key " + in_quotes(key) + " in " + context + " (expected " + list + ")");
    }
  }

 private:
  std::string path_;
};

YAML::Node load_document(const std::string& path, std::string& contents) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(path + ": cannot open");
  contents = detail::read_file(path);
  try {
    return YAML::Load(contents);
  } catch (const YAML::Exception& e) {
    throw Error(path + ":" + std::to_string(e.mark.line >= 0 ? e.mark.line + 1 : 1) +
                ": malformed YAML: " + e.msg);
  }
}

// ---- ASTRA-sim analytical network: topology / npus_count / bandwidth / latency lists. ----
// Other keys are ignored, as ASTRA-sim itself ignores them, so its files load unchanged.

std::string astra_block(const Reader& r, const YAML::Node& node, std::size_t i) {
  const std::string block = r.scalar(node, indexed("topology", i));
  if (block == "Ring") return "ring";
  if (block == "FullyConnected") return "fc";
  if (block == "Switch") return "switch";
  r.fail(node, "unknown building block " + in_quotes(block) +
                   " in topology (expected Ring, FullyConnected or Switch)");
}

Topology read_astra_network(const Reader& r, const YAML::Node& root, std::string contents) {
  const std::string context = "an ASTRA-sim network config";
  const YAML::Node blocks = r.sequence(r.require(root, "topology", context), "topology");
  const char* kLists[] = {"npus_count", "bandwidth", "latency"};
  for (const char* name : kLists) {
    const YAML::Node list = r.sequence(r.require(root, name, context), name);
    if (list.size() != blocks.size())
      r.fail(list, in_quotes(name) + " has " + std::to_string(list.size()) + " entries but " +
                       "'topology' has " + std::to_string(blocks.size()) +
                       " (the lists must have equal length)");
  }
  if (blocks.size() == 0) r.fail(blocks, "'topology' needs at least one dimension");
  const YAML::Node counts = root["npus_count"];
  std::string spec;
  LinkParams params;
  params.bandwidth_gbps.clear();
  params.latency_ps.clear();
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const std::int64_t npus = r.integer(counts[i], indexed("npus_count", i));
    if (npus <= 1 || npus > kMaxDevices)
      r.fail(counts[i], indexed("npus_count", i) + " must be between 2 and " +
                            std::to_string(kMaxDevices) + ", got " + std::to_string(npus));
    if (i > 0) spec += ',';
    spec += astra_block(r, blocks[i], i) + ":" + std::to_string(npus);
    params.bandwidth_gbps.push_back(r.bandwidth(root["bandwidth"][i], indexed("bandwidth", i)));
    // ASTRA-sim's convention: a bare latency is in nanoseconds.
    params.latency_ps.push_back(
        r.latency(root["latency"][i], kPicosPerNano, indexed("latency", i)));
  }
  Topology topology = r.at_node(counts, [&] { return generate_topology(spec, params); });
  topology.set_name(r.path());
  TopologyShape shape = topology.shape();
  shape.astra_network_text = std::move(contents);
  topology.set_shape(std::move(shape));
  return topology;
}

// ---- tacos format: npus / switches / links, or a generate block. ----

Topology read_generate(const Reader& r, const YAML::Node& root) {
  for (const char* key : {"npus", "switches", "links"})
    if (root[key].IsDefined())
      r.fail(root[key], in_quotes(key) + " cannot be combined with 'generate'");
  const YAML::Node block = root["generate"];
  if (!block.IsMap()) r.fail(block, "expected a map {topology, bandwidth, latency} for 'generate'");
  r.only_keys(block, {"topology", "bandwidth", "latency"}, "'generate'");
  const std::string spec = r.scalar(r.require(block, "topology", "'generate'"), "topology");
  const YAML::Node bandwidth = block["bandwidth"];
  const YAML::Node latency = block["latency"];
  const LinkParams params = r.at_node(block, [&] {
    return parse_link_params(bandwidth.IsDefined() ? r.scalar(bandwidth, "bandwidth") : "",
                             latency.IsDefined() ? r.scalar(latency, "latency") : "");
  });
  return r.at_node(block, [&] { return generate_topology(spec, params); });
}

struct LinkEntry {
  Link link;
  bool bidirectional = false;
};

LinkEntry read_link(const Reader& r, const YAML::Node& node, std::size_t i, int devices) {
  const std::string name = indexed("links", i);
  if (!node.IsMap()) r.fail(node, "expected a map {src, dst, bandwidth, latency} for " + name);
  r.only_keys(node, {"src", "dst", "bandwidth", "latency", "bidirectional"}, name);
  auto device = [&](const std::string& key) {
    const YAML::Node id = r.require(node, key, name);
    const std::int64_t value = r.integer(id, name + "." + key);
    if (value < 0 || value >= devices)
      r.fail(id, name + "." + key + " = " + std::to_string(value) + " names no device (devices " +
                     "are 0.." + std::to_string(devices - 1) + ")");
    return static_cast<DeviceId>(value);
  };
  LinkEntry entry;
  entry.link.src = device("src");
  entry.link.dst = device("dst");
  if (entry.link.src == entry.link.dst) r.fail(node, name + " is a self loop");
  entry.link.bandwidth_gbps = r.bandwidth(r.require(node, "bandwidth", name), name + ".bandwidth");
  entry.link.latency_ps =
      r.latency(r.require(node, "latency", name), kPicosPerMicro, name + ".latency");
  if (node["bidirectional"].IsDefined())
    entry.bidirectional = r.boolean(node["bidirectional"], name + ".bidirectional");
  return entry;
}

int read_count(const Reader& r, const YAML::Node& node, const std::string& key, int minimum) {
  const std::int64_t value = r.integer(node, key);
  if (value < minimum || value > kMaxDevices)
    r.fail(node, key + " must be between " + std::to_string(minimum) + " and " +
                     std::to_string(kMaxDevices) + ", got " + std::to_string(value));
  return static_cast<int>(value);
}

Topology read_links(const Reader& r, const YAML::Node& root) {
  const std::string context = "a tacos topology";
  const int npus = read_count(r, r.require(root, "npus", context), "npus", 1);
  // `switches` is a count, or a list with one map per switch (ids npus, npus + 1, ...):
  // {multicast: true} declares a multicast switch (NVLink SHARP, InfiniBand multicast),
  // {reduce: true} a reducing one (in-network reduction; with multicast: true, NVLS or SHARP),
  // {} or false values a switch that only forwards.
  int switches = 0;
  std::vector<DeviceId> multicast, reducing;
  if (const YAML::Node list = root["switches"]; list.IsDefined() && list.IsSequence()) {
    if (static_cast<std::int64_t>(list.size()) > kMaxDevices)
      r.fail(list, "switches: at most " + std::to_string(kMaxDevices) + " entries");
    switches = static_cast<int>(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string name = indexed("switches", i);
      const YAML::Node entry = list[i];
      if (!entry.IsMap() && !entry.IsNull())
        r.fail(entry, "expected a map {multicast: true|false, reduce: true|false} for " + name);
      if (entry.IsNull()) continue;
      r.only_keys(entry, {"multicast", "reduce"}, name);
      const DeviceId id = npus + static_cast<DeviceId>(i);
      if (entry["multicast"].IsDefined() && r.boolean(entry["multicast"], name + ".multicast"))
        multicast.push_back(id);
      if (entry["reduce"].IsDefined() && r.boolean(entry["reduce"], name + ".reduce"))
        reducing.push_back(id);
    }
  } else if (list.IsDefined()) {
    if (list.IsMap())
      r.fail(list,
             "expected a count or a list of switches for 'switches' (one map per switch, "
             "e.g. - {multicast: true, reduce: true})");
    switches = read_count(r, list, "switches", 0);
  }
  const YAML::Node links = r.sequence(r.require(root, "links", context), "links");
  std::vector<Link> result;
  // Where each src->dst pair was first given, so a duplicate names both lines.
  std::map<std::pair<DeviceId, DeviceId>, int> first_line;
  auto add = [&](const Link& link, const YAML::Node& at) {
    auto [it, inserted] = first_line.try_emplace({link.src, link.dst}, at.Mark().line + 1);
    if (!inserted)
      r.fail(at, "duplicate link " + std::to_string(link.src) + " -> " + std::to_string(link.dst) +
                     " (first given on line " + std::to_string(it->second) + ")");
    result.push_back(link);
  };
  for (std::size_t i = 0; i < links.size(); ++i) {
    const LinkEntry entry = read_link(r, links[i], i, npus + switches);
    add(entry.link, links[i]);
    if (entry.bidirectional)
      add(Link{entry.link.dst, entry.link.src, entry.link.bandwidth_gbps, entry.link.latency_ps},
          links[i]);
  }
  // A switch without links carries nothing, yet every device costs memory and work in each
  // later pass: 2 NPUs and 16M unused switches took gigabytes. Refuse them up front.
  {
    std::vector<char> linked(static_cast<std::size_t>(switches), 0);
    int used = 0;
    for (const Link& l : result)
      for (const DeviceId d : {l.src, l.dst})
        if (d >= npus && !linked[d - npus]) {
          linked[d - npus] = 1;
          ++used;
        }
    if (used < switches)
      r.fail(root["switches"], "switches: " + std::to_string(switches) + " declared but only " +
                                   std::to_string(used) +
                                   " of them have links (every switch needs a link)");
  }
  try {
    Topology topology(npus, switches, std::move(result), r.path());
    for (DeviceId d : multicast) topology.set_multicast(d);
    for (DeviceId d : reducing) topology.set_reducing(d);
    return topology;
  } catch (const Error& e) {
    throw Error(r.path() + ": " + e.what());
  }
}

Topology read_tacos_format(const Reader& r, const YAML::Node& root) {
  r.only_keys(root, {"name", "npus", "switches", "links", "generate"}, "a tacos topology");
  Topology topology = root["generate"].IsDefined() ? read_generate(r, root) : read_links(r, root);
  if (root["name"].IsDefined()) topology.set_name(r.scalar(root["name"], "name"));
  return topology;
}

}  // namespace

Topology read_topology_yaml(const std::string& path) {
  std::string contents;
  const YAML::Node root = load_document(path, contents);
  const Reader r(path);
  if (!root.IsMap())
    r.fail(root,
           "expected a map: a tacos topology (npus, links or generate) or an ASTRA-sim network "
           "config (topology, npus_count, bandwidth, latency)");
  try {
    // The ASTRA-sim config is the only format with a top-level `topology` list.
    if (root["npus_count"].IsDefined() || root["topology"].IsDefined())
      return read_astra_network(r, root, std::move(contents));
    return read_tacos_format(r, root);
  } catch (const YAML::Exception& e) {
    // yaml-cpp's own conversion errors: keep the one-line file:line contract.
    throw Error(path + ":" + std::to_string(e.mark.line >= 0 ? e.mark.line + 1 : 1) + ": " + e.msg);
  }
}

}  // namespace tacos
