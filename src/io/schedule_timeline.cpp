#include "schedule_timeline.h"

#include <algorithm>
#include <tuple>

namespace tacos::detail {
namespace {

// One chunk reaching a device: the records of one (device, chunk) are contiguous once sorted.
struct Arrival {
  DeviceId device;
  ChunkId chunk;
  Time end;
  std::uint32_t transfer;
  bool reduce;
  auto key() const { return std::tie(device, chunk, end, transfer); }
  bool operator<(const Arrival& o) const { return key() < o.key(); }
};

struct ArrivalIndex {
  std::vector<Arrival> arrivals;

  std::pair<const Arrival*, const Arrival*> of(DeviceId device, ChunkId chunk) const {
    const auto first =
        std::lower_bound(arrivals.begin(), arrivals.end(), std::pair{device, chunk},
                         [](const Arrival& a, const std::pair<DeviceId, ChunkId>& k) {
                           return std::tie(a.device, a.chunk) < std::tie(k.first, k.second);
                         });
    auto last = first;
    while (last != arrivals.end() && last->device == device && last->chunk == chunk) ++last;
    return {arrivals.data() + (first - arrivals.begin()),
            arrivals.data() + (last - arrivals.begin())};
  }
};

}  // namespace

ScheduleTimeline schedule_timeline(const Algorithm& algorithm, const SimulationResult& simulated) {
  const auto& transfers = algorithm.transfers();
  const std::uint32_t count = static_cast<std::uint32_t>(transfers.size());
  ScheduleTimeline timeline;

  ArrivalIndex index;
  index.arrivals.reserve(algorithm.chunk_pool().size());
  for (std::uint32_t x = 0; x < count; ++x)
    for (ChunkId c : algorithm.chunks(transfers[x]))
      index.arrivals.push_back({transfers[x].dst, c, simulated.end[x], x, transfers[x].reduce});
  std::sort(index.arrivals.begin(), index.arrivals.end());

  timeline.order.resize(count);
  for (std::uint32_t x = 0; x < count; ++x) timeline.order[x] = x;
  std::sort(timeline.order.begin(), timeline.order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(simulated.start[a], a) < std::tie(simulated.start[b], b);
  });

  // Feeds, in transfer index order (CSR), with steps filled in start order: a feed ends by the
  // start of what it feeds, and every message takes time, so it comes earlier in that order.
  std::vector<std::vector<std::uint32_t>> feeds_of(count);
  for (std::uint32_t x = 0; x < count; ++x) {
    const Transfer& t = transfers[x];
    for (ChunkId c : algorithm.chunks(t)) {
      const auto [first, last] = index.of(t.src, c);
      const Arrival* copy = nullptr;
      for (const Arrival* a = first; a != last && a->end <= simulated.start[x]; ++a)
        if (!a->reduce) {
          copy = a;
          break;
        }
      if (copy != nullptr) {
        feeds_of[x].push_back(copy->transfer);
        continue;
      }
      for (const Arrival* a = first; a != last && a->end <= simulated.start[x]; ++a)
        feeds_of[x].push_back(a->transfer);
    }
  }
  timeline.feed_offsets.assign(count + 1, 0);
  for (std::uint32_t x = 0; x < count; ++x)
    timeline.feed_offsets[x + 1] =
        timeline.feed_offsets[x] + static_cast<std::uint32_t>(feeds_of[x].size());
  timeline.feeds.reserve(timeline.feed_offsets[count]);
  for (auto& feeds : feeds_of)
    timeline.feeds.insert(timeline.feeds.end(), feeds.begin(), feeds.end());
  timeline.step.assign(count, 0);
  for (std::uint32_t x : timeline.order)
    for (std::uint32_t k = timeline.feed_offsets[x]; k < timeline.feed_offsets[x + 1]; ++k)
      timeline.step[x] = std::max(timeline.step[x], timeline.step[timeline.feeds[k]] + 1);

  const Collective& collective = algorithm.collective();
  const bool reduction = is_reduction(collective.kind());
  timeline.completions.resize(static_cast<std::size_t>(collective.topology_npus()));
  for (ChunkId c = 0; c < collective.num_chunks(); ++c) {
    const auto sources = collective.sources(c);
    for (NpuId v : collective.destinations(c)) {
      Time done = 0;
      const bool held = !reduction && std::find(sources.begin(), sources.end(), v) != sources.end();
      if (!held) {
        const auto [first, last] = index.of(v, c);
        const Arrival* copy = std::find_if(first, last, [](const Arrival& a) { return !a.reduce; });
        if (copy != last)
          done = copy->end;
        else if (first != last)
          done = (last - 1)->end;
      }
      timeline.completions[static_cast<std::size_t>(v)].push_back(done);
    }
  }
  for (auto& times : timeline.completions) std::sort(times.begin(), times.end());
  return timeline;
}

}  // namespace tacos::detail
