// `tacos view A [B]`: one or two algorithm files on one topology -> a self-contained HTML viewer.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithm_files.h"
#include "commands.h"
#include "common_options.h"
#include "tacos/common/atomic_file.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/viewer.h"
#include "tacos/simulation/simulator.h"
#include "tacos/topology/generators.h"

namespace tacos::cli {
namespace {

bool ends_with_html(const std::string& path) {
  const auto ext = std::filesystem::path(path).extension().string();
  return ext == ".html" || ext == ".htm";
}

struct ViewCommand {
  std::vector<std::string> files;
  TopologyOptions topology;
  bool topology_given = false;
  std::string out;
  std::string link_model = "tacos";
  std::string size;

  void run() const {
    if (!ends_with_html(out))
      throw Error("--out: expected a file name ending in .html, got '" + out + "'");
    if (files.empty() || files.size() > 2)
      throw Error("view: expected one or two algorithm files, got " + std::to_string(files.size()));
    const LinkModel model = parse_link_model(link_model);
    const std::optional<Bytes> size_bytes =
        size.empty() ? std::nullopt : std::optional<Bytes>(parse_size(size));
    std::vector<LoadedAlgorithm> loaded;
    for (const std::string& file : files) {
      loaded.push_back(load_algorithm_file(file, topology, topology_given, model, size_bytes));
      if (!loaded.back().algorithm)
        throw Error(
            "view: " + file +
            ": chunk identity is unknown (not a tacos-written Chakra set), nothing to show");
    }
    const Topology& network = loaded[0].network;
    if (loaded.size() == 2 && loaded[1].network.npus() != network.npus())
      throw Error("view: " + files[1] + " is for " + std::to_string(loaded[1].network.npus()) +
                  " NPUs, " + files[0] + " for " + std::to_string(network.npus()));
    std::vector<ViewedSchedule> schedules;
    for (std::size_t k = 0; k < loaded.size(); ++k) {
      const Algorithm& algorithm = *loaded[k].algorithm;
      // The schedule's producer names it (tacos JSON records it); the file name tells two
      // schedules of one producer apart.
      std::string label = loaded[k].format == AlgorithmFormat::kJson
                              ? algorithm.synthesizer
                              : std::filesystem::path(files[k]).filename().string();
      if (loaded.size() == 2 &&
          loaded[0].algorithm->synthesizer == loaded[1].algorithm->synthesizer)
        label += " (" + std::filesystem::path(files[k]).filename().string() + ")";
      schedules.push_back({label, &algorithm, simulate(algorithm, network, model)});
    }
    write_file_atomically(out, viewer_html(network, schedules));
    std::printf("wrote %s: %s on %s", out.c_str(),
                to_string(schedules[0].algorithm->collective().kind()).c_str(),
                network.name().c_str());
    for (const ViewedSchedule& s : schedules)
      std::printf(", %s %s us (%zu messages%s)", s.label.c_str(),
                  format_micros(s.simulated.collective_time).c_str(),
                  s.algorithm->transfers().size(),
                  s.algorithm->transfers().size() > kViewerDetailLimit ? ", aggregated" : "");
    if (schedules.size() == 2)
      std::printf(", B / A = %.3fx", static_cast<double>(schedules[1].simulated.collective_time) /
                                         static_cast<double>(std::max<Time>(
                                             1, schedules[0].simulated.collective_time)));
    std::printf("\n");
  }
};

}  // namespace

void add_view_command(CLI::App& app) {
  auto cmd = std::make_shared<ViewCommand>();
  CLI::App* sub = add_command(
      app, cmd, "view",
      "Write an interactive HTML viewer of one algorithm file, or two side by side (A B): "
      "topology, time slider, per-link lanes, per-NPU progress");
  sub->add_option("algorithms", cmd->files,
                  "One or two algorithm files (tacos JSON, MSCCL-IR XML, tacos Chakra ET)")
      ->required()
      ->expected(1, 2);
  cmd->topology.add_optional_to(
      *sub, cmd->topology_given,
      "The topology the algorithms were made for (default: fully connected, as simulate)");
  sub->add_option("--link-model", cmd->link_model, "How the schedules are timed: tacos or astra")
      ->capture_default_str();
  sub->add_option("--size", cmd->size, "Collective size, for files that carry none");
  sub->add_option("--out", cmd->out, "Output page: FILE.html")->required();
  sub->footer("Generators:\n" + generator_help());
}

}  // namespace tacos::cli
