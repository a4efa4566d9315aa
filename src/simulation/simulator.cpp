// Event-driven, congestion-aware execution of an Algorithm (see simulator.h for the rules).
//
// Data layout (flat arrays, no devices x chunks matrix):
//  - per link, a FIFO queue: the link's transfers sorted by (recorded start, index), handed to
//    the port engine (port_engine.h), which times them and the switch ports they cross;
//  - per (device u, chunk c) that some transfer sends c from, a Group (16 bytes: there is one
//    per chunk delivery that is sent on, 33.5 million in an All-Gather on 4,096 NPUs at K = 2):
//    the transfers sending c from u (sorted by recorded start when reductions are involved) and,
//    under the reduction rules only, beside it the reduce transfers delivering c to u (sorted by
//    recorded end) and each sender's mode. A group's ranges end where the next group's begin (a
//    last, empty group closes them). Groups are built one chunk at a time with a scratch device
//    -> group array, and each chunk-pool entry remembers the group its arrival feeds. A group's
//    senders become ready in order (a cursor), each sender once per chunk it carries; a transfer
//    is ready when all its chunks are (a pending count).
//  - the engine's events: a link becoming free, a message reaching a switch or arriving.
#include "tacos/simulation/simulator.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "../algorithm/transfer_check.h"
#include "../common/group_by.h"
#include "port_engine.h"
#include "tacos/algorithm/verify.h"
#include "tacos/collective/collective.h"
#include "tacos/common/error.h"
#include "tacos/topology/switch_routes.h"

namespace tacos {
namespace {

// A Group's flags.
enum GroupFlag : std::uint8_t {
  kSource = 1,       // the device holds the chunk at time 0
  kArrived = 2,      // some transfer has delivered the chunk to the device
  kCopyArrived = 4,  // some copy (not reduce) transfer has delivered it
  // Reduction rules (senders have modes, checked one by one): what the last full pass over the
  // senders saw (see `advance`).
  kScanned = 8,
  kScannedArrived = 16,
  kScannedCopy = 32,
};

struct Group {
  DeviceId device = 0;
  std::uint32_t sender_begin = 0;  // into sender_tx (and modes); ends at the next group's begin
  // Copy rules: senders [sender_begin, woken) have the chunk. Reduction rules: the partial-sum
  // senders before it are woken (the cursor of `advance`).
  std::uint32_t woken = 0;
  std::uint8_t flags = 0;  // GroupFlag
};

// Reduction rules, one per group: the reduce transfers delivering the chunk, rin_tx[rin_begin,
// the next group's rin_begin), of which [rin_begin, done_prefix) have arrived.
struct ReduceInputs {
  std::uint32_t rin_begin = 0;
  std::uint32_t done_prefix = 0;
};

// When a sender has its chunk, under the reduction rules (see simulator.h).
enum class Wait : std::uint8_t {
  kNothing,     // its device is a source (contributor) and nothing was recorded to arrive before
  kFirstAny,    // the first delivery of the chunk to its device
  kFirstCopy,   // the first copy delivery (it forwards a finished value)
  kPartialSums  // the first `need` reduce deliveries by recorded end (it sends a partial sum)
};

// Reduction rules: how a sender (a transfer sending the group's chunk from the group's device)
// waits for it.
struct SenderMode {
  std::uint32_t need = 0;  // kPartialSums: how many reduce deliveries it waits for
  Wait wait = Wait::kFirstAny;
  bool woken = false;
};

}  // namespace

// One piece (about 350 lines) because its phases (checks, link queues, chunk groups, the run,
// the deadlock report) share a dozen flat arrays built once; the timing itself is the port
// engine's.
SimulationResult simulate(const Algorithm& algorithm, const Topology& topology, LinkModel model) {
  const auto& transfers = algorithm.transfers();
  const Collective& collective = algorithm.collective();
  const std::size_t num_transfers = transfers.size();
  const int num_chunks = collective.num_chunks();
  const int devices = topology.devices();
  const int num_links = topology.num_links();
  if (num_transfers >= std::numeric_limits<std::uint32_t>::max())
    throw Error("simulate: too many transfers (" + std::to_string(num_transfers) + ")");
  if (collective.topology_npus() != topology.npus())
    throw Error("simulate: the algorithm's collective is for a topology of " +
                std::to_string(collective.topology_npus()) + " NPUs but the topology has " +
                std::to_string(topology.npus()));

  // Routes (switches are devices: a message between NPUs without a direct link crosses them,
  // store-and-forward) and chunk ids, through the one transfer check.
  std::vector<std::span<const LinkId>> route_of(num_transfers);
  std::vector<LinkId> link_of(num_transfers);
  for (std::size_t i = 0; i < num_transfers; ++i) {
    const detail::TransferCheck check = detail::check_transfer(algorithm, topology, i);
    if (!check.ok()) throw Error("simulate: " + check.error);
    route_of[i] = check.route;
    link_of[i] = route_of[i][0];
  }

  // Multicast groups: the leader (lowest index) stands for the group in its entry link's queue
  // and starts every member; at the switch each member goes on over its own route.
  std::vector<std::uint32_t> leader;  // empty without multicast: every transfer leads itself
  if (algorithm.has_multicast())
    if (std::string error = check_multicast_groups(algorithm, topology, leader); !error.empty())
      throw Error("simulate: " + error);
  auto leads = [&](std::size_t i) { return leader.empty() || leader[i] == i; };
  // A reducing switch sends what it holds as soon as it has it: its messages join the switch
  // port's queue when ready (in SwitchQueue order, as relayed messages do), not a recorded order.
  auto from_switch = [&](std::size_t i) { return topology.is_switch(transfers[i].src); };

  // Per link FIFO queues: grouped by link, then (recorded start, index) inside a link; the
  // (start, index) pairs make the sort read memory in sequence (usually already sorted).
  std::vector<std::uint32_t> link_offsets;
  std::vector<std::uint32_t> by_link;
  {
    auto queue = detail::group_by<std::uint32_t, std::pair<Time, std::uint32_t>>(
        static_cast<std::size_t>(num_links), num_transfers, [&](std::size_t i, auto&& emit) {
          if (leads(i) && !from_switch(i))
            emit(link_of[i], std::pair{transfers[i].start, static_cast<std::uint32_t>(i)});
        });
    for (std::size_t l = 0; l < queue.keys(); ++l) {
      const auto group = queue[l];
      if (!std::is_sorted(group.begin(), group.end())) std::sort(group.begin(), group.end());
    }
    by_link.reserve(queue.values.size());
    for (const auto& entry : queue.values) by_link.push_back(entry.second);
    link_offsets = std::move(queue.offsets);
  }

  // Per chunk: its pool entries (one per transfer carrying it) in transfer index order. The
  // endpoints are read from the transfers (in index order, so nearly in sequence): copied in,
  // they made this the largest array at the peak and were no faster (docs/performance.md).
  struct Entry {
    std::uint32_t pool;  // position in the algorithm's chunk pool
    std::uint32_t tx;    // transfer index
  };
  const auto& pool = algorithm.chunk_pool();
  bool any_reduce = false;
  for (const Transfer& t : transfers) any_reduce = any_reduce || t.reduce;
  auto chunk_entries = detail::group_by<std::int64_t, Entry>(
      static_cast<std::size_t>(num_chunks), num_transfers, [&](std::size_t i, auto&& emit) {
        const Transfer& t = transfers[i];
        for (std::int32_t k = 0; k < t.num_chunks; ++k)
          emit(pool[t.first_chunk + k],
               Entry{static_cast<std::uint32_t>(t.first_chunk + k), static_cast<std::uint32_t>(i)});
      });
  const std::vector<std::int64_t>& chunk_offsets = chunk_entries.offsets;
  std::vector<Entry>& by_chunk = chunk_entries.values;  // freed after its use
  auto is_reduce = [&](const Entry& e) { return any_reduce && transfers[e.tx].reduce; };
  // Copy collectives: a chunk is at a source from time 0, elsewhere from its first arrival.
  // Reductions (or any reduce transfer) use the rules in simulator.h, per sender.
  const bool reduction_rules = any_reduce || is_reduction(collective.kind());
  constexpr Time kForever = std::numeric_limits<Time>::max();
  std::vector<Time> first_copy_end;  // per group of the chunk at hand: earliest recorded copy end

  // Groups, built chunk by chunk with a scratch map device -> group (reset after each chunk),
  // and for every pool entry the group its arrival feeds (kNoGroup: nobody sends the chunk on).
  constexpr std::uint32_t kNoGroup = std::numeric_limits<std::uint32_t>::max();
  std::vector<Group> groups;
  groups.reserve(by_chunk.size() + 1);
  std::vector<std::uint32_t> group_offsets(static_cast<std::size_t>(num_chunks) + 1, 0);
  std::vector<std::uint32_t> sender_tx;     // per group, the transfers sending its chunk
  std::vector<SenderMode> modes;            // reduction rules: per sender_tx entry
  std::vector<ReduceInputs> reduce_inputs;  // reduction rules: per group
  std::vector<std::uint32_t> rin_tx;        // reduce deliveries, by (recorded end, index)
  std::vector<std::uint32_t> deliver_group(pool.size(), kNoGroup);
  {
    std::vector<std::uint32_t> group_of(devices, kNoGroup);
    // Per group of the chunk at hand: where its next sender and reduce delivery go.
    std::vector<std::uint32_t> next_sender, next_rin;
    auto by_start = [&](std::uint32_t a, std::uint32_t b) {
      return transfers[a].start != transfers[b].start ? transfers[a].start < transfers[b].start
                                                      : a < b;
    };
    auto by_end = [&](std::uint32_t a, std::uint32_t b) {
      return transfers[a].end != transfers[b].end ? transfers[a].end < transfers[b].end : a < b;
    };
    for (ChunkId c = 0; c < num_chunks; ++c) {
      const Entry* begin = by_chunk.data() + chunk_offsets[c];
      const Entry* end = by_chunk.data() + chunk_offsets[c + 1];
      const std::size_t first_group = groups.size();
      for (const Entry* e = begin; e != end; ++e) {
        const DeviceId src = transfers[e->tx].src;
        if (group_of[src] == kNoGroup) {
          group_of[src] = static_cast<std::uint32_t>(groups.size());
          groups.push_back(Group{src});
        }
      }
      const std::size_t local = groups.size() - first_group;
      // Count senders and reduce deliveries per group (in next_sender / next_rin for now).
      next_sender.assign(local, 0);
      next_rin.assign(local, 0);
      first_copy_end.assign(local, kForever);
      for (const Entry* e = begin; e != end; ++e) {
        const Transfer& t = transfers[e->tx];
        ++next_sender[group_of[t.src] - first_group];
        deliver_group[e->pool] = group_of[t.dst];
        if (group_of[t.dst] == kNoGroup) continue;
        const std::size_t g = group_of[t.dst] - first_group;
        if (is_reduce(*e))
          ++next_rin[g];
        else if (reduction_rules)
          first_copy_end[g] = std::min(first_copy_end[g], t.end);
      }
      const auto sources = collective.sources(c);
      auto num_senders = static_cast<std::uint32_t>(sender_tx.size());
      auto rins = static_cast<std::uint32_t>(rin_tx.size());
      for (std::size_t g = 0; g < local; ++g) {
        Group& group = groups[first_group + g];
        if (std::binary_search(sources.begin(), sources.end(), group.device))
          group.flags |= kSource;
        // The counts become the cursors where each group's senders and deliveries go.
        const std::uint32_t sends = next_sender[g], inputs = next_rin[g];
        group.sender_begin = group.woken = next_sender[g] = num_senders;
        num_senders += sends;
        if (reduction_rules) reduce_inputs.push_back({rins, rins});
        next_rin[g] = rins;
        rins += inputs;
      }
      sender_tx.resize(num_senders);
      rin_tx.resize(rins);
      for (const Entry* e = begin; e != end; ++e) {
        const Transfer& t = transfers[e->tx];
        sender_tx[next_sender[group_of[t.src] - first_group]++] = e->tx;
        if (group_of[t.dst] != kNoGroup && is_reduce(*e))
          rin_tx[next_rin[group_of[t.dst] - first_group]++] = e->tx;
      }
      for (std::size_t g = 0; g < local; ++g) group_of[groups[first_group + g].device] = kNoGroup;
      group_offsets[c + 1] = static_cast<std::uint32_t>(groups.size());
      if (!reduction_rules) continue;  // copy rules: every sender waits for source || arrived
      modes.resize(num_senders);
      for (std::size_t g = 0; g < local; ++g) {
        const Group& group = groups[first_group + g];
        const std::uint32_t sender_end = next_sender[g];
        const std::uint32_t rin_begin = reduce_inputs[first_group + g].rin_begin;
        const std::uint32_t rin_end = next_rin[g];
        std::sort(sender_tx.begin() + group.sender_begin, sender_tx.begin() + sender_end, by_start);
        std::sort(rin_tx.begin() + rin_begin, rin_tx.begin() + rin_end, by_end);
        std::uint32_t need = 0;  // reduce deliveries with a recorded end <= the sender's start
        for (std::uint32_t k = group.sender_begin; k < sender_end; ++k) {
          const Transfer& t = transfers[sender_tx[k]];
          while (rin_begin + need < rin_end && transfers[rin_tx[rin_begin + need]].end <= t.start)
            ++need;
          SenderMode& mode = modes[k];
          mode.need = need;
          if (!t.reduce && first_copy_end[g] <= t.start)
            mode.wait = Wait::kFirstCopy;
          else if (need > 0)
            mode.wait = Wait::kPartialSums;
          else if (group.flags & kSource)
            mode.wait = Wait::kNothing;
          else
            mode.wait = Wait::kFirstAny;
        }
      }
    }
  }
  by_chunk = {};
  // The last, empty group closes the ranges of the one before it.
  const auto num_groups = static_cast<std::uint32_t>(groups.size());
  groups.push_back(Group{-1, static_cast<std::uint32_t>(sender_tx.size())});
  if (reduction_rules) reduce_inputs.push_back({static_cast<std::uint32_t>(rin_tx.size()), 0});
  auto sender_end = [&](std::uint32_t g) { return groups[g + 1].sender_begin; };
  auto rin_end = [&](std::uint32_t g) { return reduce_inputs[g + 1].rin_begin; };

  std::vector<char> rin_done(rin_tx.size(), 0);

  // The group of (device, chunk), for diagnostics only (linear in the chunk's groups).
  auto find_group = [&](ChunkId c, DeviceId device) -> std::uint32_t {
    for (std::uint32_t g = group_offsets[c]; g < group_offsets[c + 1]; ++g)
      if (groups[g].device == device) return g;
    return kNoGroup;
  };

  // State: the chunk side here, links and switch ports in the port engine (one message per
  // transfer, the transfer's index).
  std::vector<std::uint32_t> pending(num_transfers);  // chunks not yet present at the source
  for (std::size_t i = 0; i < num_transfers; ++i)
    pending[i] = static_cast<std::uint32_t>(transfers[i].num_chunks);
  auto ready = [&](std::uint32_t g, const SenderMode& s) {
    switch (s.wait) {
      case Wait::kNothing:
        return true;
      case Wait::kFirstAny:
        return (groups[g].flags & kArrived) != 0;
      case Wait::kFirstCopy:
        return (groups[g].flags & kCopyArrived) != 0;
      case Wait::kPartialSums:
        return reduce_inputs[g].done_prefix - reduce_inputs[g].rin_begin >= s.need;
    }
    return false;
  };
  auto wake = [&](detail::PortEngine& engine, std::uint32_t x, Time now) {
    if (--pending[x] == 0) engine.ready(x, now);
  };
  auto advance = [&](detail::PortEngine& engine, std::uint32_t gi, Time now) {
    Group& g = groups[gi];
    const std::uint32_t end = sender_end(gi);
    if (!reduction_rules) {
      if (!(g.flags & (kSource | kArrived))) return;
      while (g.woken < end) wake(engine, sender_tx[g.woken++], now);
      return;
    }
    // A sender waits for the first delivery, the first copy or a count of partial sums. The
    // first two happen once per group: a full pass then (and at the start) wakes whatever is
    // ready. In between only partial sums arrive, and the partial-sum senders' counts never
    // decrease in sender order (senders by recorded start, deliveries by recorded end), so a
    // cursor wakes them in the same order without passing over the group again: a pass per
    // arrival was quadratic in a group's senders (direct All-Reduce at 1,024 NPUs).
    const auto seen =
        static_cast<std::uint8_t>(kScanned | ((g.flags & kArrived) ? kScannedArrived : 0) |
                                  ((g.flags & kCopyArrived) ? kScannedCopy : 0));
    if ((g.flags & (kScanned | kScannedArrived | kScannedCopy)) != seen) {
      g.flags = static_cast<std::uint8_t>((g.flags & ~(kScannedArrived | kScannedCopy)) | seen);
      for (std::uint32_t k = g.sender_begin; k < end; ++k)
        if (!modes[k].woken && ready(gi, modes[k])) {
          modes[k].woken = true;
          wake(engine, sender_tx[k], now);
        }
    }
    const std::uint32_t done = reduce_inputs[gi].done_prefix - reduce_inputs[gi].rin_begin;
    for (; g.woken < end; ++g.woken) {
      SenderMode& s = modes[g.woken];
      if (s.wait != Wait::kPartialSums) continue;  // woken by a full pass
      if (s.need > done) break;
      if (!s.woken) {
        s.woken = true;
        wake(engine, sender_tx[g.woken], now);
      }
    }
  };
  // A transfer arrived: its chunks are at its destination.
  auto arrived = [&](detail::PortEngine& engine, std::uint32_t x, Time now) {
    const Transfer& t = transfers[x];
    for (std::int32_t k = 0; k < t.num_chunks; ++k) {
      const std::uint32_t group = deliver_group[t.first_chunk + k];
      if (group == kNoGroup) continue;  // nobody sends this chunk on from t.dst
      groups[group].flags |= t.reduce ? kArrived : kArrived | kCopyArrived;
      if (t.reduce) {
        ReduceInputs& inputs = reduce_inputs[group];
        const std::uint32_t last = rin_end(group);
        auto begin = rin_tx.begin() + inputs.rin_begin;
        auto end = rin_tx.begin() + last;
        auto it = std::lower_bound(begin, end, x, [&](std::uint32_t a, std::uint32_t y) {
          return transfers[a].end != transfers[y].end ? transfers[a].end < transfers[y].end : a < y;
        });
        for (; it != end && *it == x; ++it) rin_done[it - rin_tx.begin()] = 1;
        while (inputs.done_prefix < last && rin_done[inputs.done_prefix]) ++inputs.done_prefix;
      }
      advance(engine, group, now);
    }
  };
  auto nothing = [](auto&&...) {};
  detail::LambdaClient client(nothing, arrived, nothing);

  // At one instant: deliveries, then messages reaching switches (all of them queued before any
  // leaves), then links becoming free, then queued switch links starting; ties by transfer or
  // link id.
  detail::PortEngine::Options options;
  options.model = model;
  options.clock = "simulation";
  options.priority = {0, 1, 2, 2, 3, 3};  // kArrive, kHop, kLinkFree, kSwitchFree, kServe
  options.ties_by_id = true;
  detail::PortEngine engine(topology, std::move(options), num_transfers, client);
  for (std::size_t i = 0; i < num_transfers; ++i) {
    const Transfer& t = transfers[i];
    // The switch queue's tie-break is the first chunk; a transfer without chunks takes what the
    // pool holds there (as this simulator always has).
    const auto first = static_cast<std::size_t>(t.first_chunk);
    engine.set_message(static_cast<std::uint32_t>(i), route_of[i], algorithm.transfer_bytes(t),
                       first < pool.size() ? pool[first] : 0);
    if (!leads(i)) engine.add_member(leader[i], static_cast<std::uint32_t>(i));
  }
  route_of = {};
  for (std::uint32_t x : by_link) engine.enqueue(x, pending[x] == 0);
  by_link = {};
  engine.cache_serialization(collective.chunk_bytes());

  for (std::uint32_t g = 0; g < num_groups; ++g) advance(engine, g, 0);
  for (LinkId l = 0; l < num_links; ++l) engine.try_start(l, 0);
  engine.run();
  SimulationResult result;
  result.link_busy_ps = std::move(engine.link_busy_ps());
  result.start = std::move(engine.starts());
  result.end = std::move(engine.ends());
  for (Time end : result.end) result.collective_time = std::max(result.collective_time, end);
  if (engine.started() == num_transfers) return result;

  // Deadlock: name the stuck queue head with the lowest index and a chunk it waits for.
  std::uint32_t stuck = std::numeric_limits<std::uint32_t>::max();
  for (LinkId l = 0; l < num_links; ++l) stuck = std::min(stuck, engine.fifo_head(l));
  for (std::uint32_t i = 0; i < num_transfers && stuck == std::numeric_limits<std::uint32_t>::max();
       ++i)
    if (result.start[i] < 0) stuck = i;  // only reducing switches' messages are left
  const Transfer& t = transfers[stuck];
  std::string why = "it waits for a chunk that never reaches its source";
  for (ChunkId c : algorithm.chunks(t)) {
    const std::uint32_t gi = find_group(c, t.src);
    if (gi == kNoGroup) continue;
    const Group& g = groups[gi];
    const bool scan = reduction_rules;
    const std::uint32_t end = sender_end(gi);
    std::uint32_t position = end;
    for (std::uint32_t p = scan ? g.sender_begin : g.woken; p < end; ++p)
      if (sender_tx[p] == stuck && !(scan && modes[p].woken)) {
        position = p;
        break;
      }
    if (position == end) continue;  // this chunk is present
    const std::string chunk = "chunk " + std::to_string(c);
    const std::string at = describe_device(topology, t.src);
    const std::string cycle =
        " (deadlock: a dependency cycle through the per-link order of recorded starts)";
    const Wait wait = scan ? modes[position].wait : Wait::kFirstAny;
    if (wait == Wait::kPartialSums) {
      const std::uint32_t need = modes[position].need;
      why = "it waits for " + std::string(need == 1 ? "the partial sum" : "all partial sums") +
            " of " + chunk + " recorded to reach " + at + " before it (" + std::to_string(need) +
            "), but " + describe_transfer(algorithm, rin_tx[reduce_inputs[gi].done_prefix]) +
            " never runs" + cycle;
      break;
    }
    const bool copies_only = wait == Wait::kFirstCopy;
    std::size_t deliverer = num_transfers;
    for (std::size_t i = 0; i < num_transfers && deliverer == num_transfers; ++i)
      if (transfers[i].dst == t.src && !(copies_only && transfers[i].reduce))
        for (ChunkId d : algorithm.chunks(transfers[i]))
          if (d == c) {
            deliverer = i;
            break;
          }
    if (deliverer == num_transfers)
      why = chunk + " is not at " + at + " at the start and no transfer delivers it there";
    else
      why = "it waits for " + chunk + (copies_only ? " (a finished copy)" : "") + " at " + at +
            ", but the transfers that deliver it (e.g. " + describe_transfer(algorithm, deliverer) +
            ") never run" + cycle;
    break;
  }
  throw Error("simulate: " + describe_transfer(algorithm, stuck) + " never starts: " + why + " (" +
              std::to_string(num_transfers - engine.started()) + " of " +
              std::to_string(num_transfers) + " transfers never start)");
}

Algorithm with_simulated_times(const Algorithm& algorithm, const SimulationResult& simulated) {
  Algorithm timed(algorithm.collective());
  timed.synthesizer = algorithm.synthesizer;
  timed.seed = algorithm.seed;
  timed.link_model = algorithm.link_model;
  timed.reserve(algorithm.transfers().size());
  for (std::size_t i = 0; i < algorithm.transfers().size(); ++i) {
    const Transfer& t = algorithm.transfers()[i];
    timed.add_transfer(t.src, t.dst, simulated.start[i], simulated.end[i], algorithm.chunks(t),
                       t.reduce, t.multicast);
  }
  timed.sort_by_start();
  timed.collective_time = simulated.collective_time;
  return timed;
}

}  // namespace tacos
