#pragma once
// What a collective must achieve: its chunks, where each starts and where it must end.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tacos/common/types.h"

namespace tacos {

enum class CollectiveKind {
  kAllGather,
  kReduceScatter,
  kAllReduce,
  kBroadcast,
  kReduce,
  kGather,
  kScatter,
  kAllToAll,
};
inline constexpr CollectiveKind kCollectiveKinds[] = {
    CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kAllReduce,
    CollectiveKind::kBroadcast, CollectiveKind::kReduce,        CollectiveKind::kGather,
    CollectiveKind::kScatter,   CollectiveKind::kAllToAll,
};

CollectiveKind parse_collective_kind(std::string_view text);  // "all-gather", ... else Error
std::string to_string(CollectiveKind kind);
bool is_reduction(CollectiveKind kind);
bool has_root(CollectiveKind kind);

class Collective {
 public:
  Collective() = default;
  // `members` empty means every NPU of the topology, in order. `size` is the collective's whole
  // buffer per NPU (All-Gather: output buffer). Chunk = size / (N*K) (Broadcast/Reduce:
  // size / K), rounded up; size < N*K (less than a byte per chunk), K <= 0, bad members or root
  // throw Error.
  static Collective make(CollectiveKind kind, int topology_npus, Bytes size, int chunks_per_npu,
                         std::vector<NpuId> members = {}, NpuId root = 0);

  CollectiveKind kind() const { return kind_; }
  Bytes size() const { return size_; }
  Bytes chunk_bytes() const { return chunk_bytes_; }
  int chunks_per_npu() const { return chunks_per_npu_; }
  // The chunks one buffer is cut into: K for Broadcast and Reduce, N x K otherwise (the divisor
  // of chunk_bytes; All-to-All's buffer is one NPU's send buffer).
  std::int64_t chunks_per_buffer() const { return chunks_per_buffer_; }
  int num_chunks() const { return static_cast<int>(chunks_.size()); }
  int topology_npus() const { return topology_npus_; }
  // NPUs taking part, ascending.
  const std::vector<NpuId>& members() const { return members_; }
  int num_members() const { return static_cast<int>(members_.size()); }
  NpuId root() const { return root_; }
  // Position of an NPU in members(), or -1.
  int member_index(NpuId npu) const;

  // NPUs holding the chunk at the start (for reductions: its contributors) and NPUs that must
  // hold it at the end (for reductions: reduced over every contributor). Views into members().
  std::span<const NpuId> sources(ChunkId chunk) const;
  std::span<const NpuId> destinations(ChunkId chunk) const;

 private:
  struct ChunkSpan {
    int src_offset, src_count, dst_offset, dst_count;
  };
  CollectiveKind kind_ = CollectiveKind::kAllGather;
  Bytes size_ = 0;
  Bytes chunk_bytes_ = 0;
  int chunks_per_npu_ = 1;
  std::int64_t chunks_per_buffer_ = 1;
  int topology_npus_ = 0;
  NpuId root_ = 0;
  std::vector<NpuId> members_;
  std::vector<int> member_index_;  // topology NPU -> position in members_ or -1
  std::vector<ChunkSpan> chunks_;
};

}  // namespace tacos
