#pragma once
// Numbers every command reports about a run: algorithm bandwidth and distance to the bound.
#include <nlohmann/json.hpp>
#include <optional>

#include "algorithm_runner.h"
#include "tacos/bounds/lower_bound.h"

namespace tacos::cli {

struct Report {
  double algbw_gbps = 0;  // size / collective time, GB/s (2^30 B/s)
  std::optional<double> lower_bound_us;
  std::optional<double> bound_ratio;  // collective time / lower bound
};

// The exact cut bound costs max-flows; beyond kBoundNpuLimit NPUs only `tacos bound` runs it.
inline constexpr int kBoundNpuLimit = 4096;
std::optional<LowerBound> bound_if_affordable(const Topology& full, const Collective& collective);

Report make_report(const AlgorithmRun& run, const Collective& collective,
                   const std::optional<LowerBound>& bound);

double peak_memory_mib();

inline nlohmann::ordered_json json_or_null(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

}  // namespace tacos::cli
