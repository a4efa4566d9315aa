// Event-driven, congestion-aware execution of an Algorithm (see simulator.h for the rules).
//
// Data layout (flat arrays, no devices x chunks matrix):
//  - per link, a FIFO queue: the link's transfers sorted by (recorded start, index), a head
//    cursor and a free flag;
//  - per (device u, chunk c) that some transfer sends c from, a Group: the transfers sending c
//    from u (sorted by recorded start) and the reduce transfers delivering c to u (sorted by
//    recorded end). Groups are grouped by chunk and sorted by device, so an arrival finds its
//    group by binary search. A group's senders become ready in order (a cursor), each sender
//    once per chunk it carries; a transfer is ready when all its chunks are.
//  - a min-heap of (time, kind, id) events: a link becoming free, a message arriving.
#include "tacos/simulation/simulator.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <queue>
#include <vector>

#include "tacos/algorithm/verify.h"
#include "tacos/collective/collective.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos {
namespace {

struct Group {
  DeviceId device = 0;
  bool source = false;             // the device holds the chunk at time 0
  bool arrived = false;            // some transfer has delivered the chunk to the device
  std::uint32_t sender_begin = 0;  // into sender_tx / sender_need
  std::uint32_t sender_end = 0;
  std::uint32_t rin_begin = 0;  // into rin_tx / rin_done: reduce transfers delivering the chunk
  std::uint32_t rin_end = 0;
  std::uint32_t woken = 0;        // senders [sender_begin, woken) have the chunk
  std::uint32_t done_prefix = 0;  // reduce deliveries [rin_begin, done_prefix) have arrived
};

struct Event {
  Time time;
  std::uint32_t kind;  // kArrive or kLinkFree
  std::uint32_t id;    // transfer or link
  bool operator>(const Event& o) const {
    if (time != o.time) return time > o.time;
    if (kind != o.kind) return kind > o.kind;
    return id > o.id;
  }
};
constexpr std::uint32_t kArrive = 0;
constexpr std::uint32_t kLinkFree = 1;

}  // namespace

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

  // Links and chunk ids.
  std::vector<LinkId> link_of(num_transfers);
  for (std::size_t i = 0; i < num_transfers; ++i) {
    const Transfer& t = transfers[i];
    for (DeviceId d : {t.src, t.dst})
      if (d < 0 || d >= devices)
        throw Error("simulate: " + describe_transfer(algorithm, i) + ": device " +
                    std::to_string(d) + " is not in the topology (devices 0.." +
                    std::to_string(devices - 1) + ")");
    link_of[i] = topology.find_link(t.src, t.dst);
    if (link_of[i] < 0)
      throw Error("simulate: " + describe_transfer(algorithm, i) + ": the topology has no link " +
                  std::to_string(t.src) + " -> " + std::to_string(t.dst));
    for (ChunkId c : algorithm.chunks(t))
      if (c < 0 || c >= num_chunks)
        throw Error("simulate: " + describe_transfer(algorithm, i) + ": chunk " +
                    std::to_string(c) + " is not one of the collective's chunks 0.." +
                    std::to_string(num_chunks - 1));
  }

  // Per link FIFO queues: counting sort by link, then (recorded start, index) inside a link.
  std::vector<std::uint32_t> link_offsets(static_cast<std::size_t>(num_links) + 1, 0);
  for (LinkId l : link_of) ++link_offsets[l + 1];
  for (int l = 0; l < num_links; ++l) link_offsets[l + 1] += link_offsets[l];
  std::vector<std::uint32_t> by_link(num_transfers);
  {
    std::vector<std::uint32_t> fill(link_offsets.begin(), link_offsets.end() - 1);
    for (std::size_t i = 0; i < num_transfers; ++i)
      by_link[fill[link_of[i]]++] = static_cast<std::uint32_t>(i);
  }
  for (int l = 0; l < num_links; ++l)
    std::sort(by_link.begin() + link_offsets[l], by_link.begin() + link_offsets[l + 1],
              [&](std::uint32_t a, std::uint32_t b) {
                return transfers[a].start != transfers[b].start
                           ? transfers[a].start < transfers[b].start
                           : a < b;
              });

  // Per chunk: the transfers carrying it (counting sort), then its groups.
  std::vector<std::int64_t> chunk_offsets(static_cast<std::size_t>(num_chunks) + 1, 0);
  for (const Transfer& t : transfers)
    for (ChunkId c : algorithm.chunks(t)) ++chunk_offsets[c + 1];
  for (int c = 0; c < num_chunks; ++c) chunk_offsets[c + 1] += chunk_offsets[c];
  std::vector<std::uint32_t> by_chunk(static_cast<std::size_t>(chunk_offsets[num_chunks]));
  {
    std::vector<std::int64_t> fill(chunk_offsets.begin(), chunk_offsets.end() - 1);
    for (std::size_t i = 0; i < num_transfers; ++i)
      for (ChunkId c : algorithm.chunks(transfers[i]))
        by_chunk[fill[c]++] = static_cast<std::uint32_t>(i);
  }

  std::vector<Group> groups;
  std::vector<std::uint32_t> group_offsets(static_cast<std::size_t>(num_chunks) + 1, 0);
  std::vector<std::uint32_t> sender_tx;    // transfer index
  std::vector<std::uint32_t> sender_need;  // reduce deliveries it waits for (prefix length)
  std::vector<std::uint32_t> rin_tx;
  std::vector<char> rin_done;
  sender_tx.reserve(by_chunk.size());
  sender_need.reserve(by_chunk.size());
  {
    struct Item {
      DeviceId device;
      std::uint32_t role;  // 0: reduce delivery to device, 1: sent from device
      Time time;           // recorded end (deliveries) or start (sends)
      std::uint32_t index;
    };
    std::vector<Item> items;
    for (ChunkId c = 0; c < num_chunks; ++c) {
      items.clear();
      for (std::int64_t p = chunk_offsets[c]; p < chunk_offsets[c + 1]; ++p) {
        const Transfer& t = transfers[by_chunk[p]];
        items.push_back(Item{t.src, 1, t.start, by_chunk[p]});
        if (t.reduce) items.push_back(Item{t.dst, 0, t.end, by_chunk[p]});
      }
      std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
        if (a.device != b.device) return a.device < b.device;
        if (a.role != b.role) return a.role < b.role;
        if (a.time != b.time) return a.time < b.time;
        return a.index < b.index;
      });
      const auto sources = collective.sources(c);
      for (std::size_t i = 0; i < items.size();) {
        std::size_t j = i;
        while (j < items.size() && items[j].device == items[i].device) ++j;
        std::size_t first_sender = i;
        while (first_sender < j && items[first_sender].role == 0) ++first_sender;
        if (first_sender < j) {  // someone sends c from this device
          Group g;
          g.device = items[i].device;
          g.source = std::binary_search(sources.begin(), sources.end(), g.device);
          g.rin_begin = static_cast<std::uint32_t>(rin_tx.size());
          for (std::size_t k = i; k < first_sender; ++k) rin_tx.push_back(items[k].index);
          g.rin_end = static_cast<std::uint32_t>(rin_tx.size());
          g.done_prefix = g.rin_begin;
          g.sender_begin = static_cast<std::uint32_t>(sender_tx.size());
          std::size_t need = 0;  // reduce deliveries with recorded end <= the sender's start
          for (std::size_t k = first_sender; k < j; ++k) {
            while (i + need < first_sender && items[i + need].time <= items[k].time) ++need;
            sender_tx.push_back(items[k].index);
            sender_need.push_back(static_cast<std::uint32_t>(need));
          }
          g.sender_end = static_cast<std::uint32_t>(sender_tx.size());
          g.woken = g.sender_begin;
          groups.push_back(g);
        }
        i = j;
      }
      group_offsets[c + 1] = static_cast<std::uint32_t>(groups.size());
    }
  }
  rin_done.assign(rin_tx.size(), 0);
  by_chunk = {};

  auto find_group = [&](ChunkId c, DeviceId device) -> Group* {
    auto begin = groups.begin() + group_offsets[c];
    auto end = groups.begin() + group_offsets[c + 1];
    auto it = std::lower_bound(begin, end, device,
                               [](const Group& g, DeviceId d) { return g.device < d; });
    return it != end && it->device == device ? &*it : nullptr;
  };

  // State.
  SimulationResult result;
  result.link_busy_ps.assign(num_links, 0);
  result.start.assign(num_transfers, -1);
  result.end.assign(num_transfers, -1);
  std::vector<std::uint32_t> pending(num_transfers);  // chunks not yet present at the source
  for (std::size_t i = 0; i < num_transfers; ++i)
    pending[i] = static_cast<std::uint32_t>(transfers[i].num_chunks);
  std::vector<std::uint32_t> head(link_offsets.begin(), link_offsets.end() - 1);
  std::vector<char> link_free(num_links, 1);
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  std::size_t started = 0;

  auto try_start = [&](LinkId l, Time now) {
    if (!link_free[l] || head[l] == link_offsets[l + 1]) return;
    const std::uint32_t x = by_link[head[l]];
    if (pending[x] != 0) return;
    ++head[l];
    link_free[l] = 0;
    const Link& link = topology.link(l);
    const Time ser =
        serialization_time(algorithm.transfer_bytes(transfers[x]), link.bandwidth_gbps);
    const Time busy = link_busy_time(model, link.latency_ps, ser);
    result.start[x] = now;
    result.end[x] = now + link.latency_ps + ser;
    result.link_busy_ps[l] += busy;
    result.collective_time = std::max(result.collective_time, result.end[x]);
    events.push(Event{now + busy, kLinkFree, static_cast<std::uint32_t>(l)});
    events.push(Event{result.end[x], kArrive, x});
    ++started;
  };
  auto wake = [&](std::uint32_t x, Time now) {
    if (--pending[x] != 0) return;
    const LinkId l = link_of[x];
    if (head[l] < link_offsets[l + 1] && by_link[head[l]] == x) try_start(l, now);
  };
  auto advance = [&](Group& g, Time now) {
    while (g.woken < g.sender_end) {
      const std::uint32_t need = sender_need[g.woken];
      const bool ready = need == 0 ? g.source || g.arrived : g.done_prefix - g.rin_begin >= need;
      if (!ready) break;
      wake(sender_tx[g.woken++], now);
    }
  };

  for (Group& g : groups) advance(g, 0);
  for (LinkId l = 0; l < num_links; ++l) try_start(l, 0);
  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    if (e.kind == kLinkFree) {
      link_free[e.id] = 1;
      try_start(static_cast<LinkId>(e.id), e.time);
      continue;
    }
    const Transfer& t = transfers[e.id];
    for (ChunkId c : algorithm.chunks(t)) {
      Group* g = find_group(c, t.dst);
      if (g == nullptr) continue;  // nobody sends c onward from t.dst
      g->arrived = true;
      if (t.reduce) {
        auto begin = rin_tx.begin() + g->rin_begin;
        auto end = rin_tx.begin() + g->rin_end;
        auto it = std::lower_bound(begin, end, e.id, [&](std::uint32_t a, std::uint32_t x) {
          return transfers[a].end != transfers[x].end ? transfers[a].end < transfers[x].end : a < x;
        });
        if (it != end && *it == e.id) rin_done[it - rin_tx.begin()] = 1;
        while (g->done_prefix < g->rin_end && rin_done[g->done_prefix]) ++g->done_prefix;
      }
      advance(*g, e.time);
    }
  }
  if (started == num_transfers) return result;

  // Deadlock: name the stuck queue head with the lowest index and a chunk it waits for.
  std::uint32_t stuck = std::numeric_limits<std::uint32_t>::max();
  for (LinkId l = 0; l < num_links; ++l)
    if (head[l] < link_offsets[l + 1]) stuck = std::min(stuck, by_link[head[l]]);
  const Transfer& t = transfers[stuck];
  std::string why = "it waits for a chunk that never reaches its source";
  for (ChunkId c : algorithm.chunks(t)) {
    const Group* g = find_group(c, t.src);
    if (g == nullptr) continue;
    std::uint32_t position = g->sender_end;
    for (std::uint32_t p = g->woken; p < g->sender_end; ++p)
      if (sender_tx[p] == stuck) {
        position = p;
        break;
      }
    if (position == g->sender_end) continue;  // this chunk is present
    const std::string chunk = "chunk " + std::to_string(c);
    const std::string at = describe_device(topology, t.src);
    if (sender_need[position] > 0) {
      std::uint32_t missing = g->done_prefix;
      why = "it waits for the partial sums of " + chunk + " that " +
            std::to_string(sender_need[position]) + " reduce transfers deliver to " + at +
            ", but transfer " + std::to_string(rin_tx[missing]) + " never arrives";
      break;
    }
    std::size_t deliverer = num_transfers;
    for (std::size_t i = 0; i < num_transfers && deliverer == num_transfers; ++i)
      if (transfers[i].dst == t.src)
        for (ChunkId d : algorithm.chunks(transfers[i]))
          if (d == c) {
            deliverer = i;
            break;
          }
    if (deliverer == num_transfers)
      why = chunk + " is not at " + at + " at the start and no transfer delivers it there";
    else
      why = "it waits for " + chunk + " at " + at + ", but the transfers that deliver it (e.g. " +
            describe_transfer(algorithm, deliverer) +
            ") never run (deadlock: a dependency cycle through the per-link order of recorded "
            "starts)";
    break;
  }
  throw Error("simulate: " + describe_transfer(algorithm, stuck) + " never starts: " + why + " (" +
              std::to_string(num_transfers - started) + " of " + std::to_string(num_transfers) +
              " transfers never start)");
}

}  // namespace tacos
