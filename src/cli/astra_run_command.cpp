// tacos astra-run DIR: runs a bundle tacos wrote (DIR/astra) through an ASTRA-sim binary and
// prints ASTRA-sim's time beside tacos's. ASTRA-sim exits 0 even when ranks deadlock, so the
// run only counts when every rank printed "sys[R] finished, T cycles" and nothing "[critical]".
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "astra_process.h"
#include "astra_run_workload.h"
#include "commands.h"
#include "report.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/chakra.h"

namespace tacos::cli {
namespace {

namespace fs = std::filesystem;

struct AstraRunCommand {
  std::string dir;
  std::string astra_sim;
  bool json = false;
  bool alone = false;

  void run() const {
    if (fs::exists(fs::path(dir) / "workload.json")) {
      run_workload_bundle(dir, astra_sim, json, alone);
      return;
    }
    if (alone) throw Error("astra-run: --alone needs a bundle written by tacos workload");
    fs::path astra = fs::path(dir) / "astra";
    if (!fs::is_directory(astra) && fs::exists(fs::path(dir) / "system.json")) astra = dir;
    for (const char* file : {"system.json", "mem.json"})
      if (!fs::exists(astra / file))
        throw Error("astra-run: " + (astra / file).string() +
                    " not found (expected a directory written by synthesize --format chakra)");
    if (!fs::exists(astra / "network.yml"))
      throw Error("astra-run: " + (astra / "network.yml").string() +
                  " not found: the topology has no ASTRA-sim network file; add one");
    int ranks = 0;
    for (const auto& entry : fs::directory_iterator(astra)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("workload.", 0) == 0 && entry.path().extension() == ".et") ++ranks;
    }
    if (ranks == 0) throw Error("astra-run: no workload.RANK.et in " + astra.string());
    const bool multi = multi_dimensional_network(astra / "network.yml");
    const fs::path binary = find_astra_binary(astra_sim, multi);

    // tacos's own time, from the bundle's ET metadata.
    std::optional<Time> tacos_time;
    const fs::path chakra = astra.parent_path() / "chakra";
    if (fs::is_directory(chakra)) {
      // Best effort: an edited bundle may no longer read as tacos's; ASTRA-sim still runs it.
      try {
        const EtTrace trace = read_chakra(chakra.string());
        if (trace.tacos) tacos_time = trace.tacos->collective_time;
      } catch (const Error& e) {
        std::fprintf(stderr, "astra-run: note: %s (no tacos time to compare)\n", e.what());
      }
    }

    const AstraRun result = run_astra(binary, astra, "./workload", "system.json", "log");
    const int exit_code = result.exit_code;
    const bool critical = result.critical;
    const long long astra_ns = result.max_finished_ns();
    const std::vector<int> missing = result.unfinished(ranks);
    const std::size_t finished_count = result.finished_ns.size();

    if (json) {
      nlohmann::ordered_json out;
      out["astra_sim"] = binary.string();
      out["ranks"] = ranks;
      out["finished_ranks"] = static_cast<int>(finished_count);
      out["unfinished_ranks"] = missing;
      out["critical"] = critical;
      out["exit_code"] = exit_code;
      out["astra_sim_time_us"] = missing.empty() ? nlohmann::ordered_json(astra_ns / 1e3) : nullptr;
      out["tacos_time_us"] = tacos_time ? nlohmann::ordered_json(to_micros(*tacos_time)) : nullptr;
      out["difference"] =
          missing.empty() && tacos_time && *tacos_time > 0
              ? nlohmann::ordered_json(astra_ns * 1e3 / static_cast<double>(*tacos_time) - 1)
              : nullptr;
      std::cout << json_text(out) << std::endl;
    }
    if (critical)
      throw Error("astra-run: ASTRA-sim reported an error ([critical]); see " +
                  (astra / "log").string());
    if (!missing.empty()) {
      std::string names;
      for (std::size_t i = 0; i < missing.size() && i < 16; ++i)
        names += (i ? ", " : "") + std::to_string(missing[i]);
      if (missing.size() > 16) names += ", ...";
      throw Error("astra-run: " + std::to_string(missing.size()) + " of " + std::to_string(ranks) +
                  " ranks never finished (deadlock): " + names);
    }
    if (json) return;
    std::printf("ASTRA-sim (%s): %d ranks finished\n", binary.filename().c_str(), ranks);
    std::printf("  ASTRA-sim time   %.3f us\n", astra_ns / 1e3);
    if (tacos_time)
      std::printf("  tacos time       %s us (difference %+.3f%%)\n",
                  format_micros(*tacos_time).c_str(),
                  (astra_ns * 1e3 / static_cast<double>(*tacos_time) - 1) * 100);
  }
};

}  // namespace

void add_astra_run_command(CLI::App& app) {
  auto cmd = std::make_shared<AstraRunCommand>();
  CLI::App* sub = add_command(
      app, cmd, "astra-run",
      "Run a bundle written by synthesize --format chakra or by workload through ASTRA-sim and "
      "compare times");
  sub->add_option("dir", cmd->dir, "The --out directory (or its astra/ folder)")->required();
  sub->add_option(
      "--astra-sim", cmd->astra_sim,
      "ASTRA-sim binary (default: $ASTRA_SIM, else AstraSim_Analytical_Congestion_Aware "
      "or astra_sim on PATH)");
  sub->add_flag("--json", cmd->json, "Print one JSON object");
  sub->add_flag("--alone", cmd->alone,
                "A workload bundle: also run each distinct collective alone and compare it with "
                "tacos's time");
}

}  // namespace tacos::cli
