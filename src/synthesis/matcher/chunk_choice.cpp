#include "chunk_choice.h"

namespace tacos::detail {

void ChunkChoice::init(const Collective& collective, int npus, std::size_t links,
                       std::uint64_t seed, bool unicast, bool topology_has_switches,
                       bool switch_routes) {
  seed_ = seed;
  unicast_ = unicast;
  draws_.assign(links, 0);
  const CollectiveKind kind = collective.kind();
  const int chunks = collective.num_chunks();
  // A portfolio over trials on switch fabrics: even seeds look further down the source's log
  // for the rarest chunk (better for rooted collectives on some fabrics, worse on others).
  // A broadcast root holds every chunk from the start: look further down its log for the rarest.
  window_capacity_ =
      unicast || kind == CollectiveKind::kBroadcast || (topology_has_switches && seed % 2 == 0)
          ? kMaxWindow
          : 8;
  if (unicast) return;
  // Rarest chunk first, seeded random among equals: a broadcast root then sends a new chunk on
  // every link instead of one chunk twice, and one trial is as good as many (docs/quality.md,
  // "Measured choices"). Scoring each pick costs a good part of the synthesis time
  // (docs/performance.md, "Measured costs"), so beyond kRarestFirstNpus NPUs copy collectives
  // other than Broadcast draw uniformly.
  if (switch_routes || kind == CollectiveKind::kBroadcast || npus <= kRarestFirstNpus)
    holders_.assign(chunks, 0);
  if (switch_routes) {
    // Switch rounds let sole holders send first (greedy_matcher.cpp, match_queued_links).
    sources_of_one_.assign(chunks, -1);
    sole_holdings_.assign(npus, 0);
    for (ChunkId c = 0; c < chunks; ++c)
      if (collective.sources(c).size() == 1) {
        sources_of_one_[c] = collective.sources(c)[0];
        ++sole_holdings_[sources_of_one_[c]];
      }
  } else {
    // A link offers its source's own chunks before relayed ones: its destination gets a
    // relayed chunk from that chunk's source too (on a fully connected fabric directly, one
    // step later), so relaying first costs a step where none is needed (docs/quality.md,
    // "Measured choices").
    origin_.assign(chunks, -1);
    for (ChunkId c = 0; c < chunks; ++c)
      if (collective.sources(c).size() == 1) origin_[c] = collective.sources(c)[0];
  }
}

int ChunkChoice::choose_uniform(LinkId link, NpuId src, const WindowSlot* window, int size) {
  if (!origin_.empty()) {
    // Own chunks first, uniformly among them (a reservoir draw per own chunk).
    int own = -1;
    std::uint32_t owns = 0;
    for (int i = 0; i < size; ++i)
      if (origin_[window[i].chunk] == src && (++owns == 1 || draw(link, owns) == 0)) own = i;
    if (own >= 0) return own;
  }
  return static_cast<int>(draw(link, static_cast<std::uint32_t>(size)));
}

}  // namespace tacos::detail
