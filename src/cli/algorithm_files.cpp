#include "algorithm_files.h"

#include <charconv>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>

#include "../common/read_file.h"
#include "tacos/common/error.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/io/msccl_xml.h"
#include "tacos/topology/generators.h"

namespace tacos::cli {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A whole-number attribute of an MSCCL file's <algo> element, read before the topology exists,
// by plain scanning (a regex over a huge root tag overflowed the stack); -1 when absent. Counts
// (ngpus, nchunksperloop) are at most 2^24; byte sizes may be larger (`max`).
long long msccl_root_number(const std::string& path, const std::string& name,
                            long long max = 1LL << 24) {
  const std::string content = detail::read_file(path);
  const std::size_t open = content.find("<algo");
  if (open == std::string::npos) throw Error(path + ": no <algo> element");
  const std::size_t close = content.find('>', open);
  const std::string tag =
      content.substr(open, close == std::string::npos ? std::string::npos : close - open);
  for (std::size_t at = tag.find(name); at != std::string::npos; at = tag.find(name, at + 1)) {
    const bool starts = at > 0 && (tag[at - 1] == ' ' || tag[at - 1] == '\t' ||
                                   tag[at - 1] == '\n' || tag[at - 1] == '\r');
    std::size_t i = at + name.size();
    while (i < tag.size() && tag[i] == ' ') ++i;
    if (!starts || i >= tag.size() || tag[i] != '=') continue;
    ++i;
    while (i < tag.size() && tag[i] == ' ') ++i;
    if (i >= tag.size() || (tag[i] != '"' && tag[i] != '\'')) continue;
    const char quote = tag[i++];
    const std::size_t end = tag.find(quote, i);
    const std::string value = tag.substr(i, end == std::string::npos ? 0 : end - i);
    long long number = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (value.empty() || ec != std::errc() || ptr != value.data() + value.size() || number < 0 ||
        number > max)
      throw Error(path + ": <algo " + name + "=\"" + value.substr(0, 40) +
                  "\">: expected a whole number up to " + std::to_string(max));
    return number;
  }
  return -1;
}

int msccl_ngpus(const std::string& path) {
  const long long ngpus = msccl_root_number(path, "ngpus");
  if (ngpus < 0) throw Error(path + ": the <algo> element has no ngpus attribute");
  return static_cast<int>(ngpus);
}

Topology pick_topology(const TopologyOptions& topology, bool given, int npus, std::string& spec) {
  if (given) {
    spec = topology.topology;
    return topology.load();
  }
  spec = "fc:" + std::to_string(npus);
  // fc:N has N(N-1) links: beyond the generators' link limit, say which default failed.
  try {
    return generate_topology(spec, LinkParams{});
  } catch (const Error& e) {
    throw Error("no --topology given, so the default " + spec + " was tried: " + e.what() +
                "; give --topology");
  }
}

}  // namespace

AlgorithmFormat detect_format(const std::string& path) {
  if (ends_with(path, ".json")) return AlgorithmFormat::kJson;
  if (ends_with(path, ".xml")) return AlgorithmFormat::kMsccl;
  return AlgorithmFormat::kChakra;
}

std::string to_string(AlgorithmFormat format) {
  if (format == AlgorithmFormat::kJson) return "json";
  return format == AlgorithmFormat::kMsccl ? "msccl" : "chakra";
}

LoadedAlgorithm load_algorithm_file(const std::string& path, const TopologyOptions& topology,
                                    bool topology_given, LinkModel model, std::optional<Bytes> size,
                                    bool nominal_size_if_missing) {
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
      // Correctness does not depend on the size: without one (other tools' files, no --size)
      // a nominal size of 1 MiB per MSCCL chunk is used where the caller only checks.
      if (!size && nominal_size_if_missing &&
          msccl_root_number(path, "tacos_size_bytes",
                            std::numeric_limits<std::int64_t>::max() / 4) < 0) {
        const long long chunks = msccl_root_number(path, "nchunksperloop");
        if (chunks > 0) {
          size = (Bytes{1} << 20) * loaded.network.npus() * chunks;
          loaded.nominal_size = true;
        }
      }
      // MSCCL names GPU-to-GPU messages; through switches the reader executes them hop by hop
      // over the switch routes, as the simulator times them.
      loaded.both_calls = msccl_root_number(path, "inplace", 1) == 1 &&
                          msccl_root_number(path, "outofplace", 1) == 1;
      loaded.algorithm = read_msccl_xml(path, loaded.network, model, size);
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
