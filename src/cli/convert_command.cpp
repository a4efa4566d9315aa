// tacos convert IN OUT: between tacos JSON, MSCCL-IR XML and Chakra ET.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "algorithm_files.h"
#include "algorithm_outputs.h"
#include "commands.h"
#include "common_options.h"
#include "msccl_options.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/io/msccl_xml.h"

namespace tacos::cli {
namespace {

struct ConvertCommand {
  std::string in;
  std::string out;
  TopologyOptions topology;
  bool topology_given = false;
  std::string link_model = "tacos";
  std::string size;
  MscclOptions msccl;

  void run() const {
    const AlgorithmFormat target = detect_format(out);
    const MscclWriteOptions msccl_options = msccl.get();
    if (const std::string flag = msccl.given(); !flag.empty() && target != AlgorithmFormat::kMsccl)
      throw Error(flag + " needs an .xml OUT (it shapes the MSCCL file only)");
    const LinkModel model = parse_link_model(link_model);
    const std::optional<Bytes> bytes =
        size.empty() ? std::nullopt : std::optional(parse_size(size));
    const LoadedAlgorithm loaded = load_algorithm_file(in, topology, topology_given, model, bytes);
    if (!loaded.algorithm)
      throw Error("convert: " + in +
                  ": chunk identity is unknown (not written by tacos), so it cannot be turned "
                  "into another format");
    switch (target) {
      case AlgorithmFormat::kJson:
        write_algorithm_json(*loaded.algorithm, out);
        break;
      case AlgorithmFormat::kMsccl:
        write_msccl_xml(*loaded.algorithm, loaded.network, out,
                        std::filesystem::path(out).stem().string(), msccl_options);
        break;
      case AlgorithmFormat::kChakra:
        write_chakra(*loaded.algorithm, loaded.network, out);
        break;
    }
    std::printf("wrote %s (%s, %zu transfers)\n", out.c_str(), to_string(target).c_str(),
                loaded.algorithm->transfers().size());
    if (target == AlgorithmFormat::kMsccl)
      note_replay(msccl_replay(*loaded.algorithm, loaded.network, loaded.algorithm->link_model, out,
                               loaded.algorithm->collective_time),
                  out, loaded.algorithm->collective_time);
    if (target == AlgorithmFormat::kChakra)
      note_replay(chakra_replay(*loaded.algorithm, loaded.network, loaded.algorithm->link_model,
                                out, "chakra"),
                  (std::filesystem::path(out) / "chakra").string(),
                  loaded.algorithm->collective_time);
  }
};

}  // namespace

void add_convert_command(CLI::App& app) {
  auto cmd = std::make_shared<ConvertCommand>();
  CLI::App* sub = add_command(
      app, cmd, "convert",
      "Convert an algorithm: IN and OUT are .json (tacos), .xml (MSCCL-IR) or a directory "
      "(Chakra ET: OUT/chakra/tacos.RANK.et and OUT/astra/)");
  sub->add_option("IN", cmd->in, "Input algorithm file or Chakra prefix/directory")->required();
  sub->add_option("OUT", cmd->out, "Output file (.json, .xml) or directory (Chakra)")->required();
  cmd->topology.add_optional_to(
      *sub, cmd->topology_given,
      "Topology the algorithm runs on; default: fully connected among its NPUs");
  sub->add_option("--link-model", cmd->link_model, "tacos or astra (times of read files)")
      ->capture_default_str();
  sub->add_option("--size", cmd->size, "Collective size for input files that carry none");
  cmd->msccl.add_to(*sub);
}

}  // namespace tacos::cli
