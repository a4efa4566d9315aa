// tacos astra-run DIR: runs a bundle tacos wrote (DIR/astra) through an ASTRA-sim binary and
// prints ASTRA-sim's time beside tacos's. ASTRA-sim exits 0 even when ranks deadlock, so the
// run only counts when every rank printed "sys[R] finished, T cycles" and nothing "[critical]".
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "report.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/chakra.h"

namespace tacos::cli {
namespace {

namespace fs = std::filesystem;

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

bool executable(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

// --astra-sim, else $ASTRA_SIM, else the known binary names on PATH (the congestion-unaware one
// first for multi-dimensional networks, which the congestion-aware backend refuses).
fs::path find_binary(const std::string& given, bool multi_dimensional) {
  if (!given.empty()) {
    if (!executable(given))
      throw Error("astra-run: --astra-sim " + given + " is not an executable file");
    return given;
  }
  if (const char* env = std::getenv("ASTRA_SIM"); env != nullptr && *env != '\0') {
    if (!executable(env))
      throw Error(std::string("astra-run: ASTRA_SIM=") + env + " is not an executable file");
    return env;
  }
  std::vector<std::string> names{"AstraSim_Analytical_Congestion_Aware", "astra_sim",
                                 "AstraSim_Analytical_Congestion_Unaware"};
  if (multi_dimensional) std::swap(names[0], names[2]);
  const char* path_env = std::getenv("PATH");
  std::stringstream dirs(path_env != nullptr ? path_env : "");
  std::vector<std::string> path;
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty()) path.push_back(dir);
  for (const std::string& name : names)
    for (const std::string& dir : path)
      if (executable(fs::path(dir) / name)) return fs::path(dir) / name;
  throw Error(
      "astra-run: no ASTRA-sim binary found: pass --astra-sim PATH, set ASTRA_SIM, or put "
      "AstraSim_Analytical_Congestion_Aware (or astra_sim) on PATH");
}

struct AstraRunCommand {
  std::string dir;
  std::string astra_sim;
  bool json = false;

  void run() const {
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
    std::string network_text;
    {
      std::ifstream in(astra / "network.yml");
      std::stringstream buffer;
      buffer << in.rdbuf();
      network_text = buffer.str();
    }
    std::smatch match;
    const bool multi =
        std::regex_search(network_text, match, std::regex(R"(topology:\s*\[([^\]]*)\])")) &&
        match[1].str().find(',') != std::string::npos;
    const fs::path binary = find_binary(astra_sim, multi);

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

    const std::string command = "cd " + shell_quoted(astra.string()) + " && " +
                                shell_quoted(fs::absolute(binary).string()) +
                                " --workload-configuration=./workload"
                                " --system-configuration=system.json"
                                " --network-configuration=network.yml"
                                " --remote-memory-configuration=mem.json"
                                " --logging-folder=log 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) throw Error("astra-run: cannot start " + binary.string());
    std::string output;
    char buffer[4096];
    std::size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
    const int status = pclose(pipe);
    const int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;

    std::set<int> finished;
    long long astra_ns = 0;
    const std::regex line(R"(sys\[(\d+)\] finished, (\d+) cycles)");
    for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
         it != std::sregex_iterator(); ++it) {
      finished.insert(std::stoi((*it)[1]));
      astra_ns = std::max(astra_ns, std::stoll((*it)[2]));
    }
    const bool critical = output.find("[critical]") != std::string::npos;
    std::vector<int> missing;
    for (int r = 0; r < ranks; ++r)
      if (!finished.count(r)) missing.push_back(r);

    if (json) {
      nlohmann::ordered_json out;
      out["astra_sim"] = binary.string();
      out["ranks"] = ranks;
      out["finished_ranks"] = static_cast<int>(finished.size());
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
  CLI::App* sub = app.add_subcommand(
      "astra-run",
      "Run a bundle written by synthesize --format chakra through ASTRA-sim and compare times");
  sub->add_option("dir", cmd->dir, "The --out directory (or its astra/ folder)")->required();
  sub->add_option(
      "--astra-sim", cmd->astra_sim,
      "ASTRA-sim binary (default: $ASTRA_SIM, else AstraSim_Analytical_Congestion_Aware "
      "or astra_sim on PATH)");
  sub->add_flag("--json", cmd->json, "Print one JSON object");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace tacos::cli
