#include "tacos/algorithm/algorithm.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace tacos {

void Algorithm::add_transfer(DeviceId src, DeviceId dst, Time start, Time end,
                             std::span<const ChunkId> chunks, bool reduce, std::int32_t multicast) {
  Transfer t;
  t.src = src;
  t.dst = dst;
  t.start = start;
  t.end = end;
  t.first_chunk = static_cast<std::int32_t>(chunk_pool_.size());
  t.num_chunks = static_cast<std::int32_t>(chunks.size());
  t.reduce = reduce;
  t.multicast = multicast;
  if (multicast >= 0) ++multicast_transfers_;
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
  if (!has_multicast()) return;
  std::unordered_map<std::int32_t, std::int32_t> renumber;
  for (Transfer& t : transfers_)
    if (t.multicast >= 0)
      t.multicast = renumber.try_emplace(t.multicast, static_cast<std::int32_t>(renumber.size()))
                        .first->second;
}

std::int32_t Algorithm::multicast_groups() const {
  std::int32_t groups = 0;
  for (const Transfer& t : transfers_) groups = std::max(groups, t.multicast + 1);
  return groups;
}

}  // namespace tacos
