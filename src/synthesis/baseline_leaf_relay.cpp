// The hierarchical baseline on a two-tier fat-tree (baselines.h): every share crosses to one
// host of each other leaf, which relays it inside its leaf, all in lockstep slots.
//
// Why this shape: under store-and-forward every port pays a latency per message and a
// receiver's port can only be fed as fast as the messages reach its leaf. With every port
// sending one message per slot, every receiving port gets exactly one per slot too (each slot is
// a permutation of the hosts, and all hosts send the same size in it), so each down-port runs
// without a gap, one message behind its up-ports: the collective ends one message after the
// last send. What crosses the spines arrives two spine hops later, so leaf-crossing messages
// are one chunk and messages inside the leaf two: both arrive within one two-chunk slot.
// Half of each leaf's hosts (a group) cross in a slot while the other half exchange single
// chunks among themselves (their own, then relayed ones once those run out), so a spine port
// queues half as many messages, and the crossing partner of each host is picked so that the
// spines share them evenly.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {
namespace {

// Per (leaf, leaf offset, group): partner[i] = the index in the group of leaf + offset that host
// i of the group sends to, balancing the messages of one slot over the switch-to-switch links
// their routes take (`reversed`: the routes of the time-reversed messages).
std::vector<int> balanced_partners(const Topology& network, int hosts, int leaves, int leaf,
                                   int offset, int group, bool reversed) {
  const int half = hosts / 2;
  const SwitchRoutes& routes = network.switch_routes();
  auto host = [&](int l, int i) { return (l % leaves) * hosts + group * half + i; };
  auto trunk_links = [&](int i, int j) {
    NpuId a = host(leaf, i), b = host(leaf + offset, j);
    if (reversed) std::swap(a, b);
    std::vector<LinkId> trunks;
    for (LinkId l : routes.route(a, b))
      if (network.is_switch(network.link(l).src) && network.is_switch(network.link(l).dst))
        trunks.push_back(l);
    return trunks;
  };
  std::vector<std::vector<std::vector<LinkId>>> trunks(half,
                                                       std::vector<std::vector<LinkId>>(half));
  for (int i = 0; i < half; ++i)
    for (int j = 0; j < half; ++j) trunks[i][j] = trunk_links(i, j);
  // Depth-first over assignments, keeping the most loaded trunk link at or below `cap`; the
  // smallest cap that admits an assignment within the budget wins.
  std::vector<int> load(network.num_links(), 0), partner(half, -1), best;
  std::vector<char> used(half, 0);
  // No cap below half / (first trunk links on offer) can be met: start there.
  std::vector<LinkId> firsts;
  for (const auto& row : trunks)
    for (const auto& route : row)
      if (!route.empty()) firsts.push_back(route.front());
  std::sort(firsts.begin(), firsts.end());
  const auto distinct =
      static_cast<int>(std::unique(firsts.begin(), firsts.end()) - firsts.begin());
  for (int cap = std::max(1, (half + distinct - 1) / std::max(1, distinct));
       cap <= half && best.empty(); ++cap) {
    std::int64_t budget = 20000;
    auto search = [&](auto&& self, int i) -> bool {
      if (i == half) return true;
      if (--budget < 0) return false;
      for (int j = 0; j < half; ++j) {
        if (used[j]) continue;
        bool fits = true;
        for (LinkId l : trunks[i][j]) fits = fits && load[l] < cap;
        if (!fits) continue;
        for (LinkId l : trunks[i][j]) ++load[l];
        used[j] = 1;
        partner[i] = j;
        if (self(self, i + 1)) return true;
        used[j] = 0;
        for (LinkId l : trunks[i][j]) --load[l];
      }
      return false;
    };
    if (search(search, 0)) best = partner;
    std::fill(load.begin(), load.end(), 0);
    std::fill(used.begin(), used.end(), 0);
  }
  if (best.empty())
    for (int i = 0; i < half; ++i) best.push_back(i);
  return best;
}

}  // namespace

std::optional<std::pair<int, int>> leaf_relay_shape(const TopologyShape& shape, int npus) {
  if (shape.kind != TopologyKind::kFatTree) return std::nullopt;
  const int hosts = shape.hosts, leaves = shape.leaves;
  // Two equal groups per leaf, each host with someone in its group to send to.
  if (hosts % 2 != 0 || hosts < 4 || leaves < 2 || hosts * leaves != npus) return std::nullopt;
  return std::make_pair(hosts, leaves);
}

namespace {

// partners[leaf][offset][group] (balanced_partners), for the messages (forward) and their time
// reversal (reversed): the same for every message size, so searched once.
using Partners = std::vector<std::vector<std::vector<std::vector<int>>>>;
struct BothPartners {
  Partners forward, reversed;
};

Partners all_partners(const Topology& network, int hosts, int leaves, bool reversed) {
  Partners partners(leaves, std::vector<std::vector<std::vector<int>>>(leaves));
  for (int l = 0; l < leaves; ++l)
    for (int a = 1; a < leaves; ++a)
      for (int g = 0; g < 2; ++g)
        partners[l][a].push_back(balanced_partners(network, hosts, leaves, l, a, g, reversed));
  return partners;
}

// The schedule with `per_message` chunks in each message of the closing slots inside a leaf.
Algorithm leaf_relay_with(const Topology& topology, const Topology& timing,
                          const Collective& collective, LinkModel model, int hosts, int leaves,
                          const BothPartners& both, std::size_t per_message) {
  const CollectiveKind kind = collective.kind();
  const int k_count = collective.chunks_per_npu();
  const int half = hosts / 2, remote = leaves - 1, in_group = half - 1;
  LogicalSchedule schedule(topology, timing, collective);
  auto npu = [&](int leaf, int q) { return ((leaf % leaves + leaves) % leaves) * hosts + q; };
  auto chunk = [&](NpuId owner, int k) { return static_cast<ChunkId>(owner * k_count + k); };

  // One All-Gather, or its time reversal (reduce: every message turned round and run backwards
  // from `base + span`, partial sums flowing to the owners). Returns the next free step.
  auto phase = [&](std::int64_t base, bool reduce) {
    const Partners& partners = reduce ? both.reversed : both.forward;
    const std::int64_t singles = 2 * std::int64_t{remote} * k_count;
    std::int64_t span = 0;
    struct Message {
      NpuId from, to;
      std::int64_t step;
      std::vector<ChunkId> chunks;
    };
    std::vector<Message> messages;
    for (int l = 0; l < leaves; ++l)
      for (int q = 0; q < hosts; ++q) {
        const NpuId me = npu(l, q);
        const int g = q / half, i = q % half;
        auto in_group_peer = [&](int r) { return npu(l, g * half + (i + r) % half); };
        // The chunks this host relays (from the group partners that chose it), in the order
        // they arrive: partner j of leaf l - a crosses its chunk k at its crossing number
        // k (L - 1) + a - 1, in slot 2 x that + g.
        struct Relayed {
          std::int64_t step;
          ChunkId chunk;
        };
        std::vector<Relayed> relayed;
        for (int a = 1; a < leaves; ++a) {
          const int from_leaf = ((l - a) % leaves + leaves) % leaves;
          for (int j = 0; j < half; ++j)
            if (partners[from_leaf][a][g][j] == i)
              for (int k = 0; k < k_count; ++k)
                relayed.push_back({2 * (std::int64_t{k} * remote + a - 1) + g,
                                   chunk(npu(from_leaf, g * half + j), k)});
        }
        std::stable_sort(relayed.begin(), relayed.end(),
                         [](const Relayed& x, const Relayed& y) { return x.step < y.step; });
        // What each in-group peer gets from this host, in order: item x < K is own chunk x,
        // the rest the relayed chunks as they arrive. sent[r]: items peer r has had.
        const auto owed = static_cast<std::size_t>(k_count) + relayed.size();
        auto owed_chunk = [&](std::size_t x) {
          return x < static_cast<std::size_t>(k_count) ? chunk(me, static_cast<int>(x))
                                                       : relayed[x - k_count].chunk;
        };
        std::vector<std::size_t> sent(half, 0);
        std::int64_t step = 0;
        // Single-chunk slots: the groups take turns crossing; the other sends single chunks to
        // its group, peer r = 1, 2, ... in turn: its own, then relayed ones sent to it in an
        // earlier slot (there is always one: one arrives every other slot, and a peer's turn
        // comes at most every other slot, after the K own chunks).
        for (std::int64_t t = 0; t < singles; ++t, ++step) {
          const auto m = static_cast<int>(t / 2);
          if (t % 2 == g) {
            const int a = 1 + m % remote;
            const NpuId to = npu(l + a, g * half + partners[l][a][g][i]);
            messages.push_back({me, to, step, {chunk(me, m / remote)}});
          } else {
            const int r = 1 + m % in_group;
            const std::size_t x = sent[r]++;
            if (x >= static_cast<std::size_t>(k_count) && relayed[x - k_count].step >= step)
              throw Error("hierarchical (leaf relay): internal: relayed chunk not yet there");
            messages.push_back({me, in_group_peer(r), step, {owed_chunk(x)}});
          }
        }
        // Two-chunk slots, one permutation each: the other group's host (i + r) for r < half,
        // then this group's host (i + r - half + 1); each peer's list is what it is still owed
        // (own chunks, then relayed ones as they arrived); round robin over the peers, so the
        // own chunks (ready from the start) go first while the last relayed chunks arrive.
        std::vector<std::pair<NpuId, std::vector<ChunkId>>> lists;
        for (int r = 0; r < hosts - 1; ++r) {
          const bool other = r < half;
          std::vector<ChunkId> list;
          if (other) {
            for (int k = 0; k < k_count; ++k) list.push_back(chunk(me, k));
            for (const Relayed& x : relayed) list.push_back(x.chunk);
          } else {
            for (std::size_t x = sent[r - half + 1]; x < owed; ++x) list.push_back(owed_chunk(x));
          }
          lists.emplace_back(
              other ? npu(l, (1 - g) * half + (i + r) % half) : in_group_peer(r - half + 1),
              std::move(list));
        }
        for (std::size_t first = 0;; first += per_message) {
          bool any = false;
          for (const auto& [to, list] : lists) {
            if (first >= list.size()) continue;
            any = true;
            std::vector<ChunkId> chunks(list.begin() + static_cast<std::ptrdiff_t>(first),
                                        list.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                           first + per_message, list.size())));
            messages.push_back({me, to, step++, std::move(chunks)});
          }
          if (!any) break;
        }
        span = std::max(span, step);
      }
    for (const Message& m : messages) {
      if (reduce)
        schedule.send(m.to, m.from, base + span - 1 - m.step, m.chunks, /*reduce=*/true);
      else
        schedule.send(m.from, m.to, base + m.step, m.chunks);
    }
    return base + span;
  };

  switch (kind) {
    case CollectiveKind::kAllGather:
      phase(0, false);
      break;
    case CollectiveKind::kReduceScatter:
      phase(0, true);
      break;
    case CollectiveKind::kAllReduce:
      phase(phase(0, true), false);
      break;
    default:
      throw Error("hierarchical is defined for all-gather, reduce-scatter and all-reduce, not " +
                  to_string(kind));
  }
  return schedule.build("hierarchical", model);
}

}  // namespace

// The closing slots' messages pay a port latency each: two chunks per message suit large
// chunks (fattree:8x4x4: 1378.7 us against 1572.0 with four), while 64 KiB chunks on 1,024
// hosts spend 0.5 us of latency per 2.6 us of bytes (fattree:32x32x32 All-Gather 1524.9 us with
// two, 1330.8 with sixteen). Doubling from two until a size is no faster finds the best.
Algorithm leaf_relay_baseline(const Topology& topology, const Topology& timing,
                              const Collective& collective, LinkModel model, int hosts,
                              int leaves) {
  const CollectiveKind kind = collective.kind();
  BothPartners both;
  if (kind != CollectiveKind::kReduceScatter)
    both.forward = all_partners(timing, hosts, leaves, false);
  if (kind != CollectiveKind::kAllGather) both.reversed = all_partners(timing, hosts, leaves, true);
  Algorithm best = leaf_relay_with(topology, timing, collective, model, hosts, leaves, both, 2);
  for (std::size_t per = 4; per <= static_cast<std::size_t>(hosts); per *= 2) {
    Algorithm next = leaf_relay_with(topology, timing, collective, model, hosts, leaves, both, per);
    if (next.collective_time >= best.collective_time) break;
    best = std::move(next);
  }
  return best;
}

}  // namespace tacos::detail
