// The ring baseline (baselines.h): NCCL-style rings over the ring order of the members.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tacos/synthesis/baselines.h"

namespace tacos::detail {

std::vector<std::vector<int>> ring_channels(const Topology& topology, const Collective& collective,
                                            const std::vector<int>& ring, bool through_switches,
                                            bool reversed) {
  const int n = collective.num_members();
  const auto& members = collective.members();
  std::vector<std::vector<int>> rings;
  // A DGX-style cluster (8 GPUs per NVSwitch domain, NIC g of each node on rail g, every NPU in
  // the collective, an even node count): NCCL's rail rings. Ring c runs through node 0 from GPU
  // c up to GPU c-1, crosses rail c-1, runs down node 1 from c-1 to c, crosses rail c, and so
  // on, so the 8 rings use every rail once each way.
  constexpr int kGpus = 8;
  const int nodes = n / kGpus;
  auto linked = [&](int a, int b) { return topology.find_link(members[a], members[b]) >= 0; };
  bool rails = n == topology.npus() && n % kGpus == 0 && nodes >= 2 && nodes % 2 == 0 &&
               collective.chunks_per_npu() >= kGpus;
  if (rails) {
    for (int c = 0; c < kGpus && rails; ++c) {
      std::vector<int> order;
      for (int node = 0; node < nodes; ++node)
        for (int i = 0; i < kGpus; ++i) {
          const int gpu = node % 2 == 0 ? (c + i) % kGpus : ((c - 1 - i) % kGpus + kGpus) % kGpus;
          order.push_back(node * kGpus + gpu);
        }
      for (int i = 0; i < n && rails; ++i) rails = linked(order[i], order[(i + 1) % n]);
      rings.push_back(std::move(order));
    }
    if (!rails) rings.clear();
  }
  if (rings.empty()) rings.push_back(ring);
  // Both directions where every ring link has its reverse: half the pieces each way. Not
  // through switches: a full-duplex port already carries the ring both ways at once.
  if (!reversed || through_switches) return rings;
  const std::size_t forward = rings.size();
  for (std::size_t r = 0; r < forward; ++r) {
    bool reverse = n > 2 && static_cast<int>(2 * rings.size()) <= collective.chunks_per_npu();
    for (int i = 0; i < n && reverse; ++i) reverse = linked(rings[r][(i + 1) % n], rings[r][i]);
    if (!reverse) continue;
    rings.emplace_back(rings[r].rbegin(), rings[r].rend());
  }
  return rings;
}

Algorithm ring_baseline(const Topology& topology, const Topology& timing,
                        const Collective& collective, LinkModel model) {
  const int n = collective.num_members();
  const int k_count = collective.chunks_per_npu();
  const auto& members = collective.members();
  std::vector<int> ring = ring_order(topology, collective);  // member indices
  const CollectiveKind kind = collective.kind();
  if (has_root(kind)) {
    // Rotate so that the root comes first.
    const int root = collective.member_index(collective.root());
    std::size_t at = 0;
    while (ring[at] != root) ++at;
    std::rotate(ring.begin(), ring.begin() + static_cast<std::ptrdiff_t>(at), ring.end());
  }
  auto npu = [&](int position) { return members[ring[((position % n) + n) % n]]; };
  auto member = [&](int position) { return ring[((position % n) + n) % n]; };
  LogicalSchedule schedule(topology, timing, collective);

  // Ring reduce-scatter (chunk of member P[b], piece k, starts at P[b+1] and ends at P[b]) and
  // all-gather (from P[a] round to P[a-1]), NCCL's channels: the pieces are spread over the
  // rings (rail rings of a DGX cluster, each turned both ways where the links run both ways)
  // and, within a ring, pipelined: hop h of every piece before hop h + 1 of any, so a link
  // never waits for a piece while the next one is ready.
  const std::vector<std::vector<int>> channels =
      ring_channels(topology, collective, ring, timing.switches() > 0);
  const int channel_count = static_cast<int>(channels.size());
  auto pieces_of = [&](int channel) {
    std::vector<int> pieces;
    for (int k = channel; k < k_count; k += channel_count) pieces.push_back(k);
    return pieces;
  };
  auto on = [&](const std::vector<int>& order, int position) {
    return order[((position % n) + n) % n];
  };
  // One phase over every channel: the piece of the member at position p travels from position
  // p + first to p + first + n - 2 (Reduce-Scatter: first = 1, ending at p; All-Gather: 0).
  auto ring_phase = [&](std::int64_t base, int first, bool reduce) {
    std::int64_t end = base;
    for (int c = 0; c < channel_count; ++c) {
      const auto pieces = pieces_of(c);
      const auto& order = channels[c];
      const auto count = static_cast<std::int64_t>(pieces.size());
      for (std::int64_t q = 0; q < count; ++q)
        for (int p = 0; p < n; ++p)
          for (int h = 0; h + 1 < n; ++h)
            schedule.send(members[on(order, p + first + h)], members[on(order, p + first + h + 1)],
                          base + h * count + q, on(order, p) * k_count + pieces[q], reduce);
      end = std::max(end, base + count * (n - 1));
    }
    return end;
  };
  auto reduce_scatter = [&](std::int64_t base) { return ring_phase(base, 1, true); };
  auto all_gather = [&](std::int64_t base) { return ring_phase(base, 0, false); };

  if (run_phases(kind, all_gather, reduce_scatter)) return schedule.build("ring", model);
  switch (kind) {
    case CollectiveKind::kAllGather:  // run_phases above
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllReduce:
      break;
    case CollectiveKind::kBroadcast:
      // Pipeline from the root P[0] along the ring: chunk k leaves P[h] at step k + h.
      for (int k = 0; k < k_count; ++k)
        for (int h = 0; h + 1 < n; ++h) schedule.send(npu(h), npu(h + 1), k + h, k);
      break;
    case CollectiveKind::kReduce:
      // Pipeline along the ring ending at the root: P[1] -> P[2] -> ... -> P[N-1] -> P[0].
      for (int k = 0; k < k_count; ++k)
        for (int h = 0; h + 1 < n; ++h)
          schedule.send(npu(1 + h), npu(2 + h), k + h, k, /*reduce=*/true);
      break;
    case CollectiveKind::kGather:
      // P[i]'s chunks travel P[i] -> ... -> P[0]; on each link own chunks first, then those
      // from one further back, and so on.
      for (int i = 1; i < n; ++i)
        for (int k = 0; k < k_count; ++k)
          for (int j = 0; i + j < n; ++j)
            schedule.send(npu(i + j), npu(i + j + 1), std::int64_t{j} * k_count + k,
                          member(i) * k_count + k);
      break;
    case CollectiveKind::kScatter:
      // The root sends the chunks of the farthest NPU first; each NPU passes on the rest.
      for (int i = 1; i < n; ++i)
        for (int k = 0; k < k_count; ++k)
          for (int j = 0; j < i; ++j)
            schedule.send(npu(j), npu(j + 1), std::int64_t{n - 1 - i} * k_count + k + j,
                          member(i) * k_count + k);
      break;
    case CollectiveKind::kAllToAll: {
      // Ring relay: P[a]'s chunks travel round the ring; on its h-th hop (step h) one message
      // per piece carries those still going further, N-1-h destinations' worth.
      // N x N (N - 1) / 2 x K chunk transfers at one hop per message: checked before the
      // messages are collected (at 1,024 NPUs they alone would hold 2 GiB).
      require_transfers_within(static_cast<double>(n) * n * (n - 1) / 2 * k_count,
                               kBaselineTransferBudget,
                               "at least %.0f chunk transfers (one hop per message) > %.0f, the "
                               "baselines' budget");
      std::vector<ChunkId> chunks;
      for (int h = 0; h + 1 < n; ++h)
        for (int k = 0; k < k_count; ++k)
          for (int a = 0; a < n; ++a) {
            chunks.clear();
            for (int d = h + 1; d < n; ++d)
              chunks.push_back((member(a) * n + member(a + d)) * k_count + k);
            schedule.send(npu(a + h), npu(a + h + 1), std::int64_t{h} * k_count + k, chunks);
          }
      break;
    }
  }
  return schedule.build("ring", model);
}

}  // namespace tacos::detail
