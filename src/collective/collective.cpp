#include "tacos/collective/collective.h"

#include <algorithm>

#include "tacos/common/error.h"

namespace tacos {
namespace {

// 2^24 NPUs (the generators' limit) and 2^24 chunks (256 MiB of chunk descriptions; a synthesis
// keeps a bit per NPU and chunk on top).
constexpr std::int64_t kMaxCollectiveNpus = std::int64_t{1} << 24;
constexpr std::int64_t kMaxChunks = std::int64_t{1} << 24;

struct KindName {
  CollectiveKind kind;
  std::string_view name;
};
constexpr KindName kKindNames[] = {
    {CollectiveKind::kAllGather, "all-gather"}, {CollectiveKind::kReduceScatter, "reduce-scatter"},
    {CollectiveKind::kAllReduce, "all-reduce"}, {CollectiveKind::kBroadcast, "broadcast"},
    {CollectiveKind::kReduce, "reduce"},        {CollectiveKind::kGather, "gather"},
    {CollectiveKind::kScatter, "scatter"},      {CollectiveKind::kAllToAll, "all-to-all"},
};

// Broadcast and Reduce cut the one buffer into K chunks; the others cut each NPU's share into K.
bool whole_buffer_chunks(CollectiveKind kind) {
  return kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce;
}

}  // namespace

CollectiveKind parse_collective_kind(std::string_view text) {
  for (const auto& k : kKindNames)
    if (k.name == text) return k.kind;
  std::string names;
  for (const auto& k : kKindNames) names += (names.empty() ? "" : ", ") + std::string(k.name);
  throw Error("--collective: unknown collective '" + std::string(text) + "' (expected one of " +
              names + ")");
}

std::string to_string(CollectiveKind kind) {
  for (const auto& k : kKindNames)
    if (k.kind == kind) return std::string(k.name);
  return "unknown";
}

bool is_reduction(CollectiveKind kind) {
  return kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kAllReduce ||
         kind == CollectiveKind::kReduce;
}

bool has_root(CollectiveKind kind) {
  return kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce ||
         kind == CollectiveKind::kGather || kind == CollectiveKind::kScatter;
}

Collective Collective::make(CollectiveKind kind, int topology_npus, Bytes size, int chunks_per_npu,
                            std::vector<NpuId> members, NpuId root) {
  if (topology_npus <= 0) throw Error("collective: the topology has no NPUs");
  if (chunks_per_npu <= 0)
    throw Error("--chunks-per-npu: must be at least 1, got " + std::to_string(chunks_per_npu));
  if (size <= 0) throw Error("--size: must be greater than zero");
  // Work and memory grow with the NPU and chunk counts: refuse before allocating anything.
  if (topology_npus > kMaxCollectiveNpus)
    throw Error("collective: " + std::to_string(topology_npus) + " NPUs, more than the " +
                std::to_string(kMaxCollectiveNpus) + " tacos handles");
  {
    const std::int64_t n =
        members.empty() ? topology_npus : static_cast<std::int64_t>(members.size());
    const std::int64_t pairs =
        kind == CollectiveKind::kAllToAll ? n * n : (whole_buffer_chunks(kind) ? 1 : n);
    if (pairs > kMaxChunks / chunks_per_npu)
      throw Error("collective: " + std::to_string(n) + " NPUs with " +
                  std::to_string(chunks_per_npu) + " chunk(s) per NPU make more than the " +
                  std::to_string(kMaxChunks) + " chunks tacos handles (--chunks-per-npu)");
  }
  Collective c;
  c.kind_ = kind;
  c.size_ = size;
  c.chunks_per_npu_ = chunks_per_npu;
  c.topology_npus_ = topology_npus;
  if (members.empty()) {
    members.resize(topology_npus);
    for (NpuId n = 0; n < topology_npus; ++n) members[n] = n;
  }
  std::vector<NpuId> sorted = members;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= topology_npus)
      throw Error("--npus: NPU " + std::to_string(sorted[i]) + " is outside the topology (0.." +
                  std::to_string(topology_npus - 1) + ")");
    if (i > 0 && sorted[i] == sorted[i - 1])
      throw Error("--npus: NPU " + std::to_string(sorted[i]) + " is listed twice");
  }
  if (sorted.size() < 2)
    throw Error("collective: needs at least 2 NPUs, got " + std::to_string(sorted.size()));
  c.members_ = std::move(sorted);
  c.member_index_.assign(topology_npus, -1);
  for (int i = 0; i < c.num_members(); ++i) c.member_index_[c.members_[i]] = i;
  if (has_root(kind)) {
    if (root < 0 || root >= topology_npus || c.member_index_[root] < 0)
      throw Error("--root: NPU " + std::to_string(root) + " is not one of the collective's NPUs");
    c.root_ = root;
  } else {
    c.root_ = -1;
  }

  const int n = c.num_members();
  const int k = chunks_per_npu;
  const Bytes divisor = whole_buffer_chunks(kind) ? k : static_cast<Bytes>(n) * k;
  c.chunks_per_buffer_ = divisor;
  if (size < divisor)
    throw Error("--size: " + std::to_string(size) + " bytes split into " + std::to_string(divisor) +
                " chunks leaves less than one byte per chunk");
  // Rounded up: the schedule moves at least the whole buffer (the last bytes of each NPU's share
  // padded) rather than silently dropping up to divisor - 1 bytes of it.
  c.chunk_bytes_ = size / divisor + (size % divisor != 0 ? 1 : 0);

  const int root_index = c.root_ >= 0 ? c.member_index_[c.root_] : 0;
  auto add = [&](int src_offset, int src_count, int dst_offset, int dst_count) {
    c.chunks_.push_back(ChunkSpan{src_offset, src_count, dst_offset, dst_count});
  };
  switch (kind) {
    case CollectiveKind::kAllGather:
      for (int i = 0; i < n; ++i)
        for (int piece = 0; piece < k; ++piece) add(i, 1, 0, n);
      break;
    case CollectiveKind::kReduceScatter:
      for (int j = 0; j < n; ++j)
        for (int piece = 0; piece < k; ++piece) add(0, n, j, 1);
      break;
    case CollectiveKind::kAllReduce:
      for (int j = 0; j < n; ++j)
        for (int piece = 0; piece < k; ++piece) add(0, n, 0, n);
      break;
    case CollectiveKind::kBroadcast:
      for (int piece = 0; piece < k; ++piece) add(root_index, 1, 0, n);
      break;
    case CollectiveKind::kReduce:
      for (int piece = 0; piece < k; ++piece) add(0, n, root_index, 1);
      break;
    case CollectiveKind::kGather:
      for (int i = 0; i < n; ++i)
        for (int piece = 0; piece < k; ++piece) add(i, 1, root_index, 1);
      break;
    case CollectiveKind::kScatter:
      for (int j = 0; j < n; ++j)
        for (int piece = 0; piece < k; ++piece) add(root_index, 1, j, 1);
      break;
    case CollectiveKind::kAllToAll:
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          for (int piece = 0; piece < k; ++piece) add(i, 1, j, 1);
      break;
  }
  return c;
}

int Collective::member_index(NpuId npu) const {
  if (npu < 0 || npu >= static_cast<NpuId>(member_index_.size())) return -1;
  return member_index_[npu];
}

std::span<const NpuId> Collective::sources(ChunkId chunk) const {
  const ChunkSpan& s = chunks_[chunk];
  return {members_.data() + s.src_offset, static_cast<std::size_t>(s.src_count)};
}

std::span<const NpuId> Collective::destinations(ChunkId chunk) const {
  const ChunkSpan& s = chunks_[chunk];
  return {members_.data() + s.dst_offset, static_cast<std::size_t>(s.dst_count)};
}

}  // namespace tacos
