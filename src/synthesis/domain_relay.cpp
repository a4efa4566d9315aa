#include "domain_relay.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "justification.h"
#include "link_events.h"
#include "reduction.h"
#include "tacos/common/units.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {

DeviceId domain_switch(const Topology& topology, NpuId npu) {
  LinkId best = -1;
  for (const LinkId l : topology.out_links(npu)) {
    if (!topology.is_switch(topology.link(l).dst)) continue;
    if (best < 0 || topology.link(l).bandwidth_gbps > topology.link(best).bandwidth_gbps) best = l;
  }
  return best < 0 ? -1 : topology.link(best).dst;
}

namespace {

constexpr int kMaxBatch = 1024;
// Broadcast plans where any member of an entry domain forwards are tried from this many domains
// on: on 4 DGX nodes they lost once justified (dgx-h100:4 under the astra model 162.7 -> 163.2
// us), on 8 and more one entry per chunk leaves NICs idle (docs/quality.md, "Measured choices").
constexpr std::size_t kAnyForwarderMinDomains = 8;
// Up to this many chunk deliveries the second fastest plan is justified as well (below).
constexpr double kJustifyRunnerUpDeliveries = 65536;

struct Domains {
  std::vector<int> of;        // per NPU
  std::vector<int> position;  // per NPU: index among its domain's members (ids ascending)
  std::vector<std::vector<NpuId>> members;
};

// The domain of an NPU is the switch its fastest port leads to (domain_switch).
std::optional<Domains> find_domains(const Topology& topology) {
  const int n = topology.npus();
  Domains domains;
  domains.of.assign(n, -1);
  domains.position.assign(n, 0);
  std::vector<int> index(topology.devices(), -1);
  for (NpuId u = 0; u < n; ++u) {
    const DeviceId s = domain_switch(topology, u);
    if (s < 0) return std::nullopt;  // an NPU on direct links only
    if (index[s] < 0) {
      index[s] = static_cast<int>(domains.members.size());
      domains.members.emplace_back();
    }
    domains.of[u] = index[s];
    domains.position[u] = static_cast<int>(domains.members[index[s]].size());
    domains.members[index[s]].push_back(u);
  }
  return domains;
}

// Every NPU in one domain: the plan is then direct sends.
Domains one_domain(int npus) {
  Domains domains;
  domains.of.assign(npus, 0);
  domains.position.resize(npus);
  domains.members.emplace_back();
  for (NpuId u = 0; u < npus; ++u) {
    domains.position[u] = u;
    domains.members[0].push_back(u);
  }
  return domains;
}

// One plan's message sizes: a stream carries up to `factor` x its route's latency in
// serialization per message (0: one chunk per message).
struct Options {
  int relay_factor = 0;     // chunks a member passes on inside its domain
  int own_factor = 0;       // a source's own chunks, inside its domain
  int network_factor = 0;   // between domains
  bool short_tail = false;  // a source's last message between domains is one chunk
  bool own_first = false;   // a port sends its own chunks before relayed ones
  // Broadcast only: chunk c is exported by the root domain's member at position c mod |domain|
  // (the root included), which also spreads it there (the root's own exports go to the other
  // members in turn), and its first domain hop turns every |domain| chunks; 0: the default hubs.
  bool by_position = false;
  int short_head = 0;  // a stream's first messages carry one chunk each
  // Broadcast only: an entry domain's chunk goes on to each remaining domain over the NIC of
  // the member assign_forwarders() picks, not all over the entry's own NIC.
  bool any_forwarder = false;
};

// The plans tried. Under the tacos link model every message holds each port for its latency, so
// larger messages pay; under the astra model they do not, and one chunk per message pipelines best.
// Which plan wins depends on the fabric and the collective (docs/quality.md, "Measured choices").
constexpr Options kTacosModelPlans[] = {
    {0, 0, 0, false, false},
    {16, 16, 8, false, true},
    {16, 16, 16, true, true},
    {16, 16, 16, false, false},
    {8, 8, 0, false, true},
    {16, 8, 4, false, true},
    // Broadcast: the root's port, which carries every chunk once, sends two-chunk messages after
    // single-chunk ones that start every exporter's NIC (docs/quality.md, "Measured choices").
    {4, 4, 0, false, false, true, 4},
    // Broadcast on many domains: every member of an entry domain forwards its share of the
    // domain's chunks (docs/quality.md, "Measured choices"); each of the three won somewhere.
    {4, 4, 0, false, false, true, 4, true},
    {8, 8, 4, true, false, true, 4, true},
    {0, 0, 0, false, false, false, 0, true},
};
constexpr Options kAstraModelPlans[] = {
    {0, 0, 0, false, false}, {0, 0, 0, false, true}, {0, 0, 0, false, false, false, 0, true}};

class RelayPlan {
 public:
  RelayPlan(const Topology& topology, const Collective& collective, LinkModel model,
            const Domains& domains)
      : topology_(topology),
        collective_(collective),
        model_(model),
        domains_(domains),
        routes_(topology.switch_routes()) {}

  // What a plan with `options` does depends on nothing else but the returned values, or
  // nullopt where that is not worked out. Two plans with the same signature make the same
  // schedule, so the second is not run. Worked out for All-Gather: a source's own chunks (K)
  // are all queued at the start, to every member of its domain and to one entry per other
  // domain, so each of those streams sends min(cap, K) chunks a message, and short_tail (own
  // streams between domains) changes nothing unless K > 1; an entry's relayed chunks go into its
  // own domain, capped by relay_factor; own_first ranks own against relayed streams, which only
  // entries have (several domains). The signature is those values, per NPU pair. At K = 1 every
  // plan over one domain is the first one, and over several the plans that differ only in
  // message sizes of own chunks are one.
  std::optional<std::vector<int>> signature(const Options& options) const {
    if (broadcast() || options.short_head > 0 || options.by_position || options.any_forwarder)
      return std::nullopt;
    const int n = topology_.npus();
    const int domains = static_cast<int>(domains_.members.size());
    std::vector<int> queued(n, 0);
    for (ChunkId c = 0; c < collective_.num_chunks(); ++c) ++queued[collective_.sources(c)[0]];
    const bool several_own = std::any_of(queued.begin(), queued.end(), [](int k) { return k > 1; });
    std::vector<int> values{domains > 1 && options.own_first, several_own && options.short_tail};
    values.reserve(static_cast<std::size_t>(n) * n + 2);
    for (NpuId u = 0; u < n; ++u)
      for (NpuId v = 0; v < n; ++v) {
        if (u == v) continue;
        const auto route = routes_.route(u, v);
        if (domains_.of[u] == domains_.of[v]) {
          values.push_back(std::min(queued[u], cap_of(route, options.own_factor)));
          if (domains > 1) values.push_back(cap_of(route, options.relay_factor));
        } else if (entry_[static_cast<std::size_t>(u) * domains + domains_.of[v]] == v) {
          values.push_back(std::min(queued[u], cap_of(route, options.network_factor)));
        }
      }
    return values;
  }

  // False when some entry cannot be reached through switches.
  bool prepare() {
    const int n = topology_.npus();
    const int d = static_cast<int>(domains_.members.size());
    entry_.assign(static_cast<std::size_t>(n) * d, -1);
    for (NpuId u = 0; u < n; ++u)
      for (int other = 0; other < d; ++other) {
        if (other == domains_.of[u]) continue;
        const auto& members = domains_.members[other];
        const int size = static_cast<int>(members.size());
        for (int k = 0; k < size; ++k) {
          const NpuId candidate = members[(domains_.position[u] + k) % size];
          if (!routes_.route(u, candidate).empty()) {
            entry_[static_cast<std::size_t>(u) * d + other] = candidate;
            break;
          }
        }
        if (entry_[static_cast<std::size_t>(u) * d + other] < 0) return false;
      }
    for (const auto& members : domains_.members)
      for (NpuId a : members)
        for (NpuId b : members)
          if (a != b && routes_.route(a, b).empty()) return false;
    return true;
  }

  Algorithm run(const Options& options) {
    options_ = options;
    streams_.clear();
    stream_index_.clear();
    port_streams_.assign(topology_.num_links(), {});
    port_free_.assign(topology_.num_links(), 0);
    if (broadcast() && options_.any_forwarder) assign_forwarders();
    Algorithm algorithm(collective_);
    algorithm_ = &algorithm;
    LinkEventQueue events;
    std::vector<LinkId> touched;
    for (ChunkId c = 0; c < collective_.num_chunks(); ++c) {
      const NpuId source = collective_.sources(c)[0];
      obtain(source, c, -1, touched);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (LinkId port : touched) events.push(link_free_event(0, port));
    run_link_events(
        events,
        [&](std::int32_t id, Time, std::vector<LinkId>& ports) {
          // The event id is the transfer's index; obtain() adds no transfers.
          const Transfer& t = algorithm.transfers()[static_cast<std::size_t>(id)];
          for (ChunkId c : algorithm.chunks(t)) obtain(t.dst, c, t.src, ports);
        },
        [&](LinkId port, Time now) { try_send(port, now, events); });
    algorithm.synthesizer = "tacos";
    algorithm.link_model = model_;
    return algorithm;
  }

 private:
  struct Stream {
    NpuId src, dst;
    LinkId port;
    LinkId last;  // the route's last link, into the receiver
    bool own;     // a source's own chunks
    int cap;      // chunks per message at most
    int sent;     // messages so far
    std::vector<ChunkId> queue;
    std::size_t head = 0;
  };
  bool broadcast() const { return collective_.kind() == CollectiveKind::kBroadcast; }

  // Broadcast: the root hands chunk c to another member of its domain, in turn, which spreads
  // it (the root's port then carries each chunk once). All-Gather: the source spreads its own.
  NpuId distributor(ChunkId c) const {
    const NpuId source = collective_.sources(c)[0];
    if (!broadcast()) return source;
    const auto& members = domains_.members[domains_.of[source]];
    if (members.size() == 1) return source;
    // The k-th member other than the root, k counted mod |domain| - 1.
    auto other_than_root = [&](std::size_t k) {
      k %= members.size() - 1;
      const std::size_t skip = static_cast<std::size_t>(domains_.position[source]);
      return members[k < skip ? k : k + 1];
    };
    if (!options_.by_position) return other_than_root(static_cast<std::size_t>(c));
    const NpuId e = exporter(c);
    return e != source ? e : other_than_root(static_cast<std::size_t>(c) / members.size());
  }

  // Broadcast: the member of the root's domain that sends chunk c to the other domains: its
  // hub, except one chunk in |domain| that the root sends itself (its NIC is as fast as the
  // others', and a hub exports what it already holds).
  NpuId exporter(ChunkId c) const {
    const NpuId root = collective_.sources(c)[0];
    const std::size_t size = domains_.members[domains_.of[root]].size();
    if (options_.by_position) return domains_.members[domains_.of[root]][c % size];
    return static_cast<std::size_t>(c) % size == size - 1 ? root : distributor(c);
  }

  // `u` now holds `c`, from `from` (-1: its own): queue what it owes others for it.
  void obtain(NpuId u, ChunkId c, NpuId from, std::vector<LinkId>& touched) {
    const bool received = from >= 0;
    const NpuId source = collective_.sources(c)[0];
    const NpuId hub = distributor(c);
    const int domain = domains_.of[u];
    const int domains = static_cast<int>(domains_.members.size());
    const bool entry = received && domains_.of[from] != domain;
    auto spread_locally = [&] {
      for (NpuId v : domains_.members[domain])
        if (v != u && v != source) owe(u, v, c, !received, touched);
    };
    auto owe_domain = [&](int other) {
      owe(u, entry_[static_cast<std::size_t>(u) * domains + other], c, !received, touched);
    };
    if (!broadcast()) {
      // All-Gather: the source sends its chunk into its domain and to one entry per domain,
      // each entry into its own domain.
      if (u != hub && !entry) return;
      spread_locally();
      if (u == hub)
        for (int other = 0; other < domains; ++other)
          if (other != domain) owe_domain(other);
      return;
    }
    // Broadcast: the root hands each chunk to one hub, which spreads it in the root's domain;
    // one exporter per chunk sends it to one other domain in turn, whose entry spreads it there
    // and sends it on to the remaining domains. Every domain's NICs then take the buffer in
    // once, no chunk crosses more than two domain hops (a chain would be domains - 1 deep), and
    // the root's domain sends each chunk out once (a star would send it domains - 1 times).
    const int root_domain = domains_.of[source];
    if (domain == root_domain) {
      if (u == source && hub != source) owe(u, hub, c, !received, touched);
      if (u == hub) spread_locally();
      if (u == exporter(c) && domains > 1) owe_domain(entry_domain(c));
      return;
    }
    // The member's share of what its domain forwards to the remaining domains: all of it at the
    // entry, unless any member forwards.
    auto forward_share = [&] {
      for (int other = 0; other < domains; ++other)
        if (other != domain && other != root_domain &&
            (!options_.any_forwarder || forwarder(c, other) == domains_.position[u]))
          owe_domain(other);
    };
    if (!entry) {
      // Inside the entry domain, from its entry.
      if (options_.any_forwarder && received && domain == entry_domain(c)) forward_share();
      return;
    }
    spread_locally();
    if (domains_.of[from] == root_domain) forward_share();
  }

  // Broadcast: the domain that the exporter of chunk c sends it to, the other domains in turn.
  int entry_domain(ChunkId c) const {
    const int root_domain = domains_.of[collective_.sources(c)[0]];
    const int domains = static_cast<int>(domains_.members.size());
    if (domains == 1) return root_domain;
    // By position, the turns go by whole rounds of the root's domain, except where any member
    // forwards: then chunk by chunk, which evens the chunks entering each domain out.
    const int turn =
        options_.by_position && !options_.any_forwarder
            ? static_cast<int>(static_cast<std::size_t>(c) / domains_.members[root_domain].size())
            : c;
    return (root_domain + 1 + turn % (domains - 1)) % domains;
  }

  // Broadcast with any_forwarder: the position of the member of c's entry domain that sends c to
  // domain `other` (assign_forwarders()).
  int forwarder(ChunkId c, int other) const {
    return forwarder_[static_cast<std::size_t>(c) * domains_.members.size() +
                      static_cast<std::size_t>(other)];
  }

  // In chunk order, each (chunk, remaining domain) pair goes to the position whose NICs have
  // the least to do so far: the larger of the sends at the entry domain's member and the
  // receives at the target domain's member, the entries' receives from the root's domain
  // included (ties: from the entry's own position on, turning with the target). Every
  // member of a domain then sends about the same and takes in about the same, which a fixed
  // rotation does not give (its remainders fall on the same positions for every source domain).
  void assign_forwarders() {
    const int domains = static_cast<int>(domains_.members.size());
    const NpuId root = collective_.sources(0)[0];
    const int root_domain = domains_.of[root];
    forwarder_.assign(static_cast<std::size_t>(collective_.num_chunks()) * domains, -1);
    std::vector<std::vector<int>> sends(domains), receives(domains);
    for (int d = 0; d < domains; ++d) {
      sends[d].assign(domains_.members[d].size(), 0);
      receives[d].assign(domains_.members[d].size(), 0);
    }
    for (ChunkId c = 0; c < collective_.num_chunks(); ++c) {
      const int domain = entry_domain(c);
      const int size = static_cast<int>(domains_.members[domain].size());
      // The entry's NIC takes the chunk in from the root's domain first.
      const NpuId entry = entry_[static_cast<std::size_t>(exporter(c)) * domains + domain];
      ++receives[domain][domains_.position[entry]];
      for (int other = 0; other < domains; ++other) {
        if (other == domain || other == root_domain) continue;
        const int other_size = static_cast<int>(domains_.members[other].size());
        int best = -1;
        std::pair<int, int> best_load;
        for (int k = 0; k < size; ++k) {
          const int p = (domains_.position[entry] + other + k) % size;
          const std::pair<int, int> load{
              std::max(sends[domain][p], receives[other][p % other_size]),
              sends[domain][p] + receives[other][p % other_size]};
          if (best < 0 || load < best_load) {
            best = p;
            best_load = load;
          }
        }
        ++sends[domain][best];
        ++receives[other][best % other_size];
        forwarder_[static_cast<std::size_t>(c) * domains + other] = best;
      }
    }
  }

  // `own`: c is one of u's own chunks (not relayed); own and relayed chunks go in separate
  // streams, which may differ in message size and priority.
  void owe(NpuId u, NpuId v, ChunkId c, bool own, std::vector<LinkId>& touched) {
    const std::uint64_t key = (static_cast<std::uint64_t>(u) << 33) |
                              (static_cast<std::uint64_t>(v) << 1) |
                              static_cast<std::uint64_t>(own);
    auto [it, inserted] = stream_index_.try_emplace(key, static_cast<int>(streams_.size()));
    if (inserted) {
      const auto route = routes_.route(u, v);
      const int factor = domains_.of[u] != domains_.of[v] ? options_.network_factor
                         : own                            ? options_.own_factor
                                                          : options_.relay_factor;
      streams_.push_back(
          Stream{u, v, route.front(), route.back(), own, cap_of(route, factor), 0, {}, 0});
    }
    Stream& stream = streams_[it->second];
    // A stream with nothing to send is not among its port's candidates; a chunk brings it back.
    if (stream.head == stream.queue.size())
      port_streams_[stream.port].push_back(candidate(it->second));
    stream.queue.push_back(c);
    touched.push_back(stream.port);
  }

  // A stream with chunks to send, as its port's scan reads it: everything of its rank but the
  // time its receiver's last port frees, which changes as other ports send (try_send).
  struct Candidate {
    bool later_class;    // relayed chunks go first unless own_first
    std::uint64_t rank;  // messages sent so far (high half), then the shift (low half)
    LinkId last;         // the route's last link, into the receiver
    int stream;
  };
  Candidate candidate(int s) const {
    const Stream& stream = streams_[s];
    return {stream.own != options_.own_first,
            (static_cast<std::uint64_t>(stream.sent) << 32) |
                static_cast<std::uint64_t>(shift_of(stream.src, stream.dst)),
            stream.last, s};
  }

  int cap_of(std::span<const LinkId> route, int factor) const {
    if (factor == 0) return 1;
    Time latency = 0, serial = 0;
    for (LinkId l : route) {
      latency += topology_.link(l).latency_ps;
      serial += serialization_time(collective_.chunk_bytes(), topology_.link(l).bandwidth_gbps);
    }
    const double wanted = std::ceil(static_cast<double>(factor) * static_cast<double>(latency) /
                                    static_cast<double>(std::max<Time>(serial, 1)));
    return static_cast<int>(std::clamp(wanted, 1.0, static_cast<double>(kMaxBatch)));
  }

  void try_send(LinkId port, Time now, LinkEventQueue& events) {
    if (port_free_[port] > now) return;
    // Relayed chunks first unless own_first (the finish waits on what arrives last), then the
    // receiver whose last port frees first (a switch's out-port queue is time lost), then the
    // stream that sent least, then the nearest receiver round the domain from the sender: every
    // sender picking the same shift makes one port per receiver, a permutation.
    // Ties go to the stream made first, the order streams were once scanned in.
    auto& candidates = port_streams_[port];
    if (candidates.empty()) return;
    std::size_t best_at = 0;
    for (std::size_t i = 1; i < candidates.size(); ++i) {
      const Candidate& c = candidates[i];
      const Candidate& b = candidates[best_at];
      if (c.later_class != b.later_class) {
        if (c.later_class < b.later_class) best_at = i;
        continue;
      }
      const Time c_free = port_free_[c.last], b_free = port_free_[b.last];
      if (c_free != b_free) {
        if (c_free < b_free) best_at = i;
        continue;
      }
      if (c.rank != b.rank ? c.rank < b.rank : c.stream < b.stream) best_at = i;
    }
    const int best = candidates[best_at].stream;
    Stream& stream = streams_[best];
    const int available = static_cast<int>(stream.queue.size() - stream.head);
    int cap = stream.cap;
    if (options_.short_tail && stream.own && domains_.of[stream.src] != domains_.of[stream.dst]) {
      // A source's stream knows what is left: the last message, which everything behind it
      // waits for, is one chunk.
      if (available > 1 && available <= cap) cap = available - 1;
    }
    if (stream.sent < options_.short_head) cap = 1;
    const int take = std::min(available, cap);
    const std::span<const ChunkId> chunks(stream.queue.data() + stream.head,
                                          static_cast<std::size_t>(take));
    stream.head += static_cast<std::size_t>(take);
    ++stream.sent;
    if (stream.head < stream.queue.size()) {
      candidates[best_at] = candidate(best);
    } else {
      candidates[best_at] = candidates.back();
      candidates.pop_back();
    }
    const Bytes bytes = collective_.chunk_bytes() * take;
    const auto route = routes_.route(stream.src, stream.dst);
    Time ready = now, first_busy_end = now;
    for (std::size_t h = 0; h < route.size(); ++h) {
      const Link& link = topology_.link(route[h]);
      const Time serial = serialization_time(bytes, link.bandwidth_gbps);
      const Time begin = h == 0 ? now : std::max(ready, port_free_[route[h]]);
      port_free_[route[h]] = begin + link_busy_time(model_, link.latency_ps, serial);
      if (h == 0) first_busy_end = port_free_[route[h]];
      ready = begin + link.latency_ps + serial;
    }
    algorithm_->add_transfer(stream.src, stream.dst, now, ready, chunks);
    events.push({ready, static_cast<std::int32_t>(algorithm_->transfers().size() - 1)});
    events.push(link_free_event(first_busy_end, port));
  }

  // How far round the receiver is from the sender: positions within a domain, else domains.
  int shift_of(NpuId u, NpuId v) const {
    const int du = domains_.of[u], dv = domains_.of[v];
    if (du != dv) {
      const int d = static_cast<int>(domains_.members.size());
      return (dv - du + d) % d;
    }
    const int size = static_cast<int>(domains_.members[du].size());
    return (domains_.position[v] - domains_.position[u] + size) % size;
  }

  const Topology& topology_;
  const Collective& collective_;
  LinkModel model_;
  const Domains& domains_;
  const SwitchRoutes& routes_;
  Options options_;
  std::vector<NpuId> entry_;    // [npu][domain]
  std::vector<int> forwarder_;  // Broadcast with any_forwarder: [chunk][domain] (forwarder())
  std::vector<Stream> streams_;
  std::unordered_map<std::uint64_t, int> stream_index_;
  std::vector<std::vector<Candidate>> port_streams_;  // per port: its streams with chunks
  std::vector<Time> port_free_;
  Algorithm* algorithm_ = nullptr;
};

}  // namespace

std::optional<Algorithm> domain_relay(const Topology& topology, const Collective& collective,
                                      LinkModel model) {
  const CollectiveKind kind = collective.kind();
  if (topology.switches() == 0) return std::nullopt;
  if (kind != CollectiveKind::kAllGather && kind != CollectiveKind::kBroadcast) return std::nullopt;
  if (collective.num_members() != topology.npus()) return std::nullopt;
  if (static_cast<double>(topology.npus()) * collective.num_chunks() > kDomainRelayMaxDeliveries)
    return std::nullopt;
  for (ChunkId c = 0; c < collective.num_chunks(); ++c)
    if (collective.sources(c).size() != 1) return std::nullopt;
  std::vector<Domains> layouts;
  if (std::optional<Domains> domains = find_domains(topology)) {
    // Every NPU in one domain as well (direct sends), where every pair has a switch route.
    if (domains->members.size() > 1) layouts.push_back(one_domain(topology.npus()));
    layouts.push_back(std::move(*domains));
  }
  const std::span<const Options> plans = model == LinkModel::kTacos
                                             ? std::span<const Options>(kTacosModelPlans)
                                             : std::span<const Options>(kAstraModelPlans);
  std::optional<Algorithm> best, runner_up;
  bool many_domains = false;
  for (const Domains& domains : layouts) {
    RelayPlan plan(topology, collective, model, domains);
    if (!plan.prepare()) continue;
    std::vector<std::vector<int>> signatures;  // of the plans run on this layout
    for (const Options& options : plans) {
      if ((options.by_position || options.any_forwarder) &&
          collective.kind() != CollectiveKind::kBroadcast)
        continue;
      if (options.any_forwarder && domains.members.size() < kAnyForwarderMinDomains) continue;
      many_domains = many_domains || options.any_forwarder;
      // A plan making the same schedule as one run before cannot be faster. (Only All-Gather
      // plans have signatures; the runner-up below is kept for Broadcast.)
      if (std::optional<std::vector<int>> same = plan.signature(options)) {
        if (std::find(signatures.begin(), signatures.end(), *same) != signatures.end()) continue;
        signatures.push_back(std::move(*same));
      }
      Algorithm algorithm = plan.run(options);
      compact(algorithm, topology, model);
      if (!best || algorithm.collective_time < best->collective_time) {
        runner_up = std::move(best);
        best = std::move(algorithm);
      } else if (!runner_up || algorithm.collective_time < runner_up->collective_time) {
        runner_up = std::move(algorithm);
      }
    }
  }
  // The ports' orders come from local rules; reordered by how late each message may start
  // (justification.h; gains: docs/quality.md, "Measured choices"). Where the forwarding plans
  // run, the second fastest plan is justified too, up to a size where that costs little: a
  // plan's gain from justification varies (dgx-h100:16 Broadcast, K = 256: the fastest 263.5 us
  // gains nothing, the second goes from 264.2 to 252.1 us; on dgx-a100:32 at K = 512, 131,072
  // deliveries, it gained nothing for 10 more CPU-seconds).
  if (!best) return best;
  std::optional<Algorithm> justified = justify_copy_schedule(*best, topology, model);
  if (justified && justified->collective_time < best->collective_time) best = std::move(justified);
  if (many_domains && runner_up &&
      static_cast<double>(topology.npus()) * collective.num_chunks() <=
          kJustifyRunnerUpDeliveries) {
    justified = justify_copy_schedule(*runner_up, topology, model);
    if (justified && justified->collective_time < best->collective_time)
      best = std::move(justified);
  }
  return best;
}

}  // namespace tacos::detail
