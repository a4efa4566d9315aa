#pragma once
// Per-NPU append-only logs of the chunks each NPU holds, in arrival order. They are the largest
// structure of a big synthesis (every NPU ends up listing every chunk), so entries take 16 bits
// whenever the chunk ids fit.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "tacos/common/types.h"

namespace tacos::detail {

class ChunkLogs {
 public:
  void init(int npus, int chunks) {
    narrow_ = chunks <= std::numeric_limits<std::uint16_t>::max() + 1;
    if (narrow_)
      narrow_logs_.assign(npus, {});
    else
      wide_logs_.assign(npus, {});
  }
  void reserve_each(std::size_t entries) {
    if (narrow_)
      for (auto& log : narrow_logs_) log.reserve(entries);
    else
      for (auto& log : wide_logs_) log.reserve(entries);
  }
  std::uint32_t size(NpuId npu) const {
    return static_cast<std::uint32_t>(narrow_ ? narrow_logs_[npu].size() : wide_logs_[npu].size());
  }
  ChunkId at(NpuId npu, std::uint32_t position) const {
    return narrow_ ? narrow_logs_[npu][position] : wide_logs_[npu][position];
  }
  void push(NpuId npu, ChunkId chunk) {
    if (narrow_)
      narrow_logs_[npu].push_back(static_cast<std::uint16_t>(chunk));
    else
      wide_logs_[npu].push_back(chunk);
  }
  void prefetch(NpuId npu, std::uint32_t position) const {
    if (narrow_) {
      if (position < narrow_logs_[npu].size()) __builtin_prefetch(&narrow_logs_[npu][position]);
    } else if (position < wide_logs_[npu].size()) {
      __builtin_prefetch(&wide_logs_[npu][position]);
    }
  }
  // Reorders one NPU's log (used before anything is read from it).
  template <class Less>
  void stable_sort(NpuId npu, Less less) {
    std::vector<ChunkId> entries(size(npu));
    for (std::uint32_t i = 0; i < entries.size(); ++i) entries[i] = at(npu, i);
    std::stable_sort(entries.begin(), entries.end(), less);
    if (narrow_)
      narrow_logs_[npu].assign(entries.begin(), entries.end());
    else
      wide_logs_[npu] = std::move(entries);
  }

 private:
  bool narrow_ = true;
  std::vector<std::vector<std::uint16_t>> narrow_logs_;
  std::vector<std::vector<ChunkId>> wide_logs_;
};

}  // namespace tacos::detail
