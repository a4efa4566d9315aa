#include "node_direct_rounds.h"

#include <algorithm>
#include <numeric>

#include "tacos/common/units.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {

std::vector<std::vector<int>> balanced_rail_rounds(
    const Topology& network, std::span<const NpuId> rail,
    const std::vector<std::vector<RailMessage>>& messages, int whole_block, Bytes shard_bytes,
    int pieces, LinkModel model, bool reductions, bool smallest_first) {
  const int d = static_cast<int>(rail.size());
  const int rounds = static_cast<int>(messages.front().size());
  const SwitchRoutes& routes = network.switch_routes();
  auto receiver = [&](int m, int i) {
    return messages[static_cast<std::size_t>(m)][static_cast<std::size_t>(i)].to;
  };
  // Partial sums go from the receiver back to the sender, in the reverse order of rounds.
  auto route = [&](int m, int i) {
    return reductions ? routes.route(rail[receiver(m, i)], rail[m])
                      : routes.route(rail[m], rail[receiver(m, i)]);
  };

  // What a message keeps each link of its route busy for, and a round's time: what a whole
  // block keeps the NIC busy for. By the end of round t a link may have been busy until t + 1
  // rounds' time (slack: that many whole blocks more).
  auto cost = [&](LinkId l, int shards) {
    const Link& link = network.link(l);
    return pieces * link_busy_time(model, link.latency_ps,
                                   serialization_time(shards * shard_bytes, link.bandwidth_gbps));
  };
  auto shards_of = [&](int m, int i) {
    const RailMessage& message = messages[static_cast<std::size_t>(m)][static_cast<std::size_t>(i)];
    return message.last - message.first;
  };
  Time round_time = 0;
  for (int m = 0; m < d; ++m)
    for (int i = 0; i < rounds; ++i)
      round_time = std::max(round_time, cost(route(m, i).front(), whole_block));

  std::vector<std::vector<int>> remaining(static_cast<std::size_t>(d));
  for (int m = 0; m < d; ++m) {
    auto& left = remaining[static_cast<std::size_t>(m)];
    left.resize(static_cast<std::size_t>(rounds));
    std::iota(left.begin(), left.end(), 0);
    if (smallest_first)
      std::stable_sort(left.begin(), left.end(),
                       [&](int a, int b) { return shards_of(m, a) < shards_of(m, b); });
  }
  std::vector<std::vector<int>> order(static_cast<std::size_t>(d));
  std::vector<Time> used(static_cast<std::size_t>(network.num_links()), 0);
  std::vector<int> chosen(static_cast<std::size_t>(d));  // sender -> index i, -1: none yet
  std::vector<int> holder(static_cast<std::size_t>(d));  // receiver -> its sender, -1: none yet
  std::vector<int> seen(static_cast<std::size_t>(d), -1);
  int stamp = 0;
  int round = 0;
  auto add = [&](int m, int i, int delta) {
    const int shards = shards_of(m, i);
    for (LinkId l : route(m, i)) used[l] += delta * cost(l, shards);
  };
  auto fits = [&](int m, int i, int slack) {
    const int shards = shards_of(m, i);
    for (LinkId l : route(m, i))
      if (used[l] + cost(l, shards) > (round + 1) * round_time + slack * cost(l, whole_block))
        return false;
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
    round = t;
    // Time a link left idle is lost, not saved up: its queue is what it still owes.
    for (Time& busy : used) busy = std::max(busy, t * round_time);
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
  }
  if (reductions)
    for (auto& sequence : order) std::reverse(sequence.begin(), sequence.end());
  return order;
}

}  // namespace tacos::detail
