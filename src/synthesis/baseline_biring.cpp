// The bidirectional ring baseline (baselines.h): every piece travels halfway round the ring
// clockwise and halfway counter-clockwise, so it is N/2 hops from its farthest destination
// instead of the ring's N-1.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"

namespace tacos::detail {

Algorithm biring_baseline(const Topology& topology, const Topology& timing,
                          const Collective& collective, LinkModel model) {
  const int n = collective.num_members();
  const int k_count = collective.chunks_per_npu();
  const auto& members = collective.members();
  const std::vector<int> ring = ring_order(topology, collective);  // member indices
  const std::vector<std::vector<int>> channels =
      ring_channels(topology, collective, ring, timing.switches() > 0, /*reversed=*/false);
  const int channel_count = static_cast<int>(channels.size());
  LogicalSchedule schedule(topology, timing, collective);

  // With even N one direction takes the piece one hop further (to the antipode). Alternating
  // that direction by ring position gives every NPU N - 1 sends per piece, and each NPU's last
  // send goes one way or the other by its position; of the two alternations the one whose last
  // sends use the cheapest links is taken (on a fat-tree: not the leaf-crossing ones, which
  // would end the collective one spine round trip later).
  auto wrap = [&](int position) { return ((position % n) + n) % n; };
  auto clockwise_hops = [&](int position, int phase) {
    if (n % 2 == 1) return (n - 1) / 2;
    return (position + phase) % 2 == 0 ? n / 2 : n / 2 - 1;
  };
  // A chunk's time on the route from ring position `from` to `to` (no route: never chosen).
  auto link_cost = [&](const std::vector<int>& order, int from, int to) {
    const LinkId id = topology.find_link(members[order[wrap(from)]], members[order[wrap(to)]]);
    return id < 0 ? std::numeric_limits<Time>::max()
                  : topology.transfer_time(id, collective.chunk_bytes());
  };
  auto phase_of = [&](const std::vector<int>& order) {
    if (n % 2 == 1) return 0;
    Time worst[2] = {0, 0};
    for (int phase = 0; phase < 2; ++phase)
      for (int u = 0; u < n; ++u) {
        // u's last send is hop n/2 - 1 of the piece from position u - (n/2 - 1).
        const bool clockwise_last = clockwise_hops(wrap(u - (n / 2 - 1)), phase) == n / 2;
        worst[phase] = std::max(worst[phase], link_cost(order, u, clockwise_last ? u + 1 : u - 1));
      }
    return worst[1] < worst[0] ? 1 : 0;
  };

  // One phase over every channel, its pieces spread over the channels as the ring's. Hop h of
  // piece q goes out at pair h * count + q: clockwise first, then counter-clockwise, so each
  // NPU's port alternates the two directions. Reduce-Scatter is the time reversal: the partial
  // sums of position p's piece run towards p from both sides, the longer side starting first.
  const int longest = n / 2;
  const bool through_switches = timing.switches() > 0;
  auto split_phase = [&](std::int64_t base, bool reduce) {
    std::int64_t end = base;
    for (int c = 0; c < channel_count; ++c) {
      const auto& order = channels[c];
      auto npu = [&](int position) { return members[order[wrap(position)]]; };
      std::vector<int> pieces;
      for (int k = c; k < k_count; k += channel_count) pieces.push_back(k);
      const auto count = static_cast<std::int64_t>(pieces.size());
      const int phase = phase_of(order);
      for (std::int64_t q = 0; q < count; ++q)
        for (int p = 0; p < n; ++p) {
          const ChunkId chunk = order[p] * k_count + pieces[q];
          // Through switches both directions share the sender's port, so the alternation by
          // position already balances it; on direct links each direction is its own link, and
          // turning the alternation with the piece balances the two.
          const int clockwise =
              clockwise_hops(p + (through_switches ? 0 : static_cast<int>(q)), phase);
          for (int direction = 0; direction < 2; ++direction) {
            const int hops = direction == 0 ? clockwise : n - 1 - clockwise;
            const int sign = direction == 0 ? 1 : -1;
            for (int h = 0; h < hops; ++h) {
              if (!reduce) {
                // Clockwise first within a pair; but with one piece per ring an NPU's own piece
                // leaves first the way that goes further: no other piece fills the wait for it.
                const int from = p + sign * h;
                const int second = h == 0 && count == 1 ? (hops == longest ? 0 : 1) : direction;
                schedule.send(npu(from), npu(from + sign), base + 2 * (h * count + q) + second,
                              chunk);
              } else {
                const int from = p + sign * (hops - h);
                schedule.send(npu(from), npu(from - sign),
                              base + 2 * ((longest - hops + h) * count + q) + direction, chunk,
                              /*reduce=*/true);
              }
            }
          }
        }
      end = std::max(end, base + 2 * count * longest);
    }
    return end;
  };

  switch (collective.kind()) {
    case CollectiveKind::kAllGather:
      split_phase(0, false);
      break;
    case CollectiveKind::kReduceScatter:
      split_phase(0, true);
      break;
    case CollectiveKind::kAllReduce:
      split_phase(split_phase(0, true), false);
      break;
    default:
      throw Error("biring is defined for all-gather, reduce-scatter and all-reduce");
  }
  return schedule.build("biring", model);
}

}  // namespace tacos::detail
