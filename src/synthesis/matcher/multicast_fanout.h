#pragma once
// Multicast fan-out (docs/design.md, "Switch fabrics", multicast switches): a route whose first hop
// enters a multicast switch shares that hop with the sender's other routes through it. This
// file decides which receivers a message started on such a route also reaches: after a round
// is matched as for unicast (so the round's matching of senders to receivers stays the unicast
// one), the message takes every other route of its sender through the same entry port whose
// receiver can use the chunk and whose later hops are still free in time, so the plan still
// never queues: one entry-port occupancy, many copies, in ports the round left free.
#include <cstdint>
#include <span>
#include <vector>

#include "match_link.h"
#include "switch_ports.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

class MulticastFanout {
 public:
  // Finds the routes into multicast switches; false when there are none (the fan-out is off).
  bool init(const Topology& topology, std::span<const MatchLink> links, const SwitchPorts& ports);
  bool active() const { return !entry_port_.empty(); }
  // `link` enters a multicast switch (only when active()).
  bool enters_multicast(LinkId link) const { return entry_port_[link] >= 0; }

  // Forgets the last round's members.
  void clear_members() { members_.clear(); }
  std::uint32_t members_end() const { return static_cast<std::uint32_t>(members_.size()); }
  LinkId member(std::uint32_t k) const { return members_[k]; }
  // Appends the routes that join the message started `now` on `link` with `chunk`:
  // `usable(route, arrival)` says whether the route's receiver can use the chunk arriving then;
  // `joined(route, arrival)` marks it on its way once the route's ports are reserved.
  template <class Usable, class Joined>
  void add_members(LinkId link, Time now, std::span<const MatchLink> links, SwitchPorts& ports,
                   const Usable& usable, const Joined& joined);

  // Group ids of multicast messages (Transfer::multicast), in start order.
  std::int32_t new_group() { return groups_++; }
  std::int32_t groups() const { return groups_; }

 private:
  std::vector<LinkId> entry_port_;           // per matcher link: shared first hop, or -1
  std::vector<std::vector<LinkId>> fanout_;  // per physical link: matcher links entering on it
  std::vector<LinkId> members_;              // this round's members, message after message
  std::int32_t groups_ = 0;
};

template <class Usable, class Joined>
void MulticastFanout::add_members(LinkId link, Time now, std::span<const MatchLink> links,
                                  SwitchPorts& ports, const Usable& usable, const Joined& joined) {
  for (LinkId m : fanout_[entry_port_[link]]) {
    if (m == link) continue;
    const MatchLink& member = links[m];
    const Time arrival = now + member.arrival_delay;
    if (!usable(m, arrival)) continue;
    // The entry hop is the message's own; the rest (the switch's out-port and beyond) must be
    // free when the copy gets there.
    if (!ports.free_in_time(member, now, 1)) continue;
    ports.reserve(member, now, 1);
    joined(m, arrival);
    members_.push_back(m);
  }
}

}  // namespace tacos::detail
