// MSCCL-IR buffer layout and collective names, shared by the writer and the reader (the mapping
// is documented in include/tacos/io/msccl_xml.h).
#include <algorithm>
#include <string>

#include "tacos/common/error.h"
#include "tacos/io/msccl_xml.h"

namespace tacos {

// MSCCL's names are tacos's without the hyphens ("all-gather" -> "allgather"); files also spell
// them with underscores ("all_gather").
std::string msccl_collective_name(CollectiveKind kind) {
  std::string name = to_string(kind);
  std::erase(name, '-');
  return name;
}

std::optional<CollectiveKind> parse_msccl_collective_name(std::string_view text) {
  for (CollectiveKind kind : kCollectiveKinds) {
    std::string underscored = to_string(kind);
    std::replace(underscored.begin(), underscored.end(), '-', '_');
    if (text == msccl_collective_name(kind) || text == underscored) return kind;
  }
  return std::nullopt;
}

MscclLayout::MscclLayout(CollectiveKind kind, int ngpus, int chunks_per_loop, NpuId root,
                         bool in_place)
    : kind_(kind),
      ngpus_(ngpus),
      chunks_per_loop_(chunks_per_loop),
      per_rank_(chunks_per_loop),
      root_(root),
      in_place_(in_place) {
  if (ngpus < 1) throw Error("ngpus must be at least 1, got " + std::to_string(ngpus));
  if (chunks_per_loop < 1)
    throw Error("nchunksperloop must be at least 1, got " + std::to_string(chunks_per_loop));
  if (root < 0 || root >= ngpus)
    throw Error("the root rank " + std::to_string(root) + " is not one of the " +
                std::to_string(ngpus) + " ranks");
  const bool per_rank = kind != CollectiveKind::kBroadcast && kind != CollectiveKind::kReduce &&
                        kind != CollectiveKind::kAllReduce;
  if (per_rank) {
    if (chunks_per_loop % ngpus != 0)
      throw Error("nchunksperloop " + std::to_string(chunks_per_loop) +
                  " is not a multiple of ngpus " + std::to_string(ngpus) + " (" +
                  msccl_collective_name(kind) + " gives every rank the same number of chunks)");
    per_rank_ = chunks_per_loop / ngpus;
  } else if (kind == CollectiveKind::kAllReduce && chunks_per_loop % ngpus == 0) {
    per_rank_ = chunks_per_loop / ngpus;
  }
}

int MscclLayout::input_chunks() const {
  switch (kind_) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kGather:
      return per_rank_;
    default:
      return chunks_per_loop_;
  }
}

int MscclLayout::output_chunks() const {
  switch (kind_) {
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kScatter:
      return per_rank_;
    case CollectiveKind::kAllReduce:
      return in_place_ ? 0 : chunks_per_loop_;
    default:
      return chunks_per_loop_;
  }
}

MscclSlot MscclLayout::canonical(int rank, MscclSlot slot) const {
  if (!in_place_) return slot;
  switch (kind_) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kGather:
      if (slot.buffer == 'i') return {'o', rank * per_rank_ + slot.offset};
      return slot;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kScatter:
      if (slot.buffer == 'o') return {'i', rank * per_rank_ + slot.offset};
      return slot;
    default:
      if (slot.buffer == 'o') return {'i', slot.offset};
      return slot;
  }
}

std::optional<MscclSlot> MscclLayout::input_slot(int rank, int chunk) const {
  const int n = ngpus_, c = per_rank_;
  std::optional<MscclSlot> slot;
  switch (kind_) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kGather:
      if (chunk / c == rank) slot = MscclSlot{'i', chunk % c};
      break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduce:
      slot = MscclSlot{'i', chunk};
      break;
    case CollectiveKind::kAllToAll:
      if (chunk / (n * c) == rank) slot = MscclSlot{'i', ((chunk / c) % n) * c + chunk % c};
      break;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kScatter:
      if (rank == root_) slot = MscclSlot{'i', chunk};
      break;
  }
  if (slot) slot = canonical(rank, *slot);
  return slot;
}

std::optional<MscclSlot> MscclLayout::output_slot(int rank, int chunk) const {
  const int n = ngpus_, c = per_rank_;
  std::optional<MscclSlot> slot;
  switch (kind_) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kBroadcast:
      slot = MscclSlot{'o', chunk};
      break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kScatter:
      if (chunk / c == rank) slot = MscclSlot{'o', chunk % c};
      break;
    case CollectiveKind::kAllToAll:
      if ((chunk / c) % n == rank) slot = MscclSlot{'o', (chunk / (n * c)) * c + chunk % c};
      break;
    case CollectiveKind::kReduce:
    case CollectiveKind::kGather:
      if (rank == root_) slot = MscclSlot{'o', chunk};
      break;
  }
  if (slot) slot = canonical(rank, *slot);
  return slot;
}

int MscclLayout::initial_chunk(int rank, int offset) const {
  const int n = ngpus_, c = per_rank_;
  if (offset < 0 || offset >= input_chunks()) return -1;
  switch (kind_) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kGather:
      return rank * c + offset;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduce:
      return offset;
    case CollectiveKind::kAllToAll:
      return (rank * n + offset / c) * c + offset % c;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kScatter:
      return rank == root_ ? offset : -1;
  }
  return -1;
}

}  // namespace tacos
