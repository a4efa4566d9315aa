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
      "lower_bound_us bound_ratio store_and_forward_bound_us store_and_forward_ratio "
      "binding_bound binding_bound_us binding_ratio transfers wasted_transfers verified "
      "synthesis_seconds peak_memory_mib out astra_sim chakra_replay msccl_replay");
  return keys;
}

const std::vector<std::string>& compare_row_keys() {
  static const std::vector<std::string> keys = words(
      "algorithm chunks_per_npu collective_time_us algbw_gbps busbw_gbps lower_bound_us "
      "bound_ratio store_and_forward_bound_us store_and_forward_ratio binding_bound "
      "binding_bound_us "
      "binding_ratio verified synthesis_seconds "
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
  json["binding_bound"] = report.binding == BindingBound::kNone
                              ? nlohmann::ordered_json()
                              : nlohmann::ordered_json(to_string(report.binding));
  json["binding_bound_us"] = json_or_null(report.binding_bound_us);
  json["binding_ratio"] = json_or_null(report.binding_ratio);
}

nlohmann::ordered_json& KeyedJson::operator[](const std::string& key) {
  std::size_t i = next_;
  while (i < keys_.size() && keys_[i] != key) ++i;
  if (i == keys_.size())
    throw Error("internal error: report key '" + key + "' is not in its list or out of order");
  next_ = i + 1;
  return object_[key];
}

double peak_memory_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace tacos::cli
