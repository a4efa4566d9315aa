// The relay baseline (baselines.h): Broadcast and Reduce over switches: a switch's or a
// fat-tree's hosts, a DGX pod's GPUs. A unicast switch copies nothing, so every NPU but the root
// must receive the whole buffer and, together, they must also send it on (N - 1 buffers over N
// ports): the ports are all needed nearly all the time, and what a tree loses is its depth (each
// level a store-and-forward hop through the switch) and the root's per-message latencies. Here
// every port, whenever it is free, sends a chunk on (a list schedule): the rarest chunk its NPU
// holds, to the receiver lacking it that would take it with the least queueing on the way, then
// not into another domain (a leaf, a DGX node: NPUs by the switch of their fastest link) that
// already has it, then the one whose link in has taken the fewest messages, then holding the
// fewest chunks. A port whose receivers all lie in other domains (a GPU's NIC) sends a chunk
// only into a domain that has none of it, which spreads it over its own switch (the NVSwitch).
// Chunks spread from the root as a postal broadcast does while the root keeps sending new ones.
// The plan is timed by the simulator's port engine as it is made and its steps are the order of
// the choices, so the simulator replays the same times (tests/relay_test.cpp). Reduce is the
// time reversal.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../simulation/port_engine.h"
#include "domain_relay.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {
namespace {

// The root's domain's last chunks out alone: from when per_port chunks per port out of it are
// left to leave it, while they leave or to the end (one plan each, relay_baseline).
struct RelayTail {
  int per_port = 0;
  bool to_the_end = false;
};
constexpr int kTailSingles[] = {3, 6, 1, 4, 8, 2};
// Chunk deliveries all of relay's plans for one collective may make together: every tail plan
// on dgx-h100:16 up to K = 1,024, half of them on dgx-h100:64 at K = 512, none at K = 2,048.
constexpr double kRelayPlanBudget = 3.5e6;

// One chosen message: member `from` sends chunk `chunk` to member `to`.
struct RelayMessage {
  int from, to;
  std::int32_t first, count;  // its chunks, in the planner's chunk pool
};

// Chooses the messages while the simulator's own port engine times them (with the simulator's
// rules for one instant, and this planner's choices last), so the plan's times are the times
// the schedule gets. Where a message would go is estimated from the links as this planner
// booked them, in the order it chose (a switch serves in arrival order, so the estimate can be
// off where routes differ in length: a fat-tree's).
class RelayPlanner {
 public:
  RelayPlanner(const Topology& network, const Collective& collective, LinkModel model, bool growing,
               RelayTail tail)
      : growing_(growing),
        tail_(tail),
        routes_(network.switch_routes()),
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
        link_free_(network.links().size(), 0),
        in_count_(network.links().size(), 0) {
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
    find_domains(network);
    make_ports(network);
    port_free_.assign(ports_.size(), 0);
    sent_.assign(ports_.size(), 0);
    // Where every port stays in its domain or leaves it (a DGX pod's NVSwitch ports and NICs),
    // messages carry up to two chunks; on a fat-tree's or a switch's hosts pairs only slowed it
    // (docs/quality.md, "Measured choices").
    bool mixed = false;
    for (const Port& port : ports_) mixed = mixed || (!port.external && !port.internal);
    // Under the astra model a latency does not hold the port, and pairs only wait longer.
    if (domains_ > 1 && !mixed && model_ == LinkModel::kTacos) max_batch_ = growing_ ? 3 : 2;
  }

  std::vector<ChunkId>& pool() { return pool_; }
  // When the plan's last message arrives: the schedule's time (the simulator replays it).
  Time finish() const { return finish_; }
  bool batches() const { return max_batch_ > 1; }

  std::vector<RelayMessage> plan() {
    const std::size_t total = total_;
    messages_.reserve(total);
    auto started = [](PortEngine&, std::uint32_t, Time) {};
    auto arrived = [&](PortEngine& engine, std::uint32_t msg, Time now) {
      finish_ = std::max(finish_, now);
      const RelayMessage& m = messages_[msg];
      for (std::int32_t k = 0; k < m.count; ++k) {
        const ChunkId c = pool_[m.first + k];
        has_[index(m.to, c)] = 2;
        useful_[m.to].push_back(c);
      }
      wake(engine, m.to, now);
    };
    auto event = [&](PortEngine& engine, std::uint32_t, std::uint32_t port, Time now) {
      decide(engine, static_cast<int>(port), now);
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
    wake(engine, root_, 0);
    engine.run();
    if (delivered_ != total)
      throw Error("relay: internal error: " + std::to_string(delivered_) + " deliveries of " +
                  std::to_string(total));
    return std::move(messages_);
  }

 private:
  static constexpr std::uint32_t kDecide = PortEngine::kFirstCallerKind;
  static constexpr std::size_t kRarest = 4;  // chunks a port weighs its receivers for
  static constexpr int kSinglesFirst = 2;    // messages of one chunk a port starts with
  static constexpr int kGrowth = 3;          // messages per size step, growing batches

  struct Receiver {
    int member;
    int peer;  // index into the sender's switch_peers
  };
  struct Port {
    int member;
    LinkId link;
    bool external;  // every receiver in another domain
    bool internal;  // every receiver in the sender's domain
    std::vector<Receiver> receivers;
  };

  // Domains: members by the switch of their fastest port (domain_switch: a fat-tree's leaf, a
  // DGX node's NVSwitch), numbered in member order.
  void find_domains(const Topology& network) {
    std::vector<DeviceId> switches;
    for (int i = 0; i < n_; ++i) {
      const DeviceId fastest = domain_switch(network, members_[i]);
      auto it = std::find(switches.begin(), switches.end(), fastest);
      domain_.push_back(static_cast<int>(it - switches.begin()));
      if (it == switches.end()) switches.push_back(fastest);
    }
    domains_ = static_cast<int>(switches.size());
    domain_size_.assign(switches.size(), 0);
    for (int i = 0; i < n_; ++i) ++domain_size_[domain_[i]];
    domain_count_.assign(switches.size() * static_cast<std::size_t>(chunks_), 0);
    domain_holders_.assign(chunks_, 1);
    for (ChunkId c = 0; c < chunks_; ++c) ++domain_count_[domain_index(domain_[root_], c)];
  }

  // Ports: every member's links out, each with the members its routes start on it. A port
  // whose receivers all lie in other domains (a DGX GPU's NIC) sends a chunk only into a
  // domain that has none of it: the domain spreads it over its own fast links.
  void make_ports(const Topology& network) {
    port_begin_.push_back(0);
    for (int a = 0; a < n_; ++a) {
      const NpuId from = members_[a];
      const auto peers = routes_.switch_peers(from);
      const std::size_t first = static_cast<std::size_t>(
          std::lower_bound(peers.begin(), peers.end(), from) - peers.begin());
      for (const LinkId l : network.out_links(from)) {
        Port port{a, l, true, true, {}};
        // Receivers in NPU order from the sender on (ties go round).
        for (std::size_t j = 0; j < peers.size(); ++j) {
          const std::size_t p = (first + j) % peers.size();
          const int b = member_of_[peers[p]];
          if (b < 0 || routes_.switch_route(from, static_cast<int>(p)).front() != l) continue;
          port.receivers.push_back({b, static_cast<int>(p)});
          if (domain_[b] == domain_[a])
            port.external = false;
          else
            port.internal = false;
        }
        if (port.receivers.empty()) continue;
        if (port.external && domain_[a] == domain_[root_]) ++root_exits_;
        ports_.push_back(std::move(port));
      }
      port_begin_.push_back(static_cast<int>(ports_.size()));
    }
  }

  void wake(PortEngine& engine, int member, Time now) {
    for (int p = port_begin_[member]; p < port_begin_[member + 1]; ++p)
      engine.post(now, kDecide, static_cast<std::uint32_t>(p));
  }

  std::size_t domain_index(int domain, ChunkId c) const {
    return static_cast<std::size_t>(domain) * chunks_ + static_cast<std::size_t>(c);
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
  Time queueing(std::span<const LinkId> route, Time t) const {
    Time ready = t;
    for (const LinkId l : route) ready = std::max(ready, link_free_[l]) + busy_[l] + extra_[l];
    return ready - t - path_time(route);
  }

  // A port is free at `now`: it sends the rarest chunk its member holds that one of its
  // receivers lacks (an external port: that one of their domains lacks), to the receiver that
  // would take it with the least queueing, then (on a fat-tree) not into another domain that
  // already has it, then holding the fewest chunks. The simulator starts a message as soon as
  // its port is free and its chunk is there, so a port never holds back for a better receiver.
  void decide(PortEngine& engine, int p, Time now) {
    if (port_free_[p] > now || delivered_ == total_) return;
    const Port& port = ports_[p];
    const int a = port.member;
    // The chunks it holds that someone still lacks (a chunk every member has or receives is
    // dropped for good: holders only grow), rarest first.
    std::vector<ChunkId>& useful = useful_[a];
    std::erase_if(useful, [&](ChunkId c) { return holders_[c] >= n_; });
    candidates_.clear();
    const int own = domain_[a];
    // The root's domain sends each chunk out once: its external ports are the only way out
    // for chunks no other domain has yet, so they take nothing else while any is left.
    const bool root_exit = port.external && own == domain_[root_] && left_root_ < chunks_;
    auto offered = [&](ChunkId c) {
      if (port.external) return root_exit ? domain_holders_[c] == 1 : domain_holders_[c] < domains_;
      return !port.internal || domain_count_[domain_index(own, c)] < domain_size_[own];
    };
    for (const ChunkId c : useful)
      if (offered(c)) candidates_.push_back(c);
    if (candidates_.empty()) return;  // an arrival wakes it again
    auto rarer = [&](ChunkId x, ChunkId y) {
      if (port.external && domain_holders_[x] != domain_holders_[y])
        return domain_holders_[x] < domain_holders_[y];
      return holders_[x] != holders_[y] ? holders_[x] < holders_[y] : x < y;
    };
    // Usually the rarest has a receiver at once: order only as far as needed.
    const std::size_t head = std::min<std::size_t>(candidates_.size(), kRarest);
    std::partial_sort(candidates_.begin(), candidates_.begin() + head, candidates_.end(), rarer);
    bool ordered = head == candidates_.size();
    auto order_rest = [&] {
      if (!ordered) std::sort(candidates_.begin() + head, candidates_.end(), rarer);
      ordered = true;
    };
    const NpuId from = members_[a];
    int best = -1;
    ChunkId best_chunk = 0;
    Time best_wait = 0;
    int best_needless = 0;
    int best_taken = 0;
    // The least queueing among the rarest few will do; past them only while none has a
    // receiver (a port that finds none sleeps until its member receives a chunk).
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      if (i == head) {
        if (best >= 0) break;
        order_rest();
      }
      const ChunkId c = candidates_[i];
      for (const Receiver& r : port.receivers) {
        const int b = r.member;
        if (has_[index(b, c)] != 0) continue;
        const bool domain_has = domain_count_[domain_index(domain_[b], c)] > 0;
        if (port.external && domain_has) continue;
        const auto route = routes_.switch_route(from, r.peer);
        const Time wait = queueing(route, now);
        // A copy into another domain that already has the chunk crosses the spines needlessly.
        const int needless = domain_[b] != domain_[a] && domain_has ? 1 : 0;
        // Then the receiver's port that has taken the fewest messages (one port: the member
        // holding the fewest chunks).
        const int taken = in_count_[route.back()];
        if (best < 0 || wait < best_wait ||
            (wait == best_wait &&
             (needless < best_needless ||
              (needless == best_needless &&
               (taken < best_taken || (taken == best_taken && count_[b] < count_[best])))))) {
          best_taken = taken;
          best_needless = needless;
          best = b;
          best_chunk = c;
          best_wait = wait;
        }
      }
      if (best >= 0 && best_wait == 0) break;
    }
    if (best < 0) return;
    // More chunks for the same receiver in the same message (DGX pods), rarest first.
    batch_.assign(1, best_chunk);
    const int b = best;
    // Pairs after a port's first messages: a single chunk reaches the next node sooner while
    // it has nothing, a pair pays one latency on each port for two chunks. Growing: a port's
    // first kGrowth messages carry one chunk, the next kGrowth two, the rest up to three.
    int limit = growing_                   ? std::min(max_batch_, 1 + sent_[p] / kGrowth)
                : sent_[p] < kSinglesFirst ? 1
                                           : max_batch_;
    // The root's domain's ports out send one chunk at a time once its last chunks are leaving
    // (and, to the end, after): they reach the next node sooner.
    if ((tail_.to_the_end ? port.external && own == domain_[root_] : root_exit) &&
        chunks_ - left_root_ < tail_.per_port * root_exits_)
      limit = 1;
    ++sent_[p];
    for (std::size_t i = 0; i < candidates_.size() && static_cast<int>(batch_.size()) < limit;
         ++i) {
      if (i == head) order_rest();
      const ChunkId c = candidates_[i];
      if (c == best_chunk || has_[index(b, c)] != 0) continue;
      if (port.external && domain_count_[domain_index(domain_[b], c)] > 0) continue;
      batch_.push_back(c);
    }
    send(engine, p, best, now);
  }

  void send(PortEngine& engine, int p, int b, Time now) {
    const int a = ports_[p].member;
    const auto id = static_cast<std::uint32_t>(messages_.size());
    const auto count = static_cast<std::int32_t>(batch_.size());
    messages_.push_back(RelayMessage{a, b, static_cast<std::int32_t>(pool_.size()), count});
    pool_.insert(pool_.end(), batch_.begin(), batch_.end());
    const auto route = routes_.route(members_[a], members_[b]);
    Time ready = now;
    for (const LinkId l : route) {
      link_free_[l] = std::max(ready, link_free_[l]) + port_time(l, count);
      ready = link_free_[l] + extra_[l];
    }
    port_free_[p] = now + port_time(route.front(), count);
    ++in_count_[route.back()];
    for (const ChunkId c : batch_) {
      has_[index(b, c)] = 1;
      ++count_[b];
      ++holders_[c];
      int& in_domain = domain_count_[domain_index(domain_[b], c)];
      if (in_domain++ == 0 && ++domain_holders_[c] == 2) ++left_root_;
      ++delivered_;
    }
    engine.set_message(id, route, bytes_ * count, batch_.front());
    engine.send(id, now);
    engine.post(port_free_[p], kDecide, static_cast<std::uint32_t>(p));
  }

  // How long a message of `count` chunks holds link l.
  Time port_time(LinkId l, int count) const {
    if (count == 1) return busy_[l];
    const Link& link = network_.link(l);
    return link_busy_time(model_, link.latency_ps,
                          serialization_time(bytes_ * count, link.bandwidth_gbps));
  }

  const bool growing_;  // batches grow 1, 2, 3 (else singles, then pairs)
  const RelayTail tail_;
  const SwitchRoutes& routes_;
  const std::vector<NpuId>& members_;
  const int n_;
  const int chunks_;
  const int root_;
  const Bytes bytes_;
  const std::size_t total_;  // chunk deliveries: every chunk to every member but the root
  const LinkModel model_;
  const Topology& network_;
  std::vector<char> has_;                     // per (member, chunk): 0 lacks, 1 on its way, 2 holds
  std::vector<int> holders_;                  // per chunk: members holding it or receiving it
  std::vector<std::vector<ChunkId>> useful_;  // per member: chunks it holds, some lack
  std::vector<int> count_;                    // per member: chunks held or on their way
  std::vector<Port> ports_;
  std::vector<int> port_begin_;     // per member + 1: its ports in ports_
  std::vector<Time> port_free_;     // per port: its next free time
  std::vector<Time> link_free_;     // per link: as this planner booked it (an estimate)
  std::vector<int> in_count_;       // per link: messages booked ending on it
  std::vector<Time> busy_, extra_;  // per link: busy time of one chunk, arrival after busy
  std::vector<ChunkId> candidates_;
  std::vector<RelayMessage> messages_;
  std::vector<ChunkId> pool_;   // the messages' chunks
  std::vector<ChunkId> batch_;  // the message being made
  std::size_t delivered_ = 0;   // chunk deliveries booked
  Time finish_ = 0;             // the latest arrival so far
  std::vector<int> sent_;       // per port: messages it sent
  int max_batch_ = 1;           // chunks a message may carry
  std::vector<int> member_of_;  // per NPU: its member index, -1 if none
  std::vector<int> domain_;     // per member: its domain
  int domains_ = 0;
  int root_exits_ = 0;               // external ports of the root's domain
  int left_root_ = 0;                // chunks some domain but the root's has
  std::vector<int> domain_size_;     // per domain: its members
  std::vector<int> domain_count_;    // per (domain, chunk): members there holding or receiving it
  std::vector<int> domain_holders_;  // per chunk: domains with a member holding or receiving it
};

}  // namespace

std::optional<std::string> relay_inapplicable(const Topology& network,
                                              const Collective& collective) {
  if (network.switches() == 0)
    return std::string(
        "relay needs NPUs on switches (such as switch:16, fattree:8x4x2 or "
        "dgx-h100:4)");
  if (collective.num_members() < 2) return std::string("relay needs two or more members");
  for (const NpuId m : collective.members()) {
    for (const LinkId l : network.out_links(m))
      if (!network.is_switch(network.link(l).dst))
        return "relay needs every member's links to go to switches (NPU " + std::to_string(m) +
               " has a direct link to NPU " + std::to_string(network.link(l).dst) + ")";
    if (network.in_links(m).empty() || network.out_links(m).empty())
      return "relay: NPU " + std::to_string(m) + " has no link in or out";
  }
  // Every member reachable from the root through members and switch routes.
  const SwitchRoutes& routes = network.switch_routes();
  std::vector<char> member(network.npus(), 0), seen(network.npus(), 0);
  for (const NpuId m : collective.members()) member[m] = 1;
  std::vector<NpuId> stack{collective.root()};
  seen[collective.root()] = 1;
  while (!stack.empty()) {
    const NpuId u = stack.back();
    stack.pop_back();
    for (const NpuId v : routes.switch_peers(u))
      if (member[v] && !seen[v]) {
        seen[v] = 1;
        stack.push_back(v);
      }
  }
  for (const NpuId m : collective.members())
    if (!seen[m])
      return "relay: NPU " + std::to_string(m) + " cannot be reached from the root " +
             std::to_string(collective.root()) + " through switches and members";
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
  // On DGX pods (messages of several chunks) two plans: pairs after singles, and batches
  // growing to three; neither is faster everywhere (docs/quality.md, "Measured choices"). Then
  // tail plans, as many as kRelayPlanBudget allows: both families with the root's node's last
  // j chunks per NIC out one at a time, while they leave it or to the end. Where the list
  // schedule's tail falls moves by microseconds with such a change, in no order a rule could
  // follow (docs/quality.md), so the fastest plan is kept (the earlier on a tie), as the greedy
  // keeps its best trial. A Broadcast's plans are ranked by their own times, which the
  // simulator replays, and only the fastest is built; a Reduce's reversals are built and timed,
  // since a reversal's time does not follow its plan's.
  const auto& members = collective.members();
  const bool reduce = collective.kind() == CollectiveKind::kReduce;
  auto build = [&](const std::vector<RelayMessage>& messages, const std::vector<ChunkId>& pool) {
    LogicalSchedule schedule(topology, timing, collective);
    const auto last = static_cast<std::int64_t>(messages.size()) - 1;
    for (std::size_t i = 0; i < messages.size(); ++i) {
      const RelayMessage& m = messages[i];
      const auto step = static_cast<std::int64_t>(i);
      const std::span<const ChunkId> chunks(pool.data() + m.first,
                                            static_cast<std::size_t>(m.count));
      if (reduce)
        schedule.send(members[m.to], members[m.from], last - step, chunks, /*reduce=*/true);
      else
        schedule.send(members[m.from], members[m.to], step, chunks);
    }
    return schedule.build("relay", model);
  };
  std::vector<RelayMessage> best;
  std::vector<ChunkId> best_pool;
  std::optional<Algorithm> best_reduce;
  Time best_finish = std::numeric_limits<Time>::max();
  auto plan = [&](bool growing, RelayTail tail) {
    RelayPlanner planner(timing, collective, model, growing, tail);
    std::vector<RelayMessage> messages = planner.plan();
    if (reduce) {
      Algorithm built = build(messages, planner.pool());
      if (!best_reduce || built.collective_time < best_reduce->collective_time)
        best_reduce = std::move(built);
    } else if (planner.finish() < best_finish) {
      best = std::move(messages);
      best_pool = std::move(planner.pool());
      best_finish = planner.finish();
    }
    return planner.batches();
  };
  if (plan(false, {})) {
    plan(true, {});
    // As many tail plans as kRelayPlanBudget allows, the most often fastest first.
    const double deliveries = static_cast<double>(n - 1) * collective.num_chunks();
    int more = static_cast<int>(kRelayPlanBudget / deliveries) - 2;
    for (const int per_port : kTailSingles)
      for (const bool to_the_end : {false, true})
        for (const bool growing : {false, true})
          if (more-- > 0) plan(growing, {per_port, to_the_end});
  }
  if (reduce) return std::move(*best_reduce);
  return build(best, best_pool);
}

}  // namespace tacos::detail
