#pragma once
// The event loop of the list schedulers (tree_packing.cpp, routed_unicast.cpp): messages arrive,
// links become free, and a free link picks among the messages ready on it.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "tacos/common/types.h"

namespace tacos::detail {

// (time, id >= 0: message id arrives) or (time, -1 - link: the link is free again).
using LinkEvent = std::pair<Time, std::int32_t>;
using LinkEventQueue =
    std::priority_queue<LinkEvent, std::vector<LinkEvent>, std::greater<LinkEvent>>;

inline LinkEvent link_free_event(Time at, LinkId link) { return {at, -1 - link}; }

// Drains `events` one instant at a time: on_arrival(id, now, touched) handles each arrival and
// appends the links where a message became ready; only when everything of that instant is in the
// queues does try_send(link, now) run, once per touched or freed link in link order, so that
// messages ready together can leave together.
template <class OnArrival, class TrySend>
void run_link_events(LinkEventQueue& events, OnArrival&& on_arrival, TrySend&& try_send) {
  std::vector<LinkId> touched;
  while (!events.empty()) {
    const Time now = events.top().first;
    touched.clear();
    while (!events.empty() && events.top().first == now) {
      const std::int32_t what = events.top().second;
      events.pop();
      if (what < 0)
        touched.push_back(-1 - what);
      else
        on_arrival(what, now, touched);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (LinkId l : touched) try_send(l, now);
  }
}

}  // namespace tacos::detail
