// `tacos visualize`: an algorithm file + its topology -> an SVG picture or a standalone HTML page.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "algorithm_files.h"
#include "commands.h"
#include "common_options.h"
#include "tacos/common/atomic_file.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/io/svg.h"
#include "tacos/topology/generators.h"

namespace tacos::cli {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  if (text.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    char ch = text[text.size() - suffix.size() + i];
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    if (ch != suffix[i]) return false;
  }
  return true;
}

struct VisualizeCommand {
  TopologyOptions topology;
  bool topology_given = false;
  std::string algorithm_file;
  std::string out;
  std::string link_model = "tacos";
  std::string size;

  void run() const {
    // Check the cheap things first so nothing is read or written for a bad --out.
    const bool html = ends_with(out, ".html") || ends_with(out, ".htm");
    if (!html && !ends_with(out, ".svg"))
      throw Error("--out: expected a file name ending in .svg or .html, got '" + out + "'");
    const std::optional<Bytes> size_bytes =
        size.empty() ? std::nullopt : std::optional<Bytes>(parse_size(size));
    const LoadedAlgorithm loaded = load_algorithm_file(algorithm_file, topology, topology_given,
                                                       parse_link_model(link_model), size_bytes);
    if (!loaded.algorithm)
      throw Error("visualize: " + algorithm_file +
                  ": chunk identity is unknown (not a tacos-written Chakra set), nothing to draw");
    const Algorithm& algorithm = *loaded.algorithm;
    const Topology& network = loaded.network;
    const std::string svg = algorithm_svg(algorithm, network);
    const std::string title =
        "tacos " + to_string(algorithm.collective().kind()) + " on " + network.name();
    write_file_atomically(out, html ? wrap_html(svg, title) : svg);
    Time collective_time = algorithm.collective_time;
    if (collective_time <= 0)
      for (const Transfer& t : algorithm.transfers())
        collective_time = std::max(collective_time, t.end);
    const std::size_t transfers = algorithm.transfers().size();
    const std::string drawn = transfers > static_cast<std::size_t>(kSvgMaxTransfers)
                                  ? " (first " + std::to_string(kSvgMaxTransfers) + " drawn)"
                                  : std::string();
    std::printf("wrote %s: %s on %s, %zu transfers%s, collective time %s us\n", out.c_str(),
                to_string(algorithm.collective().kind()).c_str(), network.name().c_str(), transfers,
                drawn.c_str(), format_micros(collective_time).c_str());
  }
};

}  // namespace

void add_visualize_command(CLI::App& app) {
  auto cmd = std::make_shared<VisualizeCommand>();
  CLI::App* sub = add_command(
      app, cmd, "visualize",
      "Draw an algorithm: a timeline of transfers per link with utilization, and for up to 16 "
      "NPUs its time-expanded network (SVG, or HTML embedding the SVG)");
  sub->add_option("--algorithm", cmd->algorithm_file,
                  "Algorithm file: tacos JSON, MSCCL-IR XML or a tacos Chakra ET prefix/folder")
      ->required();
  cmd->topology.add_optional_to(
      *sub, cmd->topology_given,
      "The topology the algorithm was made for (default: fully connected, as simulate)");
  sub->add_option("--link-model", cmd->link_model,
                  "How MSCCL XML and Chakra files are timed: tacos or astra")
      ->capture_default_str();
  sub->add_option("--size", cmd->size, "Collective size, for files that carry none");
  sub->add_option("--out", cmd->out, "Output picture: FILE.svg or FILE.html")->required();
  sub->footer("Generators:\n" + generator_help());
}

}  // namespace tacos::cli
