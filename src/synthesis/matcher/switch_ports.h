#pragma once
// Switch ports (docs/design.md, "Switch fabrics"): a message NPU a -> switch -> NPU b holds each
// physical link of its route in turn, store-and-forward. This file decides
// - which routes through switches become matcher links (every switch peer, except that a
//   slower route into a fast domain is kept for one member of the domain per sender);
// - whether a message started now finds every hop of its route free when it gets there (the
//   matcher plans without queueing in switches) and otherwise which port it waits on and when
//   that port frees;
// - the order a round offers free switch routes in: whole shifts, so that a round is a
//   matching of sender ports to receiver ports.
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "match_link.h"
#include "tacos/common/link_model.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

class ChunkChoice;

class SwitchPorts {
 public:
  // Appends a matcher link per considered switch route to `links`; false (and nothing added)
  // when no NPU pair is joined through switches only.
  bool add_routes(const Topology& topology, LinkModel model, Bytes chunk_bytes,
                  std::vector<MatchLink>& links);

  // A route must wait for `port` to free, at `free_at` (when a message started then reaches
  // it); `new_wake` says the port has no earlier wake-up pending, so the caller schedules one.
  struct Wait {
    LinkId port;
    Time free_at;
    bool new_wake;
  };
  // Nothing when every hop of `link` (index `id`) is free when a message started `now` gets
  // there; otherwise `id` is registered as waiting on the first busy hop.
  std::optional<Wait> wait_for_hops(LinkId id, const MatchLink& link, Time now);
  // Every route starting on physical link `port` (an NPU's own port: no route passes it later)
  // waits for it when it is busy past `now`: the Wait each of them would get from
  // wait_for_hops, once. The caller registers the routes with add_waiter.
  std::optional<Wait> wait_for_port(LinkId port, Time now) {
    if (free_[port] <= now) return std::nullopt;
    const Time free_at = free_[port];
    const bool new_wake = wake_at_[port] < now || free_at < wake_at_[port];
    if (new_wake) wake_at_[port] = free_at;
    return Wait{port, free_at, new_wake};
  }
  void add_waiter(LinkId port, LinkId id) { waiters_[port].push_back(id); }
  // Physical links (the range of first_hop).
  std::size_t ports() const { return free_.size(); }
  // A message started `now` on `link` holds each hop from its `first_hop`-th on.
  void reserve(const MatchLink& link, Time now, int first_hop = 0) {
    for (std::int32_t h = link.hops_begin + first_hop; h < link.hops_end; ++h)
      free_[hops_[h].link] = now + hops_[h].offset + hops_[h].busy;
  }
  // True when the hops of `link` from its `first_hop`-th on are free in time for a message
  // started `now`.
  bool free_in_time(const MatchLink& link, Time now, int first_hop) const {
    for (std::int32_t h = link.hops_begin + first_hop; h < link.hops_end; ++h)
      if (free_[hops_[h].link] > now + hops_[h].offset) return false;
    return true;
  }
  // The port woke at `now`: calls `visit` for each route waiting on it, then forgets them.
  template <class Visit>
  void wake(LinkId port, Time now, const Visit& visit) {
    if (wake_at_[port] == now) wake_at_[port] = -1;
    for (LinkId l : waiters_[port]) visit(l);
    waiters_[port].clear();
  }

  // Calls `visit(physical link, busy time)` for each hop of switch route `link`: how long one
  // single-chunk message keeps each link of its route busy.
  template <class Visit>
  void for_each_hop(const MatchLink& link, const Visit& visit) const {
    for (std::int32_t h = link.hops_begin; h < link.hops_end; ++h)
      visit(hops_[h].link, hops_[h].busy);
  }

  // The physical link a route starts with, and the switch it comes down from.
  LinkId first_hop(const MatchLink& link) const { return hops_[link.hops_begin].link; }
  LinkId last_hop(const MatchLink& link) const { return hops_[link.hops_end - 1].link; }

  // Sort keys for a round's free switch routes `queued` (index into `links`), ascending = first.
  void order_round(std::span<const LinkId> queued, std::span<const MatchLink> links,
                   const ChunkChoice& choice, std::uint64_t seed, std::uint64_t round, int npus,
                   std::vector<std::pair<std::uint64_t, LinkId>>& keys) const;

 private:
  // One physical link of a switch route: when a message started at t reaches it (t + offset,
  // store-and-forward, never waiting: the matcher only sends when every hop is free in time)
  // and how long it keeps it busy.
  struct Hop {
    LinkId link;
    Time offset;
    Time busy;
  };
  std::vector<Hop> hops_;
  std::vector<Time> free_;                    // per physical link
  std::vector<Time> wake_at_;                 // per physical link: a pending wake event, or -1
  std::vector<std::vector<LinkId>> waiters_;  // per physical link: matcher links waiting on it
};

}  // namespace tacos::detail
