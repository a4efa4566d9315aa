// Replay of an algorithm's own times: links, durations, causality, link occupancy and
// postconditions. Everything works on flat arrays grouped by counting sort (per chunk, per link),
// never on a devices x chunks matrix: a chunk's holders are tracked in one scratch array over the
// devices that is reset after each chunk.
//
// Extending to reductions: the per-chunk pass below keeps, for the chunk at hand, the earliest
// time each device holds it (`arrival`). For partial sums the state per device becomes the set of
// contributors its partial covers (a bitset over the chunk's sources, or a multiset hash), built
// by replaying the chunk's transfers in time order (a reduce transfer adds the sender's set as of
// its start, a copy replaces it); the postcondition then asks for the full set at every
// destination and no contributor counted twice.
#include "tacos/algorithm/verify.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "tacos/collective/collective.h"
#include "tacos/common/units.h"

namespace tacos {
namespace {

constexpr Time kNever = std::numeric_limits<Time>::max();

std::string us(Time ps) { return format_micros(ps) + " us"; }

std::string link_name(const Topology& topology, LinkId id) {
  const Link& l = topology.link(id);
  return std::to_string(l.src) + " -> " + std::to_string(l.dst);
}

}  // namespace

std::string describe_device(const Topology& topology, DeviceId device) {
  return (topology.is_switch(device) ? "switch " : "NPU ") + std::to_string(device);
}

std::string describe_transfer(const Algorithm& algorithm, std::size_t index) {
  const Transfer& t = algorithm.transfers()[index];
  const auto chunks = algorithm.chunks(t);
  std::string text = "transfer " + std::to_string(index) + " (" + std::to_string(t.src) + " -> " +
                     std::to_string(t.dst) + ", ";
  if (chunks.empty()) return text + "no chunks)";
  constexpr std::size_t kShown = 4;
  text += chunks.size() == 1 ? "chunk " : "chunks ";
  for (std::size_t i = 0; i < chunks.size() && i < kShown; ++i)
    text += (i ? ", " : "") + std::to_string(chunks[i]);
  if (chunks.size() > kShown) text += ", ... (" + std::to_string(chunks.size()) + " chunks)";
  return text + ")";
}

VerifyResult verify_algorithm(const Algorithm& algorithm, const Topology& topology,
                              LinkModel model) {
  VerifyResult result;
  const auto& transfers = algorithm.transfers();
  const Collective& collective = algorithm.collective();
  const std::size_t num_transfers = transfers.size();
  for (const Transfer& t : transfers)
    result.collective_time = std::max(result.collective_time, t.end);
  auto fail = [&](std::string message) {
    result.ok = false;
    result.error = std::move(message);
    return result;
  };

  if (collective.topology_npus() != topology.npus())
    return fail("the algorithm's collective is for a topology of " +
                std::to_string(collective.topology_npus()) + " NPUs but the topology has " +
                std::to_string(topology.npus()));
  if (is_reduction(collective.kind()))
    return fail("verifying reduction collectives (" + to_string(collective.kind()) +
                ") is not supported yet");
  if (num_transfers > std::numeric_limits<std::uint32_t>::max())
    return fail("too many transfers to verify (" + std::to_string(num_transfers) + ")");

  const int num_chunks = collective.num_chunks();
  const int devices = topology.devices();

  // Serialization of one chunk per link (most messages carry one chunk).
  std::vector<Time> single_chunk_ser(topology.num_links());
  for (LinkId l = 0; l < topology.num_links(); ++l)
    single_chunk_ser[l] =
        serialization_time(collective.chunk_bytes(), topology.link(l).bandwidth_gbps);
  auto serialization = [&](const Transfer& t, LinkId l) {
    return t.num_chunks == 1
               ? single_chunk_ser[l]
               : serialization_time(algorithm.transfer_bytes(t), topology.link(l).bandwidth_gbps);
  };

  // 1. Each transfer on its own, in index order.
  std::vector<LinkId> link_of(num_transfers);
  for (std::size_t i = 0; i < num_transfers; ++i) {
    const Transfer& t = transfers[i];
    for (DeviceId d : {t.src, t.dst})
      if (d < 0 || d >= devices)
        return fail(describe_transfer(algorithm, i) + ": device " + std::to_string(d) +
                    " is not in the topology (devices 0.." + std::to_string(devices - 1) + ")");
    const LinkId link = topology.find_link(t.src, t.dst);
    if (link < 0)
      return fail(describe_transfer(algorithm, i) + ": the topology has no link " +
                  std::to_string(t.src) + " -> " + std::to_string(t.dst));
    link_of[i] = link;
    const auto chunks = algorithm.chunks(t);
    if (chunks.empty()) return fail(describe_transfer(algorithm, i) + " carries no chunks");
    for (ChunkId c : chunks)
      if (c < 0 || c >= num_chunks)
        return fail(describe_transfer(algorithm, i) + ": chunk " + std::to_string(c) +
                    " is not one of the collective's chunks 0.." + std::to_string(num_chunks - 1));
    if (t.reduce)
      return fail(describe_transfer(algorithm, i) +
                  " is a reduction; verifying partial sums is not supported yet");
    if (t.start < 0)
      return fail(describe_transfer(algorithm, i) + " starts at a negative time (" +
                  std::to_string(t.start) + " ps)");
    const Bytes bytes = algorithm.transfer_bytes(t);
    const Time needed = topology.link(link).latency_ps + serialization(t, link);
    if (t.end < t.start || t.end - t.start < needed)
      return fail(describe_transfer(algorithm, i) + " lasts " + us(t.end - t.start) + " (" +
                  std::to_string(t.end - t.start) + " ps) but link " + link_name(topology, link) +
                  " needs " + us(needed) + " (" + std::to_string(needed) + " ps) for " +
                  std::to_string(bytes) + " bytes");
  }

  // 2. Per chunk: the transfers carrying it, in index order.
  std::vector<std::int64_t> chunk_offsets(static_cast<std::size_t>(num_chunks) + 1, 0);
  for (const Transfer& t : transfers)
    for (ChunkId c : algorithm.chunks(t)) ++chunk_offsets[c + 1];
  for (int c = 0; c < num_chunks; ++c) chunk_offsets[c + 1] += chunk_offsets[c];
  std::vector<std::uint32_t> by_chunk(static_cast<std::size_t>(chunk_offsets[num_chunks]));
  {
    std::vector<std::int64_t> fill(chunk_offsets.begin(), chunk_offsets.end() - 1);
    for (std::size_t i = 0; i < num_transfers; ++i)
      for (ChunkId c : algorithm.chunks(transfers[i])) {
        if (fill[c] > chunk_offsets[c] && by_chunk[fill[c] - 1] == i)
          return fail(describe_transfer(algorithm, i) + " carries chunk " + std::to_string(c) +
                      " twice");
        by_chunk[fill[c]++] = static_cast<std::uint32_t>(i);
      }
  }

  // Causality and postconditions, one chunk at a time. arrival[d]: earliest time device d holds
  // the chunk (0 at its sources), kNever when it never does.
  std::vector<Time> arrival(devices, kNever);
  std::vector<DeviceId> touched;
  std::size_t causal_index = num_transfers;  // lowest violating transfer so far
  std::string causal_error;
  std::string missing_error;  // first chunk (lowest id) with a destination that never gets it
  for (ChunkId c = 0; c < num_chunks; ++c) {
    const std::uint32_t* begin = by_chunk.data() + chunk_offsets[c];
    const std::uint32_t* end = by_chunk.data() + chunk_offsets[c + 1];
    auto hold = [&](DeviceId d, Time when) {
      if (arrival[d] == kNever) touched.push_back(d);
      arrival[d] = std::min(arrival[d], when);
    };
    for (const std::uint32_t* p = begin; p != end; ++p) hold(transfers[*p].dst, transfers[*p].end);
    for (NpuId s : collective.sources(c)) hold(s, 0);
    for (const std::uint32_t* p = begin; p != end && *p < causal_index; ++p) {
      const Transfer& t = transfers[*p];
      const Time at = arrival[t.src];
      if (at <= t.start) continue;
      causal_index = *p;
      causal_error =
          describe_transfer(algorithm, *p) + " starts at " + us(t.start) + " but chunk " +
          std::to_string(c) +
          (at == kNever ? " never reaches " + describe_device(topology, t.src)
                        : " reaches " + describe_device(topology, t.src) + " only at " + us(at));
      break;
    }
    if (missing_error.empty())
      for (NpuId d : collective.destinations(c))
        if (arrival[d] == kNever) {
          missing_error = "chunk " + std::to_string(c) + " never reaches " +
                          describe_device(topology, d) + ", one of its destinations";
          break;
        }
    for (DeviceId d : touched) arrival[d] = kNever;
    touched.clear();
  }
  if (!causal_error.empty()) return fail(causal_error);
  by_chunk = {};

  // 3. Per link, transfers by (start, index): none may start while an earlier one keeps the
  // link busy (tacos: until its end; astra: until its bytes are serialized).
  std::vector<std::int64_t> link_offsets(static_cast<std::size_t>(topology.num_links()) + 1, 0);
  for (LinkId l : link_of) ++link_offsets[l + 1];
  for (LinkId l = 0; l < topology.num_links(); ++l) link_offsets[l + 1] += link_offsets[l];
  // (start, index) pairs, so that sorting reads memory in sequence; usually already sorted.
  std::vector<std::pair<Time, std::uint32_t>> by_link(num_transfers);
  {
    std::vector<std::int64_t> fill(link_offsets.begin(), link_offsets.end() - 1);
    for (std::size_t i = 0; i < num_transfers; ++i)
      by_link[fill[link_of[i]]++] = {transfers[i].start, static_cast<std::uint32_t>(i)};
  }
  auto busy_until = [&](std::uint32_t i) {
    const Transfer& t = transfers[i];
    if (model == LinkModel::kTacos) return t.end;
    return t.start + serialization(t, link_of[i]);
  };
  bool conflict = false;
  Time conflict_time = 0;
  std::string conflict_error;
  for (LinkId l = 0; l < topology.num_links(); ++l) {
    const auto begin = by_link.begin() + link_offsets[l];
    const auto end = by_link.begin() + link_offsets[l + 1];
    if (!std::is_sorted(begin, end)) std::sort(begin, end);
    Time busy = std::numeric_limits<Time>::min();
    std::uint32_t holder = 0;
    for (auto it = begin; it != end; ++it) {
      const std::uint32_t i = it->second;
      const Transfer& t = transfers[i];
      if (t.start < busy) {
        if (!conflict || t.start < conflict_time) {
          conflict = true;
          conflict_time = t.start;
          conflict_error = "link " + link_name(topology, l) +
                           " carries two transfers at once: " + describe_transfer(algorithm, i) +
                           " starts at " + us(t.start) + " while " +
                           describe_transfer(algorithm, holder) + " keeps it busy until " +
                           us(busy);
        }
        break;
      }
      const Time until = busy_until(i);
      if (until > busy) {
        busy = until;
        holder = i;
      }
    }
  }
  if (conflict) return fail(conflict_error);
  if (!missing_error.empty()) return fail(missing_error);

  result.ok = true;
  return result;
}

}  // namespace tacos
