#include "report.h"

#include <sys/resource.h>

#include <algorithm>
#include <string_view>

#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos::cli {

namespace {

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> list;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find(' ', begin), text.size());
    if (end > begin) list.emplace_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return list;
}

}  // namespace

const std::vector<std::string>& synthesize_keys() {
  static const std::vector<std::string> keys = words(
      "topology npus links collective npus_in_collective root all_reduce_mode size_bytes "
      "chunks_per_npu chunk_bytes auto_stopped algorithm portfolio_winner portfolio_skipped "
      "link_model seed trials collective_time_us greedy_time_us algbw_gbps busbw_gbps "
      "lower_bound_us bound_ratio store_and_forward_bound_us store_and_forward_ratio transfers "
      "wasted_transfers verified synthesis_seconds peak_memory_mib out astra_sim chakra_replay "
      "msccl_replay");
  return keys;
}

const std::vector<std::string>& compare_row_keys() {
  static const std::vector<std::string> keys = words(
      "algorithm chunks_per_npu collective_time_us algbw_gbps busbw_gbps lower_bound_us "
      "bound_ratio store_and_forward_bound_us store_and_forward_ratio verified synthesis_seconds "
      "skipped_reason portfolio_winner greedy_time_us");
  return keys;
}

void put_report(KeyedJson& json, const Report& report) {
  json["algbw_gbps"] = report.algbw_gbps;
  json["busbw_gbps"] = report.busbw_gbps;
  json["lower_bound_us"] = json_or_null(report.lower_bound_us);
  json["bound_ratio"] = json_or_null(report.bound_ratio);
  json["store_and_forward_bound_us"] = json_or_null(report.store_and_forward_bound_us);
  json["store_and_forward_ratio"] = json_or_null(report.store_and_forward_ratio);
}

nlohmann::ordered_json& KeyedJson::operator[](const std::string& key) {
  std::size_t i = next_;
  while (i < keys_.size() && keys_[i] != key) ++i;
  if (i == keys_.size())
    throw Error("internal error: report key '" + key + "' is not in its list or out of order");
  next_ = i + 1;
  return object_[key];
}

std::optional<LowerBound> bound_if_affordable(const Topology& full, const Topology& network,
                                              const Collective& collective) {
  if (full.npus() > kBoundNpuLimit) return std::nullopt;
  LowerBound bound = compute_lower_bound(full, collective);
  if (network.switches() == 0) bound.store_and_forward_bound_us = 0;
  return bound;
}

double bus_factor(CollectiveKind kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2 * (n - 1) / n;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
      return (n - 1) / n;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      return 1;
  }
  return 1;
}

double algbw_gbps(Bytes size, Time time) {
  if (time <= 0) return 0;
  return static_cast<double>(size) / kNcclBytesPerGB / (static_cast<double>(time) * 1e-12);
}

Report make_report(const AlgorithmRun& run, const Collective& collective,
                   const std::optional<LowerBound>& bound) {
  return make_report(run.result.collective_time, collective, bound,
                     run.result.algorithm.link_model);
}

Report make_report(Time time, const Collective& collective, const std::optional<LowerBound>& bound,
                   LinkModel model) {
  Report report;
  report.algbw_gbps = algbw_gbps(collective.size(), time);
  report.busbw_gbps = report.algbw_gbps * bus_factor(collective.kind(), collective.num_members());
  if (bound) {
    report.lower_bound_us = bound->lower_bound_us;
    if (bound->lower_bound_us > 0) report.bound_ratio = to_micros(time) / bound->lower_bound_us;
    if (model == LinkModel::kTacos && bound->store_and_forward_bound_us > 0) {
      report.store_and_forward_bound_us = bound->store_and_forward_bound_us;
      report.store_and_forward_ratio = to_micros(time) / bound->store_and_forward_bound_us;
    }
  }
  return report;
}

double peak_memory_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace tacos::cli
