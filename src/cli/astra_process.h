#pragma once
// Running an ASTRA-sim binary on a bundle and reading what it printed. ASTRA-sim exits 0 even
// when ranks deadlock, so a run only counts when every rank printed "sys[R] finished, T cycles"
// and nothing "[critical]".
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace tacos::cli {

// --astra-sim, else $ASTRA_SIM, else the known binary names on PATH (the congestion-unaware one
// first for multi-dimensional networks, which the congestion-aware backend refuses).
std::filesystem::path find_astra_binary(const std::string& given, bool multi_dimensional);

// True when the ASTRA-sim network YAML lists more than one dimension.
bool multi_dimensional_network(const std::filesystem::path& network_yml);

struct AstraRun {
  std::string output;
  int exit_code = 0;
  bool critical = false;
  std::map<int, long long> finished_ns;  // rank -> "finished, T cycles" (ns)
  // Per rank, from ASTRA-sim's statistics lines (ns; absent when not printed).
  std::map<int, long long> wall_ns, gpu_ns, comm_ns;
  // The ranks 0..ranks-1 that never printed "finished".
  std::vector<int> unfinished(int ranks) const;
  long long max_finished_ns() const;
};

// Runs `binary` in `dir` with --workload-configuration=WORKLOAD, --system-configuration=SYSTEM,
// network.yml, mem.json and `extra` arguments; logs go to dir/LOG.
AstraRun run_astra(const std::filesystem::path& binary, const std::filesystem::path& dir,
                   const std::string& workload, const std::string& system, const std::string& log,
                   const std::string& extra = "");

}  // namespace tacos::cli
