#include "node_direct_rails.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "tacos/common/units.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {
namespace {

// Links between switches one route may cross (leaf -> spine -> leaf: 2) for the rebalancing.
constexpr int kMaxSpineHops = 4;
// Per pair: the links of the copy from m to n, then those of the partial sums from n to m.
constexpr int kSlots = 2 * kMaxSpineHops;

// Shards first .. last - 1 of a block on `rail`.
struct Part {
  int rail, first, last;
};

// The busy times of the links between switches, as pairs change rails.
class SpineLoads {
 public:
  SpineLoads(const Topology& network, const std::vector<std::vector<NpuId>>& nodes,
             Bytes shard_bytes, int pieces, LinkModel model, NodeDirectPhases phases)
      : d_(static_cast<int>(nodes.size())), g_(static_cast<int>(nodes.front().size())) {
    std::vector<int> dense(static_cast<std::size_t>(network.num_links()), -1);
    std::vector<LinkId> links;
    for (LinkId l = 0; l < network.num_links(); ++l)
      if (network.is_switch(network.link(l).src) && network.is_switch(network.link(l).dst)) {
        dense[l] = static_cast<int>(links.size());
        links.push_back(l);
      }
    if (links.empty()) return;
    spine_links_ = static_cast<int>(links.size());
    // busy_[i * (G + 1) + c]: nanoseconds link i is busy for the messages of c shards of a pair.
    busy_.assign(links.size() * static_cast<std::size_t>(g_ + 1), 0);
    for (std::size_t i = 0; i < links.size(); ++i) {
      const Link& link = network.link(links[i]);
      for (int c = 1; c <= g_; ++c)
        busy_[i * (g_ + 1) + c] =
            pieces *
            link_busy_time(model, link.latency_ps,
                           serialization_time(c * shard_bytes, link.bandwidth_gbps)) /
            kPicosPerNano;
    }
    const SwitchRoutes& routes = network.switch_routes();
    hops_.assign(static_cast<std::size_t>(g_) * d_ * d_ * kSlots, -1);
    // The two phases run at different times: each link counts once per phase (the partial
    // sums' links numbered after the copies').
    auto collect = [&](NpuId from, NpuId to, int* out, int offset) {
      int count = 0;
      for (LinkId l : routes.route(from, to))
        if (dense[l] >= 0) {
          if (count == kMaxSpineHops) return false;
          out[count++] = dense[l] + offset;
        }
      return true;
    };
    for (int r = 0; r < g_; ++r)
      for (int m = 0; m < d_; ++m)
        for (int n = 0; n < d_; ++n) {
          if (m == n) continue;
          int* out = &hops_[index(r, m, n)];
          int* back = out + kMaxSpineHops;
          // Deeper fabrics are left as laid out.
          if (phases.copies && !collect(nodes[m][r], nodes[n][r], out, 0)) return;
          if (phases.reductions && !collect(nodes[n][r], nodes[m][r], back, spine_links_)) return;
        }
    load_.assign(links.size() * 2, 0);
    usable_ = true;
  }

  bool usable() const { return usable_; }
  std::size_t links() const { return load_.size(); }
  std::int64_t load(int i) const { return load_[static_cast<std::size_t>(i)]; }
  std::int64_t squares() const { return squares_; }
  bool crosses(int rail, int m, int n, int link) const {
    const int* hops = &hops_[index(rail, m, n)];
    return std::find(hops, hops + kSlots, link) != hops + kSlots;
  }
  // Adds (sign 1) or removes (-1) the messages of `shards` shards from m to n on `rail`.
  void place(int rail, int m, int n, int shards, int sign) {
    const int* hops = &hops_[index(rail, m, n)];
    for (int h = 0; h < kSlots; ++h) {
      if (hops[h] < 0) continue;
      std::int64_t& load = load_[static_cast<std::size_t>(hops[h])];
      const std::int64_t before = load;
      load += sign * busy_[static_cast<std::size_t>(hops[h] % spine_links_) * (g_ + 1) + shards];
      squares_ += load * load - before * before;
    }
  }

 private:
  std::size_t index(int rail, int m, int n) const {
    return ((static_cast<std::size_t>(rail) * d_ + m) * d_ + n) * kSlots;
  }
  int d_, g_;
  int spine_links_ = 0;
  bool usable_ = false;
  std::vector<std::int64_t> busy_;
  std::vector<int> hops_;  // per (rail, sender, receiver): kSlots links, -1 where none
  std::vector<std::int64_t> load_;
  std::int64_t squares_ = 0;
};

}  // namespace

RailPlan node_direct_rails(const Topology& network, const std::vector<std::vector<NpuId>>& nodes,
                           Bytes shard_bytes, int pieces, LinkModel model,
                           NodeDirectPhases phases) {
  const int d = static_cast<int>(nodes.size());
  const int g = static_cast<int>(nodes.front().size());
  // parts[s]: the layout's parts of the block to node m + s.
  std::vector<std::vector<Part>> parts(static_cast<std::size_t>(d));
  for (std::int64_t slot = 0; slot < std::int64_t{d - 1} * g; ++slot) {
    auto& here = parts[static_cast<std::size_t>(slot / g + 1)];
    const int rail = static_cast<int>(slot / (d - 1));
    const int shard = static_cast<int>(slot % g);
    if (here.empty() || here.back().rail != rail) here.push_back(Part{rail, shard, shard});
    here.back().last = shard + 1;
  }
  auto whole = [&](int s) {
    const auto& p = parts[static_cast<std::size_t>(s)];
    return p.size() == 1 && p.front().first == 0 && p.front().last == g;
  };
  // rail_of[m D + n]: the rail of a whole-block pair; -1 for m == n and split blocks.
  std::vector<int> rail_of(static_cast<std::size_t>(d) * d, -1);
  for (int m = 0; m < d; ++m)
    for (int s = 1; s < d; ++s)
      if (whole(s)) rail_of[static_cast<std::size_t>(m) * d + (m + s) % d] = parts[s][0].rail;
  auto rail = [&](int m, int n) -> int& { return rail_of[static_cast<std::size_t>(m) * d + n]; };

  RailPlan plan;
  SpineLoads loads(network, nodes, shard_bytes, pieces, model, phases);
  if (loads.usable()) {
    for (int m = 0; m < d; ++m)
      for (int s = 1; s < d; ++s)
        for (const Part& p : parts[static_cast<std::size_t>(s)])
          loads.place(p.rail, m, (m + s) % d, p.last - p.first, +1);
    // Swap: a -> c and b -> e from rail x to y, a -> e and b -> c from y to x.
    auto swap = [&](int a, int b, int c, int e, int x, int y) {
      loads.place(x, a, c, g, -1);
      loads.place(x, b, e, g, -1);
      loads.place(y, a, e, g, -1);
      loads.place(y, b, c, g, -1);
      loads.place(y, a, c, g, +1);
      loads.place(y, b, e, g, +1);
      loads.place(x, a, e, g, +1);
      loads.place(x, b, c, g, +1);
      rail(a, c) = rail(b, e) = y;
      rail(a, e) = rail(b, c) = x;
    };
    std::vector<int> senders, receivers;
    const std::int64_t budget = std::int64_t{16} * d * g;
    for (std::int64_t step = 0; step < budget; ++step) {
      int busiest = 0;
      for (int i = 1; i < static_cast<int>(loads.links()); ++i)
        if (loads.load(i) > loads.load(busiest)) busiest = i;
      const std::int64_t peak = loads.load(busiest);
      bool moved = false;
      for (int a = 0; a < d && !moved; ++a)
        for (int c = 0; c < d && !moved; ++c) {
          const int x = rail(a, c);
          if (x < 0 || !loads.crosses(x, a, c, busiest)) continue;
          for (int y = 0; y < g && !moved; ++y) {
            if (y == x) continue;
            receivers.clear();
            senders.clear();
            for (int n = 0; n < d; ++n) {
              if (rail(a, n) == y) receivers.push_back(n);
              if (rail(n, c) == y) senders.push_back(n);
            }
            for (int e : receivers) {
              for (int b : senders) {
                if (b == a || rail(b, e) != x) continue;
                const std::int64_t before = loads.squares();
                swap(a, b, c, e, x, y);
                if (loads.squares() < before && loads.load(busiest) < peak) {
                  moved = true;
                  break;
                }
                swap(a, b, e, c, x, y);  // back: a -> e and b -> c are on x now
              }
              if (moved) break;
            }
          }
        }
      if (!moved) break;
    }
    plan.rebalanced = true;
  }

  plan.messages.assign(static_cast<std::size_t>(g),
                       std::vector<std::vector<RailMessage>>(static_cast<std::size_t>(d)));
  for (int m = 0; m < d; ++m)
    for (int s = 1; s < d; ++s) {
      const int n = (m + s) % d;
      if (rail(m, n) >= 0)
        plan.messages[rail(m, n)][m].push_back(RailMessage{n, 0, g});
      else
        for (const Part& p : parts[static_cast<std::size_t>(s)])
          plan.messages[p.rail][m].push_back(RailMessage{n, p.first, p.last});
    }
  return plan;
}

}  // namespace tacos::detail
