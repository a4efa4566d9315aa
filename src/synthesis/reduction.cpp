#include "reduction.h"

#include <algorithm>
#include <numeric>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "../algorithm/transfer_check.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {
namespace {

std::uint64_t pair_key(DeviceId device, ChunkId chunk) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(device)) << 32) |
         static_cast<std::uint32_t>(chunk);
}

}  // namespace

Algorithm with_provenance(Collective collective, const Algorithm& from) {
  Algorithm result(std::move(collective));
  result.synthesizer = from.synthesizer;
  result.seed = from.seed;
  result.link_model = from.link_model;
  return result;
}

Topology transpose(const Topology& topology) {
  std::vector<Link> links = topology.links();
  for (Link& l : links) std::swap(l.src, l.dst);
  Topology transposed(topology.npus(), topology.switches(), std::move(links), topology.name());
  transposed.set_shape(topology.shape());
  return transposed;
}

Algorithm prune_to_trees(const Algorithm& copy) {
  const auto& transfers = copy.transfers();
  const Collective& collective = copy.collective();
  // First delivery of each chunk to each device.
  std::unordered_map<std::uint64_t, std::size_t> first;
  first.reserve(transfers.size());
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    for (ChunkId c : copy.chunks(t)) {
      auto [it, inserted] = first.try_emplace(pair_key(t.dst, c), i);
      if (!inserted && transfers[it->second].end > t.end) it->second = i;
    }
  }
  // Latest first: a delivery is kept when its receiver needs the chunk or sends it on through
  // a kept transfer (which starts later).
  std::vector<std::size_t> order(transfers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return transfers[a].start > transfers[b].start;
  });
  // Per chunk of a message (a message may carry several: message_coalescing.h), so that a
  // message keeps only the chunks its receiver gets there first and needs; indexed like the
  // algorithm's chunk pool.
  std::unordered_set<std::uint64_t> forwards;
  std::vector<char> keep(copy.chunk_pool().size(), 0);
  for (std::size_t i : order) {
    const Transfer& t = transfers[i];
    const auto chunks = copy.chunks(t);
    for (std::size_t k = 0; k < chunks.size(); ++k) {
      const ChunkId c = chunks[k];
      if (first.at(pair_key(t.dst, c)) != i) continue;
      const auto destinations = collective.destinations(c);  // ascending (views into members)
      const bool needed = std::binary_search(destinations.begin(), destinations.end(), t.dst) ||
                          forwards.count(pair_key(t.dst, c)) > 0;
      if (!needed) continue;
      keep[static_cast<std::size_t>(t.first_chunk) + k] = 1;
      forwards.insert(pair_key(t.src, c));
    }
  }
  Algorithm pruned = with_provenance(collective, copy);
  std::vector<ChunkId> kept;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    const auto chunks = copy.chunks(t);
    kept.clear();
    for (std::size_t k = 0; k < chunks.size(); ++k)
      if (keep[static_cast<std::size_t>(t.first_chunk) + k]) kept.push_back(chunks[k]);
    if (!kept.empty()) pruned.add_transfer(t.src, t.dst, t.start, t.end, kept, t.reduce);
  }
  pruned.collective_time = copy.collective_time;
  return pruned;
}

Algorithm reverse_into_reduction(const Algorithm& copy_on_transpose, const Collective& reduction) {
  const auto& transfers = copy_on_transpose.transfers();
  Time horizon = 0;
  for (const Transfer& t : transfers) horizon = std::max(horizon, t.end);
  Algorithm reversed = with_provenance(reduction, copy_on_transpose);
  reversed.reserve(transfers.size());
  for (std::size_t i = transfers.size(); i-- > 0;) {
    const Transfer& t = transfers[i];
    reversed.add_transfer(t.dst, t.src, horizon - t.end, horizon - t.start,
                          copy_on_transpose.chunks(t), /*reduce=*/true);
  }
  reversed.sort_by_start();
  reversed.collective_time = horizon;
  return reversed;
}

Time compact(Algorithm& algorithm, const Topology& topology, LinkModel model) {
  const SimulationResult timed = simulate(algorithm, topology, model);
  algorithm = with_simulated_times(algorithm, timed);
  Time busiest = 0;
  for (const Time busy : timed.link_busy_ps) busiest = std::max(busiest, busy);
  return busiest;
}

std::vector<Time> link_loads(const Algorithm& algorithm, const Topology& topology,
                             LinkModel model) {
  std::vector<Time> load(static_cast<std::size_t>(topology.num_links()), 0);
  std::vector<char> entered(static_cast<std::size_t>(algorithm.multicast_groups()), 0);
  const auto& transfers = algorithm.transfers();
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    // Between NPUs the route is looked up directly (the transfer check's route, without its
    // checks of the chunks); otherwise through the check.
    std::span<const LinkId> route;
    if (!topology.is_switch(t.src) && !topology.is_switch(t.dst) && t.src != t.dst)
      route = topology.switch_routes().route(t.src, t.dst);
    if (route.empty()) {
      const TransferCheck check = check_transfer(algorithm, topology, i);
      if (!check.ok()) throw Error("synthesize: " + check.error);
      route = check.route;
    }
    const Bytes bytes = algorithm.transfer_bytes(t);
    std::size_t first = 0;
    if (t.multicast >= 0) {
      // The group's copies share the entry hop: counted for the first copy only.
      if (entered[t.multicast]) first = 1;
      entered[t.multicast] = 1;
    }
    for (std::size_t h = first; h < route.size(); ++h) {
      const Link& link = topology.link(route[h]);
      load[route[h]] +=
          link_busy_time(model, link.latency_ps, serialization_time(bytes, link.bandwidth_gbps));
    }
  }
  return load;
}

Algorithm remap_chunks(const Algorithm& algorithm, const Collective& target,
                       const std::vector<ChunkId>& map, Time offset) {
  Algorithm remapped = with_provenance(target, algorithm);
  remapped.reserve(algorithm.transfers().size());
  std::vector<ChunkId> chunks;
  for (const Transfer& t : algorithm.transfers()) {
    chunks.clear();
    for (ChunkId c : algorithm.chunks(t)) chunks.push_back(map[c]);
    remapped.add_transfer(t.src, t.dst, t.start + offset, t.end + offset, chunks, t.reduce,
                          t.multicast);
  }
  remapped.collective_time = algorithm.collective_time + offset;
  return remapped;
}

void append(Algorithm& whole, const Algorithm& part, Time offset) {
  whole.reserve(whole.transfers().size() + part.transfers().size());
  const std::int32_t groups = whole.multicast_groups();  // part's multicast ids follow whole's
  for (const Transfer& t : part.transfers())
    whole.add_transfer(t.src, t.dst, t.start + offset, t.end + offset, part.chunks(t), t.reduce,
                       t.multicast >= 0 ? t.multicast + groups : -1);
  whole.collective_time = std::max(whole.collective_time, part.collective_time + offset);
}

}  // namespace tacos::detail
