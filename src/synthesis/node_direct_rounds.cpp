#include "node_direct_rounds.h"

#include <algorithm>
#include <numeric>

#include "tacos/topology/switch_routes.h"

namespace tacos::detail {

std::vector<std::vector<int>> balanced_rail_rounds(
    const Topology& network, std::span<const NpuId> rail,
    const std::vector<std::vector<RailMessage>>& messages) {
  const int d = static_cast<int>(rail.size());
  const int rounds = static_cast<int>(messages.front().size());
  const SwitchRoutes& routes = network.switch_routes();
  auto receiver = [&](int m, int i) {
    return messages[static_cast<std::size_t>(m)][static_cast<std::size_t>(i)].to;
  };
  auto route = [&](int m, int i) { return routes.route(rail[m], rail[receiver(m, i)]); };

  // A link's room: how many messages at the route's slowest rate (the NIC's) it carries at once.
  std::vector<int> room(static_cast<std::size_t>(network.num_links()), 0);
  for (int m = 0; m < d; ++m)
    for (int i = 0; i < rounds; ++i) {
      const auto links = route(m, i);
      double rate = network.link(links.front()).bandwidth_gbps;
      for (LinkId l : links) rate = std::min(rate, network.link(l).bandwidth_gbps);
      for (LinkId l : links)
        if (room[l] == 0)
          room[l] = std::max(1, static_cast<int>(network.link(l).bandwidth_gbps / rate + 1e-9));
    }

  std::vector<std::vector<int>> remaining(static_cast<std::size_t>(d));
  for (auto& left : remaining) {
    left.resize(static_cast<std::size_t>(rounds));
    std::iota(left.begin(), left.end(), 0);
  }
  std::vector<std::vector<int>> order(static_cast<std::size_t>(d));
  std::vector<int> load(room.size(), 0);
  std::vector<int> chosen(static_cast<std::size_t>(d));  // sender -> index i, -1: none yet
  std::vector<int> holder(static_cast<std::size_t>(d));  // receiver -> its sender, -1: none yet
  std::vector<int> seen(static_cast<std::size_t>(d), -1);
  int stamp = 0;
  auto add = [&](int m, int i, int delta) {
    for (LinkId l : route(m, i)) load[l] += delta;
  };
  auto fits = [&](int m, int i, int slack) {
    for (LinkId l : route(m, i))
      if (load[l] + 1 > room[l] + slack) return false;
    return true;
  };
  // Kuhn's augmenting path from sender m; a message joins only where its links have room
  // (loads count the messages an augmenting path is about to drop: never over by accident).
  auto augment = [&](auto& self, int m, int slack) -> bool {
    for (int i : remaining[static_cast<std::size_t>(m)]) {
      const int n = receiver(m, i);
      if (seen[n] == stamp || !fits(m, i, slack)) continue;
      seen[n] = stamp;
      add(m, i, +1);
      const int previous = holder[n];
      const int previous_i = previous >= 0 ? chosen[previous] : -1;
      if (previous < 0 || self(self, previous, slack)) {
        if (previous >= 0) add(previous, previous_i, -1);
        holder[n] = m;
        chosen[m] = i;
        return true;
      }
      add(m, i, -1);
    }
    return false;
  };
  for (int t = 0; t < rounds; ++t) {
    std::fill(chosen.begin(), chosen.end(), -1);
    std::fill(holder.begin(), holder.end(), -1);
    int matched = 0;
    int slack = 0;
    // The remaining pairs form a regular bipartite graph, so a perfect matching exists once the
    // slack makes room for every message (slack d: any load fits).
    for (; matched < d && slack <= d; ++slack) {
      for (int m = 0; m < d; ++m)
        if (chosen[m] < 0) {
          ++stamp;
          if (augment(augment, m, slack)) ++matched;
        }
    }
    for (int m = 0; m < d; ++m)
      if (chosen[m] < 0) {  // not reached for regular input; kept total for safety
        chosen[m] = remaining[static_cast<std::size_t>(m)].front();
        add(m, chosen[m], +1);
      }
    for (int m = 0; m < d; ++m) {
      auto& left = remaining[static_cast<std::size_t>(m)];
      left.erase(std::find(left.begin(), left.end(), chosen[m]));
      order[static_cast<std::size_t>(m)].push_back(chosen[m]);
    }
    for (int m = 0; m < d; ++m) add(m, chosen[m], -1);
  }
  return order;
}

}  // namespace tacos::detail
