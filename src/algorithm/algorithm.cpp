#include "tacos/algorithm/algorithm.h"

#include <algorithm>
#include <numeric>

namespace tacos {

void Algorithm::add_transfer(DeviceId src, DeviceId dst, Time start, Time end,
                             std::span<const ChunkId> chunks, bool reduce) {
  Transfer t;
  t.src = src;
  t.dst = dst;
  t.start = start;
  t.end = end;
  t.first_chunk = static_cast<std::int32_t>(chunk_pool_.size());
  t.num_chunks = static_cast<std::int32_t>(chunks.size());
  t.reduce = reduce;
  chunk_pool_.insert(chunk_pool_.end(), chunks.begin(), chunks.end());
  transfers_.push_back(t);
}

void Algorithm::sort_by_start() {
  std::vector<std::size_t> order(transfers_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Transfer& x = transfers_[a];
    const Transfer& y = transfers_[b];
    if (x.start != y.start) return x.start < y.start;
    if (x.src != y.src) return x.src < y.src;
    return x.dst < y.dst;
  });
  std::vector<Transfer> transfers;
  std::vector<ChunkId> pool;
  transfers.reserve(transfers_.size());
  pool.reserve(chunk_pool_.size());
  for (std::size_t i : order) {
    Transfer t = transfers_[i];
    const auto chunks = this->chunks(t);
    t.first_chunk = static_cast<std::int32_t>(pool.size());
    pool.insert(pool.end(), chunks.begin(), chunks.end());
    transfers.push_back(t);
  }
  transfers_ = std::move(transfers);
  chunk_pool_ = std::move(pool);
}

}  // namespace tacos
