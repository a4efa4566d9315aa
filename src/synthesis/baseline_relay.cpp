// The relay baseline (baselines.h): Broadcast and Reduce where every member NPU has one port
// into a switch fabric (a switch's or a fat-tree's hosts). A unicast switch copies nothing, so
// every NPU but the root must receive the whole buffer and, together, they must also send it
// on (N - 1 buffers over N ports): the ports are all needed all the time, and what a tree loses
// is its depth (each level a store-and-forward hop through the switch) and the root's per-message
// latencies. Here every port, whenever it is free, sends a chunk on (a list schedule): the
// rarest chunk it holds (fewest members holding it or about to), to the member lacking it that
// would take it with the least queueing on the way, then (on a fat-tree) not into another leaf
// that already has it, then holding the fewest chunks. Chunks spread from the root as a postal
// broadcast does while the root keeps sending new ones. The plan is timed by the simulator's
// port engine as it is made and its steps are the order of the choices, so the simulator
// replays the same times (tests/relay_test.cpp). Reduce is the time reversal.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "../simulation/port_engine.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {
namespace {

// One chosen message: member `from` sends chunk `chunk` to member `to`.
struct RelayMessage {
  int from, to;
  ChunkId chunk;
};

// Chooses the messages while the simulator's own port engine times them (with the simulator's
// rules for one instant, and this planner's choices last), so the plan's times are the times
// the schedule gets. Where a message would go is estimated from the links as this planner
// booked them, in the order it chose (a switch serves in arrival order, so the estimate can be
// off where routes differ in length: a fat-tree's).
class RelayPlanner {
 public:
  RelayPlanner(const Topology& network, const Collective& collective, LinkModel model)
      : routes_(network.switch_routes()),
        members_(collective.members()),
        n_(collective.num_members()),
        chunks_(collective.num_chunks()),
        root_(collective.member_index(collective.root())),
        bytes_(collective.chunk_bytes()),
        total_(static_cast<std::size_t>(n_ - 1) * chunks_),
        model_(model),
        network_(network),
        has_(static_cast<std::size_t>(n_) * chunks_, 0),
        holders_(chunks_, 1),
        useful_(n_),
        count_(n_, 0),
        port_free_(n_, 0),
        in_free_(n_, 0),
        link_free_(network.links().size(), 0) {
    busy_.reserve(network.links().size());
    extra_.reserve(network.links().size());
    for (const Link& l : network.links()) {
      busy_.push_back(
          link_busy_time(model, l.latency_ps, serialization_time(bytes_, l.bandwidth_gbps)));
      extra_.push_back(model == LinkModel::kTacos ? 0 : l.latency_ps);
    }
    for (ChunkId c = 0; c < chunks_; ++c) {
      has_[index(root_, c)] = 2;
      useful_[root_].push_back(c);
    }
    count_[root_] = chunks_;
    member_of_.assign(network.npus(), -1);
    for (int i = 0; i < n_; ++i) member_of_[members_[i]] = i;
    // Members by the switch their port goes to (a fat-tree's leaf).
    std::vector<DeviceId> switches;
    for (int i = 0; i < n_; ++i) {
      const DeviceId s = network.link(network.out_links(members_[i]).front()).dst;
      auto it = std::find(switches.begin(), switches.end(), s);
      leaf_.push_back(static_cast<int>(it - switches.begin()));
      if (it == switches.end()) switches.push_back(s);
    }
    leaf_count_.assign(switches.size() * static_cast<std::size_t>(chunks_), 0);
    for (ChunkId c = 0; c < chunks_; ++c) ++leaf_count_[leaf_index(leaf_[root_], c)];
  }

  std::vector<RelayMessage> plan() {
    const std::size_t total = total_;
    messages_.reserve(total);
    auto started = [](PortEngine&, std::uint32_t, Time) {};
    auto arrived = [&](PortEngine& engine, std::uint32_t msg, Time now) {
      const RelayMessage& m = messages_[msg];
      has_[index(m.to, m.chunk)] = 2;
      useful_[m.to].push_back(m.chunk);
      engine.post(now, kDecide, static_cast<std::uint32_t>(m.to));
    };
    auto event = [&](PortEngine& engine, std::uint32_t, std::uint32_t a, Time now) {
      decide(engine, static_cast<int>(a), now);
    };
    LambdaClient client(started, arrived, event);
    PortEngine::Options options;
    options.model = model_;
    options.clock = "relay";
    // The simulator's order at one instant (simulate), then this planner's choices.
    options.priority = {0, 1, 2, 2, 3, 3, 4};
    options.ties_by_id = true;
    PortEngine engine(network_, std::move(options), total, client);
    engine.cache_serialization(bytes_);
    engine.post(0, kDecide, static_cast<std::uint32_t>(root_));
    engine.run();
    if (messages_.size() != total)
      throw Error("relay: internal error: " + std::to_string(messages_.size()) + " messages of " +
                  std::to_string(total));
    return std::move(messages_);
  }

 private:
  static constexpr std::uint32_t kDecide = PortEngine::kFirstCallerKind;
  static constexpr std::size_t kRarest = 4;  // chunks a member weighs its receivers for

  std::size_t leaf_index(int leaf, ChunkId c) const {
    return static_cast<std::size_t>(leaf) * chunks_ + static_cast<std::size_t>(c);
  }
  std::size_t index(int member, ChunkId c) const {
    return static_cast<std::size_t>(member) * chunks_ + static_cast<std::size_t>(c);
  }

  // The time a message takes over `route` when no link is busy.
  Time path_time(std::span<const LinkId> route) const {
    Time total = 0;
    for (const LinkId l : route) total += busy_[l] + extra_[l];
    return total;
  }

  // When a message sent at t would have crossed `route` over the links as this planner booked
  // them, its wait for busy links (estimates, see the class comment).
  Time queueing(std::span<const LinkId> route, int to, Time t) const {
    Time ready = t;
    for (std::size_t h = 0; h < route.size(); ++h) {
      const LinkId l = route[h];
      Time free = link_free_[l];
      if (h + 1 == route.size()) free = std::max(free, in_free_[to]);
      ready = std::max(ready, free) + busy_[l] + extra_[l];
    }
    return ready - t - path_time(route);
  }

  // Member a's port is free at `now`: it sends the rarest chunk it holds that someone lacks, to
  // the member that would take it with the least queueing, then holding the fewest chunks. The
  // simulator starts a message as soon as its port is free and its chunk is there, so a member
  // never holds back for a better receiver.
  void decide(PortEngine& engine, int a, Time now) {
    if (port_free_[a] > now || messages_.size() == total_) return;
    // The chunks it holds that someone still lacks (a chunk every member has or receives is
    // dropped for good: holders only grow), rarest first.
    std::vector<ChunkId>& useful = useful_[a];
    std::erase_if(useful, [&](ChunkId c) { return holders_[c] >= n_; });
    if (useful.empty()) return;  // an arrival wakes it again
    candidates_.assign(useful.begin(), useful.end());
    auto rarer = [&](ChunkId x, ChunkId y) {
      return holders_[x] != holders_[y] ? holders_[x] < holders_[y] : x < y;
    };
    // Usually the rarest has a receiver at once: order only as far as needed.
    const std::size_t head = std::min<std::size_t>(candidates_.size(), kRarest);
    std::partial_sort(candidates_.begin(), candidates_.begin() + head, candidates_.end(), rarer);
    const NpuId from = members_[a];
    const auto peers = routes_.switch_peers(from);
    const std::size_t first_peer = static_cast<std::size_t>(
        std::lower_bound(peers.begin(), peers.end(), from) - peers.begin());
    int best = -1;
    ChunkId best_chunk = 0;
    Time best_wait = 0;
    int best_needless = 0;
    // The least queueing among the rarest few will do.
    for (std::size_t i = 0; i < head; ++i) {
      const ChunkId c = candidates_[i];
      // Receivers in NPU order from the sender on (ties go round), over the routes' table.
      for (std::size_t j = 0; j < peers.size(); ++j) {
        const std::size_t p = (first_peer + j) % peers.size();
        const int b = member_of_[peers[p]];
        if (b < 0 || has_[index(b, c)] != 0) continue;
        const auto route = routes_.switch_route(from, static_cast<int>(p));
        const Time wait = queueing(route, b, now);
        // A copy into another leaf that already has the chunk crosses the spines needlessly.
        const int needless =
            leaf_[b] != leaf_[a] && leaf_count_[leaf_index(leaf_[b], c)] > 0 ? 1 : 0;
        if (best < 0 || wait < best_wait ||
            (wait == best_wait && (needless < best_needless ||
                                   (needless == best_needless && count_[b] < count_[best])))) {
          best_needless = needless;
          best = b;
          best_chunk = c;
          best_wait = wait;
        }
      }
      if (best >= 0 && best_wait == 0) break;
    }
    if (best < 0) return;
    send(engine, a, best, best_chunk, now);
  }

  void send(PortEngine& engine, int a, int b, ChunkId c, Time now) {
    const auto id = static_cast<std::uint32_t>(messages_.size());
    messages_.push_back(RelayMessage{a, b, c});
    const auto route = routes_.route(members_[a], members_[b]);
    Time ready = now;
    for (std::size_t h = 0; h < route.size(); ++h) {
      const LinkId l = route[h];
      Time free = link_free_[l];
      if (h + 1 == route.size()) free = std::max(free, in_free_[b]);
      link_free_[l] = std::max(ready, free) + busy_[l];
      ready = link_free_[l] + extra_[l];
    }
    in_free_[b] = link_free_[route.back()];
    port_free_[a] = now + busy_[route.front()];
    has_[index(b, c)] = 1;
    ++count_[b];
    ++holders_[c];
    ++leaf_count_[leaf_index(leaf_[b], c)];
    engine.set_message(id, route, bytes_, c);
    engine.send(id, now);
    engine.post(port_free_[a], kDecide, static_cast<std::uint32_t>(a));
  }

  const SwitchRoutes& routes_;
  const std::vector<NpuId>& members_;
  const int n_;
  const int chunks_;
  const int root_;
  const Bytes bytes_;
  const std::size_t total_;  // messages: every chunk to every member but the root
  const LinkModel model_;
  const Topology& network_;
  std::vector<char> has_;                     // per (member, chunk): 0 lacks, 1 on its way, 2 holds
  std::vector<int> holders_;                  // per chunk: members holding it or receiving it
  std::vector<std::vector<ChunkId>> useful_;  // per member: chunks it holds, some lack
  std::vector<int> count_;                    // per member: chunks held or on their way
  std::vector<Time> port_free_;               // per member: its port's next free time
  // Estimates (see the class comment): per member, when its switch port into it frees; per link.
  std::vector<Time> in_free_;
  std::vector<Time> link_free_;
  std::vector<Time> busy_, extra_;  // per link: busy time of one chunk, arrival after busy
  std::vector<ChunkId> candidates_;
  std::vector<RelayMessage> messages_;
  std::vector<int> member_of_;   // per NPU: its member index, -1 if none
  std::vector<int> leaf_;        // per member: its switch, numbered in member order
  std::vector<int> leaf_count_;  // per (leaf, chunk): members there holding it or receiving it
};

}  // namespace

std::optional<std::string> relay_inapplicable(const Topology& network,
                                              const Collective& collective) {
  if (network.switches() == 0)
    return std::string("relay needs NPUs on switches (such as switch:16 or fattree:8x4x2)");
  if (collective.num_members() < 2) return std::string("relay needs two or more members");
  for (const NpuId m : collective.members()) {
    const auto out = network.out_links(m), in = network.in_links(m);
    if (out.size() != 1 || in.size() != 1 || !network.is_switch(network.link(out.front()).dst) ||
        !network.is_switch(network.link(in.front()).src))
      return "relay needs every member to have one port, into a switch (NPU " + std::to_string(m) +
             " has " + std::to_string(out.size()) + " links out and " + std::to_string(in.size()) +
             " in)";
  }
  const SwitchRoutes& routes = network.switch_routes();
  const NpuId root = collective.root();
  for (const NpuId m : collective.members())
    if (m != root && (routes.route(root, m).empty() || routes.route(m, root).empty()))
      return "relay: NPU " + std::to_string(m) + " and the root " + std::to_string(root) +
             " are not joined through switches";
  return std::nullopt;
}

Algorithm relay_baseline(const Topology& topology, const Topology& timing,
                         const Collective& collective, LinkModel model) {
  if (auto reason = relay_inapplicable(timing, collective)) throw Error(*reason);
  const int n = collective.num_members();
  // Every non-root member receives every chunk once, over a route of at least two hops.
  require_transfers_within(2.0 * (n - 1) * collective.num_chunks(), kBaselineTransferBudget,
                           "at least %.0f chunk transfers (two hops per message) > %.0f, the "
                           "baselines' budget");
  const std::vector<RelayMessage> messages = RelayPlanner(timing, collective, model).plan();
  const auto& members = collective.members();
  const bool reduce = collective.kind() == CollectiveKind::kReduce;
  LogicalSchedule schedule(topology, timing, collective);
  const auto last = static_cast<std::int64_t>(messages.size()) - 1;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const RelayMessage& m = messages[i];
    const auto step = static_cast<std::int64_t>(i);
    if (reduce)
      schedule.send(members[m.to], members[m.from], last - step, m.chunk, /*reduce=*/true);
    else
      schedule.send(members[m.from], members[m.to], step, m.chunk);
  }
  return schedule.build("relay", model);
}

}  // namespace tacos::detail
