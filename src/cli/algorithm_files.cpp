#include "algorithm_files.h"

#include <fstream>
#include <regex>
#include <sstream>

#include "tacos/common/error.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/io/msccl_xml.h"
#include "tacos/topology/generators.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::cli {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The ngpus attribute of an MSCCL file, read before the topology exists.
int msccl_ngpus(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  const std::string content = text.str();
  std::smatch match;
  static const std::regex kNgpus(R"re(<algo\b[^>]*\bngpus\s*=\s*"(\d+)")re");
  if (!std::regex_search(content, match, kNgpus))
    throw Error(path + ": the <algo> element has no ngpus attribute");
  return std::stoi(match[1]);
}

Topology pick_topology(const TopologyOptions& topology, bool given, int npus, std::string& spec) {
  if (given) {
    spec = topology.topology;
    return topology.load();
  }
  spec = "fc:" + std::to_string(npus);
  return generate_topology(spec, LinkParams{});
}

}  // namespace

AlgorithmFormat detect_format(const std::string& path) {
  if (ends_with(path, ".json")) return AlgorithmFormat::kJson;
  if (ends_with(path, ".xml")) return AlgorithmFormat::kMsccl;
  return AlgorithmFormat::kChakra;
}

std::string to_string(AlgorithmFormat format) {
  switch (format) {
    case AlgorithmFormat::kJson:
      return "json";
    case AlgorithmFormat::kMsccl:
      return "msccl";
    case AlgorithmFormat::kChakra:
      return "chakra";
  }
  return "unknown";
}

LoadedAlgorithm load_algorithm_file(const std::string& path, const TopologyOptions& topology,
                                    bool topology_given, LinkModel model,
                                    std::optional<Bytes> size) {
  LoadedAlgorithm loaded;
  loaded.format = detect_format(path);
  switch (loaded.format) {
    case AlgorithmFormat::kJson: {
      Algorithm algorithm = read_algorithm_json(path);
      loaded.network = topology.network(pick_topology(
          topology, topology_given, algorithm.collective().topology_npus(), loaded.topology_spec));
      loaded.algorithm = std::move(algorithm);
      break;
    }
    case AlgorithmFormat::kMsccl: {
      loaded.network = topology.network(
          pick_topology(topology, topology_given, msccl_ngpus(path), loaded.topology_spec));
      // MSCCL names GPU-to-GPU messages; through switches they are read (and ordered) over
      // the NPU view of the switch routes, then timed on the switches like any algorithm.
      loaded.algorithm = read_msccl_xml(
          path, loaded.network.switches() > 0 ? switch_route_view(loaded.network) : loaded.network,
          model, size);
      break;
    }
    case AlgorithmFormat::kChakra: {
      EtTrace trace = read_chakra(path);
      loaded.network = topology.network(
          pick_topology(topology, topology_given, trace.npus(), loaded.topology_spec));
      if (trace.tacos) loaded.algorithm = chakra_to_algorithm(trace, loaded.network, model);
      loaded.trace = std::move(trace);
      break;
    }
  }
  if (loaded.algorithm && loaded.algorithm->collective().topology_npus() != loaded.network.npus())
    throw Error(path + ": the algorithm is for " +
                std::to_string(loaded.algorithm->collective().topology_npus()) +
                " NPUs but the topology has " + std::to_string(loaded.network.npus()));
  return loaded;
}

}  // namespace tacos::cli
