#pragma once
// The one in-memory schedule every producer and consumer meets at: a list of messages.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tacos/collective/collective.h"
#include "tacos/common/link_model.h"
#include "tacos/common/types.h"

namespace tacos {

// One message over one link: it carries one or more chunks; latency is paid once per message
// and bandwidth for all its bytes. `reduce` marks a partial-sum transfer the receiver reduces.
//
// Multicast (docs/design.md "Switch fabrics"): transfers with the same `multicast` id >= 0 are one
// message copied by a multicast switch: the same sender, the same chunk list and start, never
// reduce, each to its own receiver, every route entering the same multicast switch over the
// same first link. That entry hop (sender -> switch) carries the bytes once; from the switch on
// each copy takes its own route, every out-port a FIFO as for unicast, store-and-forward. -1
// (the default) is an ordinary unicast message. Ids only group: their values carry no order.
struct Transfer {
  DeviceId src = 0;
  DeviceId dst = 0;
  Time start = 0;
  Time end = 0;
  std::int32_t first_chunk = 0;  // into Algorithm::chunk_pool()
  std::int32_t num_chunks = 0;
  bool reduce = false;
  std::int32_t multicast = -1;  // multicast group id, or -1
};

class Algorithm {
 public:
  Algorithm() = default;
  explicit Algorithm(Collective collective) : collective_(std::move(collective)) {}

  const Collective& collective() const { return collective_; }

  void add_transfer(DeviceId src, DeviceId dst, Time start, Time end,
                    std::span<const ChunkId> chunks, bool reduce = false,
                    std::int32_t multicast = -1);
  void add_transfer(DeviceId src, DeviceId dst, Time start, Time end, ChunkId chunk,
                    bool reduce = false, std::int32_t multicast = -1) {
    add_transfer(src, dst, start, end, std::span<const ChunkId>(&chunk, 1), reduce, multicast);
  }
  void reserve(std::size_t transfers) {
    transfers_.reserve(transfers);
    chunk_pool_.reserve(transfers);
  }

  const std::vector<Transfer>& transfers() const { return transfers_; }
  std::span<const ChunkId> chunks(const Transfer& t) const {
    return {chunk_pool_.data() + t.first_chunk, static_cast<std::size_t>(t.num_chunks)};
  }
  const std::vector<ChunkId>& chunk_pool() const { return chunk_pool_; }
  // Bytes a transfer moves: its chunk count x chunk size.
  Bytes transfer_bytes(const Transfer& t) const {
    return static_cast<Bytes>(t.num_chunks) * collective_.chunk_bytes();
  }

  // Sorts transfers by (start, src, dst) so files are canonical; chunk lists follow, and
  // multicast ids are renumbered 0, 1, ... in order of their first transfer.
  void sort_by_start();
  // True when some transfer is part of a multicast group (a count kept by add_transfer: the
  // simulator and verifier ask on every call).
  bool has_multicast() const { return multicast_transfers_ > 0; }
  // One more than the largest multicast id (0 without multicast).
  std::int32_t multicast_groups() const;

  // Provenance, carried into files.
  std::string synthesizer = "tacos";
  std::uint64_t seed = 0;
  LinkModel link_model = LinkModel::kTacos;
  Time collective_time = 0;  // the producer's claim; the simulator recomputes it

 private:
  Collective collective_;
  std::vector<Transfer> transfers_;
  std::vector<ChunkId> chunk_pool_;
  std::int64_t multicast_transfers_ = 0;
};

}  // namespace tacos
