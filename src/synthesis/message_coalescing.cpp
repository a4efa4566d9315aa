#include "message_coalescing.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"

namespace tacos::detail {
namespace {

// Chunks per merged message at most, and rounds: pairs beat longer merges (a longer message
// delays more first chunks) and later rounds gained nothing (docs/quality.md, "Measured choices").
constexpr int kMergeCap = 2;
constexpr int kRounds = 3;

// One round over `algorithm`, whose recorded times are the simulator's (`finish` the last
// arrival): the merged schedule with placeholder times (each merged message at its first part's
// start, ending a serialization later per part added).
Algorithm merge_round(const Algorithm& algorithm, const Topology& topology, Time finish) {
  const auto& transfers = algorithm.transfers();
  const auto n = static_cast<std::int32_t>(transfers.size());
  const auto chunks = static_cast<std::size_t>(algorithm.collective().num_chunks());
  const Bytes chunk_bytes = algorithm.collective().chunk_bytes();

  // The transfer that first brings each chunk to each NPU (the simulator's rule for copies).
  std::vector<std::int32_t> first(static_cast<std::size_t>(topology.npus()) * chunks, -1);
  for (std::int32_t i = 0; i < n; ++i)
    for (ChunkId c : algorithm.chunks(transfers[i])) {
      std::int32_t& f = first[static_cast<std::size_t>(transfers[i].dst) * chunks + c];
      if (f < 0 || transfers[i].end < transfers[f].end) f = i;
    }
  auto arrival_at_source = [&](std::int32_t i, ChunkId c) {
    return first[static_cast<std::size_t>(transfers[i].src) * chunks + c];
  };

  // Each link's messages in start order (the simulator's queue order: start, then index).
  std::vector<std::int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return transfers[a].start < transfers[b].start;
  });
  std::vector<LinkId> link(n);
  for (std::int32_t i = 0; i < n; ++i)
    link[i] = topology.find_link(transfers[i].src, transfers[i].dst);
  std::vector<std::int32_t> next(n, -1), previous(n, -1), last(topology.num_links(), -1);
  for (std::int32_t i : order) {
    if (last[link[i]] >= 0) {
      next[last[link[i]]] = i;
      previous[i] = last[link[i]];
    }
    last[link[i]] = i;
  }

  // Free slack: how much later a transfer's chunks may arrive without making anything wait.
  // A message that uses them may itself be merged into up to kMergeCap - 1 messages before it
  // on its link, so it needs them by the earliest of those starts.
  std::vector<Time> slack(n);
  for (std::int32_t i = 0; i < n; ++i) slack[i] = finish - transfers[i].end;
  for (std::int32_t y = 0; y < n; ++y) {
    std::int32_t earliest = y;
    for (int k = 1; k < kMergeCap && previous[earliest] >= 0; ++k) earliest = previous[earliest];
    const Time needed = transfers[earliest].start;
    for (ChunkId c : algorithm.chunks(transfers[y])) {
      const std::int32_t f = arrival_at_source(y, c);
      if (f >= 0) slack[f] = std::min(slack[f], needed - transfers[f].end);
    }
  }

  // A chunk's serialization per link (a merge adds the part's chunks times this; the simulator
  // re-times the result exactly).
  std::vector<Time> chunk_time(topology.num_links());
  for (LinkId l = 0; l < topology.num_links(); ++l)
    chunk_time[l] = serialization_time(chunk_bytes, topology.link(l).bandwidth_gbps);

  Algorithm merged(algorithm.collective());
  merged.reserve(transfers.size());
  merged.synthesizer = algorithm.synthesizer;
  merged.seed = algorithm.seed;
  merged.link_model = algorithm.link_model;
  std::vector<char> taken(n, 0);
  std::vector<ChunkId> carried;
  for (std::int32_t i : order) {
    if (taken[i]) continue;
    taken[i] = 1;
    const Transfer& head = transfers[i];
    carried.assign(algorithm.chunks(head).begin(), algorithm.chunks(head).end());
    Time end = head.end;
    Time room = slack[i];
    int parts = 1;
    for (std::int32_t j = next[i]; j >= 0 && parts < kMergeCap; j = next[j], ++parts) {
      const Transfer& part = transfers[j];
      const auto part_chunks = algorithm.chunks(part);
      const bool ready = std::all_of(part_chunks.begin(), part_chunks.end(), [&](ChunkId c) {
        const std::int32_t f = arrival_at_source(j, c);
        return f < 0 || transfers[f].end <= head.start;
      });
      const bool repeats = std::any_of(part_chunks.begin(), part_chunks.end(), [&](ChunkId c) {
        return std::find(carried.begin(), carried.end(), c) != carried.end();
      });
      const Time added = chunk_time[link[j]] * part.num_chunks;
      if (!ready || repeats || added > room) break;
      end += added;
      // The part's own chunks now arrive at `end`, no later than before.
      room = std::min(room - added, slack[j] + (part.end - end));
      carried.insert(carried.end(), part_chunks.begin(), part_chunks.end());
      taken[j] = 1;
    }
    merged.add_transfer(head.src, head.dst, head.start, end, carried);
  }
  return merged;
}

}  // namespace

std::optional<Algorithm> coalesce_messages(const Algorithm& copy, const Topology& topology,
                                           LinkModel model) {
  if (model != LinkModel::kTacos || topology.switches() > 0 || copy.has_multicast() ||
      copy.transfers().empty())
    return std::nullopt;
  for (const Transfer& t : copy.transfers())
    if (t.reduce) return std::nullopt;
  if (static_cast<double>(copy.transfers().size()) > kCoalesceMaxTransfers ||
      static_cast<double>(topology.npus()) * copy.collective().num_chunks() > kCoalesceMaxPresence)
    return std::nullopt;

  // The greedy's times are the simulator's already (every transfer as early as its link and
  // data allow); were they not, a merge would only be judged less well: every round is re-timed
  // by the simulator and kept only when it finishes earlier.
  Algorithm current = copy;
  current.collective_time = 0;
  for (const Transfer& t : current.transfers())
    current.collective_time = std::max(current.collective_time, t.end);
  std::optional<Algorithm> best;
  for (int round = 0; round < kRounds; ++round) {
    Algorithm merged = merge_round(current, topology, current.collective_time);
    if (merged.transfers().size() == current.transfers().size()) break;
    const SimulationResult timed = simulate(merged, topology, model);
    if (timed.collective_time >= current.collective_time) break;
    current = with_simulated_times(merged, timed);
    best = current;
  }
  return best;
}

}  // namespace tacos::detail
