#pragma once
// Numbers every command reports about a run: algorithm bandwidth and distance to the bound.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "algorithm_runner.h"
#include "tacos/bounds/lower_bound.h"

namespace tacos::cli {

// Bandwidths in nccl-tests' convention (its doc/PERFORMANCE.md and src/*.cu GetBw): GB/s meaning
// 1e9 B/s, algbw = the collective's size / time (tacos's --size is the buffer nccl-tests counts:
// the output for All-Gather and Gather, the input for Reduce-Scatter, Scatter and All-to-All),
// busbw = algbw x the collective's bus factor. Link bandwidths given as input stay in 2^30 B/s
// (ASTRA-sim's convention).
inline constexpr double kNcclBytesPerGB = 1e9;

// nccl-tests' bus factor for n ranks: All-Reduce 2(n-1)/n; Reduce-Scatter, All-Gather,
// All-to-All, Gather, Scatter (n-1)/n; Broadcast, Reduce 1.
double bus_factor(CollectiveKind kind, int ranks);
// size / time in 1e9 B/s; 0 when time is not positive.
double algbw_gbps(Bytes size, Time time);

struct Report {
  double algbw_gbps = 0;  // size / collective time, GB/s (1e9 B/s, nccl-tests)
  double busbw_gbps = 0;  // algbw x bus_factor, GB/s (1e9 B/s, nccl-tests)
  std::optional<double> lower_bound_us;
  std::optional<double> bound_ratio;  // collective time / lower bound
  // Under the tacos link model where it applies (LowerBound::store_and_forward_bound_us).
  std::optional<double> store_and_forward_bound_us;
  std::optional<double> store_and_forward_ratio;  // collective time / that bound
};

// The exact cut bound costs max-flows; beyond kBoundNpuLimit NPUs only `tacos bound` runs it.
inline constexpr int kBoundNpuLimit = 4096;
// `network`: what the run is timed on; the store-and-forward bound is dropped when it has no
// switch devices (--switch-model unwind: direct links forward nothing).
std::optional<LowerBound> bound_if_affordable(const Topology& full, const Topology& network,
                                              const Collective& collective);

Report make_report(const AlgorithmRun& run, const Collective& collective,
                   const std::optional<LowerBound>& bound);
// `model`: the store-and-forward bound is reported under the tacos link model only.
Report make_report(Time collective_time, const Collective& collective,
                   const std::optional<LowerBound>& bound, LinkModel model);

double peak_memory_mib();

// The text of a --json object. A name the user gave as bytes that are not UTF-8 (a topology or
// file name) is printed with each bad byte as U+FFFD: JSON text must be UTF-8, and one such
// byte must not turn a finished run into an error.
inline std::string json_text(const nlohmann::ordered_json& value) {
  return value.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// The one definition of the reports' keys, in the order they are printed. synthesize_keys():
// every key `tacos synthesize --json` may print (root, all_reduce_mode, auto_stopped, the
// portfolio's and greedy_time_us only for some runs; out, astra_sim, chakra_replay and msccl_replay
// only with
// --out); the sweep's CSV columns and `import tacos` read it. compare_row_keys(): one element
// of `tacos compare --json`'s "results".
const std::vector<std::string>& synthesize_keys();
const std::vector<std::string>& compare_row_keys();

// Builds a report object whose keys must come from `keys`, each after the keys set before it,
// so the printed objects and the lists above cannot drift apart (a key out of place is a bug
// and throws).
class KeyedJson {
 public:
  explicit KeyedJson(const std::vector<std::string>& keys) : keys_(keys) {}
  nlohmann::ordered_json& operator[](const std::string& key);
  nlohmann::ordered_json take() { return std::move(object_); }

 private:
  const std::vector<std::string>& keys_;
  std::size_t next_ = 0;  // keys_[next_..] may still be set
  nlohmann::ordered_json object_ = nlohmann::ordered_json::object();
};

// The report's numbers under their keys: algbw_gbps, busbw_gbps, lower_bound_us, bound_ratio,
// store_and_forward_bound_us, store_and_forward_ratio (in both key lists, in that order).
void put_report(KeyedJson& json, const Report& report);

inline nlohmann::ordered_json json_or_null(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

}  // namespace tacos::cli
