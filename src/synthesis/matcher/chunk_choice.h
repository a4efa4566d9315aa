#pragma once
// The chunk-picking rule: which of the chunks its source could offer a free link sends.
// A link reads its source's chunk log through a cursor and keeps the next few offerable chunks
// in a window (docs/design.md, "Scale"). This file decides
// - how many chunks a window holds, that is how far down its source's log a link looks;
// - how a window's entries rank: unicast chunks by remaining distance (the critical path
//   first); copy chunks the link's source originated first, then the rarest (fewest NPUs have
//   or are getting it) where counting holders pays for itself, else all alike;
// - how ties break: seeded draws that depend only on (seed, link, draws so far), never on the
//   order links are visited in, so threads cannot change the result.
// Whether a chunk is offerable at all is the core matching's question (greedy_matcher.h).
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "../../common/mix64.h"
#include "tacos/collective/collective.h"
#include "tacos/common/types.h"

namespace tacos::detail {

// Copy collectives on more NPUs than this (other than Broadcast) draw chunks uniformly instead of
// rarest first: the same quality at that scale, a quarter less synthesis time.
inline constexpr int kRarestFirstNpus = 1024;
// The most candidates a link's window holds (window sizes are stored in a byte).
inline constexpr int kMaxWindow = 32;

// A window entry: a position in the source's log, not only a chunk id, so that a replacement
// can tell whether the source held the chunk when a transfer started. The chunk id rides along
// so that drawing from the window does not touch the log.
struct WindowSlot {
  std::uint32_t position;
  ChunkId chunk;
};

// Per link: the cursor into its source's log and the window of candidates read past it.
class LinkWindows {
 public:
  void init(std::size_t links, int capacity) {
    capacity_ = capacity;
    cursor_.assign(links, 0);
    slots_.assign(links * capacity, WindowSlot{0, 0});
    size_.assign(links, 0);
  }
  int capacity() const { return capacity_; }
  WindowSlot* window(LinkId link) { return &slots_[static_cast<std::size_t>(link) * capacity_]; }
  std::uint8_t& size(LinkId link) { return size_[link]; }
  std::uint32_t& cursor(LinkId link) { return cursor_[link]; }
  std::uint32_t cursor(LinkId link) const { return cursor_[link]; }

 private:
  int capacity_ = 8;
  std::vector<std::uint32_t> cursor_;
  std::vector<WindowSlot> slots_;
  std::vector<std::uint8_t> size_;
};

class ChunkChoice {
 public:
  // `switch_routes`: the matcher sends over switch routes (ports shared between links).
  void init(const Collective& collective, int npus, std::size_t links, std::uint64_t seed,
            bool unicast, bool topology_has_switches, bool switch_routes);

  // How many candidates each link's window holds.
  int window_capacity() const { return window_capacity_; }
  // True when every window entry is ranked at each pick, so stale entries must be dropped
  // first; uniform draws can check the drawn entry alone (rejecting stale draws keeps a
  // uniform draw uniform over the live entries).
  bool ranks_window() const { return unicast_ || !holders_.empty(); }
  // Copy chunks ranked rarest first: every pick reads and updates counts shared by all links.
  bool counts_holders() const { return !holders_.empty(); }

  // A source holds the chunk at the start.
  void count_initial_holder(ChunkId chunk) {
    if (!holders_.empty()) ++holders_[chunk];
  }
  // The chunk is on its way to one more NPU.
  void count_new_holder(ChunkId chunk) {
    if (!holders_.empty() && ++holders_[chunk] == 2 && !sole_holdings_.empty() &&
        sources_of_one_[chunk] >= 0)
      --sole_holdings_[sources_of_one_[chunk]];
  }
  // Switch fabrics: `npu` alone holds some chunk (a broadcast root).
  bool sole_holder(NpuId npu) const { return !sole_holdings_.empty() && sole_holdings_[npu] > 0; }

  // Index into `window` (size > 0) of the chunk `link` (from `src`) sends. `remaining_distance`
  // (npu, chunk) ranks unicast chunks.
  template <class Distance>
  int choose(LinkId link, NpuId src, const WindowSlot* window, int size,
             const Distance& remaining_distance);

 private:
  int choose_uniform(LinkId link, NpuId src, const WindowSlot* window, int size);
  // The best-scoring entry; ties broken by one seeded draw among them.
  template <class Score>
  int best_by_one_draw(LinkId link, const WindowSlot* window, int size, const Score& score);
  std::uint32_t draw(LinkId link, std::uint32_t n) {
    const std::uint64_t x =
        mix64(seed_ ^ (static_cast<std::uint64_t>(link) << 32) ^ ++draws_[link]);
    return static_cast<std::uint32_t>(((x >> 32) * n) >> 32);
  }

  std::uint64_t seed_ = 0;
  bool unicast_ = false;
  int window_capacity_ = 8;
  std::vector<std::uint32_t> draws_;  // per link, random draws so far
  std::vector<NpuId> origin_;         // per chunk: its one source, or -1 (copy, direct links)
  // Per chunk, NPUs that have it or are getting it; empty where draws stay uniform (the TACOS
  // paper's rule).
  std::vector<std::int32_t> holders_;
  std::vector<NpuId> sources_of_one_;        // per chunk: its source if it has one, else -1
  std::vector<std::int32_t> sole_holdings_;  // per NPU: chunks only it has (switch fabrics)
};

template <class Distance>
int ChunkChoice::choose(LinkId link, NpuId src, const WindowSlot* window, int size,
                        const Distance& remaining_distance) {
  if (!unicast_ && holders_.empty()) return choose_uniform(link, src, window, size);
  auto score = [&](ChunkId c) -> std::int64_t {
    if (unicast_) return remaining_distance(src, c);
    // Own chunks first (see origin_), then the rarest.
    const std::int64_t own = !origin_.empty() && origin_[c] == src ? std::int64_t{1} << 40 : 0;
    return own - static_cast<std::int64_t>(holders_[c]);
  };
  return best_by_one_draw(link, window, size, score);
}

template <class Score>
int ChunkChoice::best_by_one_draw(LinkId link, const WindowSlot* window, int size,
                                  const Score& score) {
  std::array<std::int64_t, kMaxWindow> scores;
  std::int64_t best_score = std::numeric_limits<std::int64_t>::min();
  std::uint32_t ties = 0;
  for (int i = 0; i < size; ++i) {
    scores[i] = score(window[i].chunk);
    if (scores[i] > best_score) {
      best_score = scores[i];
      ties = 1;
    } else if (scores[i] == best_score) {
      ++ties;
    }
  }
  std::uint32_t nth = ties > 1 ? draw(link, ties) : 0;
  for (int i = 0; i < size; ++i)
    if (scores[i] == best_score && nth-- == 0) return i;
  return 0;
}

}  // namespace tacos::detail
