#pragma once
// How the commands print a run's report (tacos/synthesis/report.h): its JSON keys.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "algorithm_runner.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/report.h"
#include "tacos/synthesis/request.h"

namespace tacos::cli {

double peak_memory_mib();

// What forwards whole messages in the store-and-forward bound of `network`: its switches, or on
// networks of NPUs alone (Broadcast, Reduce) the NPUs that relay.
inline const char* store_and_forward_relays(const Topology& network) {
  return network.switches() > 0 ? "switches" : "relaying NPUs";
}

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
// store_and_forward_bound_us, store_and_forward_ratio, binding_bound, binding_bound_us,
// binding_ratio (in both key lists, in that order).
void put_report(KeyedJson& json, const Report& report);

// What follows "the TACOS greedy alone" in the reports: `plain` and the time it reached; where
// the portfolio's fastest baseline cut the greedy's K search short (SynthesisRun::greedy_cut_by),
// that the time is its best over the K it finished, or that it finished none.
inline std::string greedy_alone_note(const SynthesisRun& run, const std::string& plain) {
  if (!run.greedy_time && !run.greedy_not_run.empty()) return ": not run, " + run.greedy_not_run;
  if (!run.greedy_time)
    return ": not finished, its only K could not beat " + run.greedy_cut_by + "'s time";
  const std::string time = ": " + format_micros(*run.greedy_time) + " us";
  if (run.greedy_cut_by.empty()) return plain + time;
  return " (at the K it finished; larger K could not beat " + run.greedy_cut_by + ")" + time;
}

inline nlohmann::ordered_json json_or_null(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

}  // namespace tacos::cli
