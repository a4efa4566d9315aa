// Running ASTRA-sim (see astra_process.h).
#include "astra_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "../common/read_file.h"
#include "tacos/common/error.h"

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

}  // namespace

fs::path find_astra_binary(const std::string& given, bool multi_dimensional) {
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

bool multi_dimensional_network(const fs::path& network_yml) {
  std::ifstream in(network_yml);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::smatch match;
  return std::regex_search(text, match, std::regex(R"(topology:\s*\[([^\]]*)\])")) &&
         match[1].str().find(',') != std::string::npos;
}

std::vector<int> AstraRun::unfinished(int ranks) const {
  std::vector<int> missing;
  for (int r = 0; r < ranks; ++r)
    if (!finished_ns.count(r)) missing.push_back(r);
  return missing;
}

long long AstraRun::max_finished_ns() const {
  long long most = 0;
  for (const auto& [rank, ns] : finished_ns) most = std::max(most, ns);
  return most;
}

AstraRun run_astra(const fs::path& binary, const fs::path& dir, const std::string& workload,
                   const std::string& system, const std::string& log, const std::string& extra) {
  const std::string command = "cd " + shell_quoted(dir.string()) + " && " +
                              shell_quoted(fs::absolute(binary).string()) +
                              " --workload-configuration=" + shell_quoted(workload) +
                              " --system-configuration=" + shell_quoted(system) +
                              " --network-configuration=network.yml"
                              " --remote-memory-configuration=mem.json"
                              " --logging-folder=" +
                              shell_quoted(log) + (extra.empty() ? "" : " " + extra) + " 2>&1";
  // The log file is appended to: a fresh folder, so it holds this run's lines only.
  std::error_code cleared;
  fs::remove_all(dir / log, cleared);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw Error("astra-run: cannot start " + binary.string());
  AstraRun run;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.output.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.critical = run.output.find("[critical]") != std::string::npos;
  // ASTRA-sim logs through asynchronous loggers: under load the console can miss the last
  // lines at exit, which its log file (flushed at every line) keeps; both are read.
  std::string text = run.output;
  std::error_code ec;
  const fs::path log_file = dir / log / "log.log";
  if (fs::is_regular_file(log_file, ec)) text += "\n" + detail::read_file(log_file.string());
  const std::regex finished(R"(sys\[(\d+)\] finished, (\d+) cycles)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), finished);
       it != std::sregex_iterator(); ++it)
    run.finished_ns[std::stoi((*it)[1])] = std::stoll((*it)[2]);
  const std::regex stat(R"(sys\[(\d+)\], (Wall|GPU|Comm) time: (\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), stat); it != std::sregex_iterator();
       ++it) {
    const std::string kind = (*it)[2];
    auto& into = kind == "Wall" ? run.wall_ns : kind == "GPU" ? run.gpu_ns : run.comm_ns;
    into[std::stoi((*it)[1])] = std::stoll((*it)[3]);
  }
  return run;
}

}  // namespace tacos::cli
