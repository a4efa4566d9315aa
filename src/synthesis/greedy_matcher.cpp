#include "greedy_matcher.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <queue>

#include "matcher/two_threads.h"
#include "tacos/common/error.h"
#include "tacos/common/time_limit.h"
#include "tacos/common/units.h"

namespace tacos::detail {
namespace {

std::uint64_t pair_key(NpuId npu, ChunkId chunk) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(npu)) << 32) |
         static_cast<std::uint32_t>(chunk);
}

constexpr Time kUnreachable = std::numeric_limits<Time>::max();

}  // namespace

GreedyMatcher::GreedyMatcher(const Topology& topology, const Collective& collective,
                             LinkModel model, std::uint64_t seed, bool keep_transfers,
                             const ProgressCallback& progress, int threads, int batch_latencies)
    : topology_(topology),
      collective_(collective),
      model_(model),
      seed_(seed),
      keep_transfers_(keep_transfers),
      progress_(progress) {
  const CollectiveKind kind = collective.kind();
  unicast_ = kind == CollectiveKind::kGather || kind == CollectiveKind::kScatter ||
             kind == CollectiveKind::kAllToAll;
  if (!unicast_ && kind != CollectiveKind::kAllGather && kind != CollectiveKind::kBroadcast)
    throw Error("synthesize: the greedy matcher takes copy collectives only, not " +
                to_string(kind));
  npus_ = topology.npus();
  chunks_ = collective.num_chunks();
  members_ = collective.num_members();
  relays_ = !unicast_ && members_ < npus_;
  member_index_.assign(npus_, -1);
  for (int i = 0; i < members_; ++i) member_index_[collective.members()[i]] = i;

  chunk_bytes_ = collective.chunk_bytes();
  build_links(topology, collective.chunk_bytes());
  if (unicast_) {
    holder_.assign(chunks_, -1);
    moving_.assign(chunks_, 0);
    destination_.assign(chunks_, -1);
  } else {
    // A bit per NPU and chunk (twice on heterogeneous links): say so before allocating it.
    constexpr double kMaxBits = 34359738368.0;  // 2^35 bits, 4 GiB
    if (static_cast<double>(npus_) * chunks_ > kMaxBits)
      throw Error("synthesize: " + std::to_string(npus_) + " NPUs x " + std::to_string(chunks_) +
                  " chunks need " +
                  std::to_string(static_cast<long long>(static_cast<double>(npus_) * chunks_ / 8 /
                                                        (1 << 30))) +
                  " GiB of chunk bitsets, more than the 4 GiB limit (use fewer chunks per NPU)");
    has_.resize(npus_, chunks_);
    if (std::find(heterogeneous_ingress_.begin(), heterogeneous_ingress_.end(), 1) !=
        heterogeneous_ingress_.end())
      pending_.resize(npus_, chunks_);
  }
  if (unicast_ || relays_) compute_distances();
  choice_.init(collective, npus_, links_.size(), seed, unicast_, topology.switches() > 0,
               switch_routes_);
  if (switch_routes_ && !unicast_) {
    domains_.init(topology, links_, in_begin_, ports_, chunks_);
    if (topology.multicast_switches() > 0) fanout_.init(topology, links_, ports_);
  }
  logs_.init(npus_, chunks_);
  // Every NPU ends up holding every chunk of an all-NPU copy collective: size the logs once.
  if (!unicast_ && !relays_) {
    logs_.reserve_each(chunks_);
    // Each NPU receives every chunk it lacks exactly once (plus rare overtaken copies).
    if (keep_transfers_) records_.reserve(static_cast<std::size_t>(npus_ - 1) * chunks_);
  }
  const std::size_t match_links = links_.size();
  windows_.init(match_links, choice_.window_capacity());
  link_state_.assign(match_links, LinkState::kIdle);
  // Threads only where picks are independent across destinations: copy chunks, no relays,
  // no in-flight arrival map (uniform in-links everywhere).
  const bool independent = !unicast_ && !relays_ && !switch_routes_ &&
                           std::find(heterogeneous_ingress_.begin(), heterogeneous_ingress_.end(),
                                     1) == heterogeneous_ingress_.end();
  match_threads_ = independent && !choice_.counts_holders() && threads > 1 ? 2 : 1;
  // Batching where the arrival of every chunk of a message is the message's end and nothing
  // overtakes: direct links, copy chunks, uniform in-links, the tacos link model.
  const bool uniform = std::find(heterogeneous_ingress_.begin(), heterogeneous_ingress_.end(), 1) ==
                       heterogeneous_ingress_.end();
  if (batch_latencies > 0 && !unicast_ && !switch_routes_ && uniform &&
      model_ == LinkModel::kTacos &&
      std::any_of(links_.begin(), links_.end(),
                  [&](const MatchLink& l) { return batch_cap(l, batch_latencies) > 1; }))
    batch_latencies_ = batch_latencies;
  idle_out_.resize(npus_);
}

Time GreedyMatcher::one_chunk_per_message_minimum(const Topology& topology,
                                                  const Collective& collective, LinkModel model) {
  const std::size_t members = static_cast<std::size_t>(collective.num_members());
  std::vector<std::int64_t> held(static_cast<std::size_t>(topology.npus()), 0);
  for (ChunkId c = 0; c < collective.num_chunks(); ++c) {
    if (collective.destinations(c).size() != members) return 0;
    for (const NpuId s : collective.sources(c)) ++held[static_cast<std::size_t>(s)];
  }
  double least = 0;
  for (const NpuId v : collective.members()) {
    const std::int64_t lacking = collective.num_chunks() - held[static_cast<std::size_t>(v)];
    if (lacking <= 0) continue;
    double messages_per_ps = 0;
    for (const LinkId l : topology.in_links(v)) {
      const Link& link = topology.link(l);
      const Time busy =
          link_busy_time(model, link.latency_ps,
                         serialization_time(collective.chunk_bytes(), link.bandwidth_gbps));
      messages_per_ps += 1.0 / static_cast<double>(std::max<Time>(busy, 1));
    }
    if (messages_per_ps > 0)
      least = std::max(least, static_cast<double>(lacking) / messages_per_ps);
  }
  // Rounded down, with room for the division's rounding: a lower bound must not err high.
  return static_cast<Time>(least * (1 - 1e-12));
}

std::int64_t GreedyMatcher::batch_cap(Time latency, Time serialization, int latencies) {
  serialization = std::max<Time>(1, serialization);
  return std::clamp<std::int64_t>((latencies * latency + serialization / 2) / serialization, 1,
                                  kMaxBatch);
}

std::int64_t GreedyMatcher::batch_cap(const MatchLink& link, int latencies) const {
  const Time serialization = serialization_time(chunk_bytes_, link.bandwidth_gbps);
  return batch_cap(link.arrival_delay - serialization, serialization, latencies);
}

void GreedyMatcher::build_links(const Topology& topology, Bytes chunk_bytes) {
  // Links renumbered by (destination, source): the matching goes destination by destination,
  // so every per-link array below is then read front to back.
  const int links = topology.num_links();
  links_.reserve(links);
  for (LinkId l = 0; l < links; ++l) {
    const Link& link = topology.link(l);
    if (topology.is_switch(link.src) || topology.is_switch(link.dst)) continue;
    const Time serialization = serialization_time(chunk_bytes, link.bandwidth_gbps);
    links_.push_back(MatchLink{link.src, link.dst, link.latency_ps + serialization,
                               link_busy_time(model_, link.latency_ps, serialization),
                               link.bandwidth_gbps, 0});
  }
  if (topology.switches() > 0)
    switch_routes_ = ports_.add_routes(topology, model_, chunk_bytes, links_);
  std::stable_sort(links_.begin(), links_.end(), [](const MatchLink& a, const MatchLink& b) {
    return a.dst != b.dst ? a.dst < b.dst : a.src < b.src;
  });
  key_offsets(in_begin_, npus_, links_.size(), [&](std::size_t l) { return links_[l].dst; });
  std::vector<Time> distinct;
  for (const MatchLink& l : links_) distinct.push_back(l.arrival_delay);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (distinct.size() > 65535) throw Error("synthesize: too many distinct link delays");
  for (MatchLink& l : links_)
    l.delay_rank = static_cast<std::uint16_t>(
        std::lower_bound(distinct.begin(), distinct.end(), l.arrival_delay) - distinct.begin());

  heterogeneous_ingress_.assign(npus_, 0);
  for (NpuId v = 0; v < npus_; ++v)
    for (int l = in_begin_[v]; l < in_begin_[v + 1]; ++l)
      if (links_[l].arrival_delay != links_[in_begin_[v]].arrival_delay)
        heterogeneous_ingress_[v] = 1;
}

void GreedyMatcher::mark_on_way(NpuId dst, ChunkId chunk, Time arrival) {
  choice_.count_new_holder(chunk);
  if (heterogeneous_ingress_[dst]) {
    pending_.set(dst, chunk);
    domains_.note_coming(dst, chunk);
    auto [it, inserted] = pending_arrival_.try_emplace(pair_key(dst, chunk), arrival);
    if (!inserted) it->second = std::min(it->second, arrival);
  } else {
    has_.set(dst, chunk);
    domains_.note_coming(dst, chunk);
  }
}

void GreedyMatcher::compute_distances() {
  // Shortest arrival time from every NPU to each member that is some chunk's destination
  // (Dijkstra over in-links), so "closer" means strictly less time to go.
  std::vector<char> is_destination(members_, 0);
  for (ChunkId c = 0; c < chunks_; ++c)
    for (NpuId d : collective_.destinations(c)) is_destination[member_index_[d]] = 1;
  distance_row_.assign(members_, -1);
  int rows = 0;
  for (int m = 0; m < members_; ++m)
    if (is_destination[m]) distance_row_[m] = rows++;
  distance_.assign(static_cast<std::size_t>(rows) * npus_, kUnreachable);
  using Item = std::pair<Time, NpuId>;
  for (int m = 0; m < members_; ++m) {
    if (distance_row_[m] < 0) continue;
    Time* dist = &distance_[static_cast<std::size_t>(distance_row_[m]) * npus_];
    std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
    const NpuId target = collective_.members()[m];
    dist[target] = 0;
    queue.emplace(0, target);
    while (!queue.empty()) {
      const auto [d, x] = queue.top();
      queue.pop();
      if (d != dist[x]) continue;
      for (int l = in_begin_[x]; l < in_begin_[x + 1]; ++l) {
        const NpuId y = links_[l].src;
        const Time candidate = d + links_[l].arrival_delay;
        if (candidate < dist[y]) {
          dist[y] = candidate;
          queue.emplace(candidate, y);
        }
      }
    }
  }
  if (!relays_) return;
  closer_.resize(static_cast<int>(links_.size()), members_);
  for (LinkId l = 0; l < static_cast<LinkId>(links_.size()); ++l) {
    const MatchLink& link = links_[l];
    for (int m = 0; m < members_; ++m) {
      const Time* dist = &distance_[static_cast<std::size_t>(distance_row_[m]) * npus_];
      if (dist[link.dst] < dist[link.src]) closer_.set(l, m);
    }
  }
  lacking_.resize(chunks_, members_);
}

Time GreedyMatcher::remaining_distance(NpuId npu, ChunkId chunk) const {
  const int row = distance_row_[member_index_[destination_[chunk]]];
  return distance_[static_cast<std::size_t>(row) * npus_ + npu];
}

void GreedyMatcher::seed_initial_holdings() {
  if (unicast_) {
    for (ChunkId c = 0; c < chunks_; ++c) {
      const NpuId src = collective_.sources(c)[0];
      holder_[c] = src;
      destination_[c] = collective_.destinations(c)[0];
      if (src == destination_[c]) continue;
      logs_.push(src, c);
      ++remaining_;
    }
    // Farthest destination first, so the critical path leaves early.
    for (NpuId n = 0; n < npus_; ++n)
      logs_.stable_sort(n, [&](ChunkId a, ChunkId b) {
        return remaining_distance(n, a) > remaining_distance(n, b);
      });
  } else {
    for (ChunkId c = 0; c < chunks_; ++c) {
      for (NpuId src : collective_.sources(c)) {
        has_.set(src, c);
        domains_.note_coming(src, c);
        choice_.count_initial_holder(c);
        logs_.push(src, c);
      }
      for (NpuId dst : collective_.destinations(c))
        if (!has(dst, c)) {
          ++remaining_;
          if (relays_) lacking_.set(c, member_index_[dst]);
        }
    }
  }
  total_needed_ = remaining_;
}

void GreedyMatcher::schedule(Time time, std::uint32_t event) {
  auto it = events_.find(time);
  if (it == events_.end()) {
    std::vector<std::uint32_t> bucket;
    if (!spare_buckets_.empty()) {
      bucket = std::move(spare_buckets_.back());
      spare_buckets_.pop_back();
    }
    it = events_.emplace(time, std::move(bucket)).first;
  }
  it->second.push_back(event);
}

void GreedyMatcher::queue_link(LinkId link, std::vector<LinkId>& queue) {
  if (link_state_[link] == LinkState::kQueued) return;
  link_state_[link] = LinkState::kQueued;
  queue.push_back(link);
}

void GreedyMatcher::queue_link(LinkId link) { queue_link(link, queued_); }

void GreedyMatcher::receive(NpuId npu, ChunkId chunk, std::vector<LinkId>& queue) {
  logs_.push(npu, chunk);
  // New data at `npu`: its idle out-links may have something to send again.
  for (LinkId l : idle_out_[npu])
    if (link_state_[l] == LinkState::kIdle) queue_link(l, queue);
  idle_out_[npu].clear();
}

void GreedyMatcher::deliver(NpuId npu, ChunkId chunk, Time now) {
  bool reached_destination;
  if (unicast_) {
    holder_[chunk] = npu;
    reached_destination = npu == destination_[chunk];
  } else {
    has_.set(npu, chunk);
    domains_.note_coming(npu, chunk);
    reached_destination = member_index_[npu] >= 0;
    if (relays_ && reached_destination) lacking_.reset(chunk, member_index_[npu]);
  }
  if (reached_destination) {
    --remaining_;
    finish_time_ = now;
    if (progress_ && (remaining_ & 0xFFFF) == 0 && total_needed_ > 0)
      progress_(1.0 - static_cast<double>(remaining_) / static_cast<double>(total_needed_));
    if (unicast_) return;  // a unicast chunk at its destination goes nowhere else
  }
  receive(npu, chunk, queued_);
}

bool GreedyMatcher::useful(LinkId link, ChunkId chunk) const {
  const MatchLink& l = links_[link];
  if (unicast_) {
    if (holder_[chunk] != l.src || moving_[chunk]) return false;
    return l.dst == destination_[chunk] ||
           remaining_distance(l.dst, chunk) < remaining_distance(l.src, chunk);
  }
  if (has(l.dst, chunk)) return false;
  if (!relays_ || member_index_[l.dst] >= 0) return true;
  return closer_.intersects(link, lacking_, chunk);
}

bool GreedyMatcher::offerable(LinkId link, ChunkId chunk, Time arrival) const {
  if (!useful(link, chunk)) return false;
  if (unicast_) return true;
  const NpuId v = links_[link].dst;
  if (domains_.covered(link, v, chunk)) return false;
  if (!pending(v, chunk)) return true;
  // Already on its way to v: only a faster delivery is worth a second copy.
  if (!heterogeneous_ingress_[v]) return false;
  const auto it = pending_arrival_.find(pair_key(v, chunk));
  return it != pending_arrival_.end() && arrival < it->second;
}

std::optional<ChunkId> GreedyMatcher::find_replacement(const Flight& flight, Time now) {
  // Only chunks the source already held when the transfer started: anything later would not
  // be causal.
  const NpuId source = links_[flight.link].src;
  WindowSlot* window = windows_.window(flight.link);
  std::uint8_t& size = windows_.size(flight.link);
  for (int i = 0; i < size; ++i) {
    const WindowSlot slot = window[i];
    if (slot.position < flight.source_log_length && offerable(flight.link, slot.chunk, now)) {
      window[i] = window[--size];
      return slot.chunk;
    }
  }
  for (std::uint32_t i = windows_.cursor(flight.link); i < flight.source_log_length; ++i)
    if (offerable(flight.link, logs_.at(source, i), now)) return logs_.at(source, i);
  return std::nullopt;
}

void GreedyMatcher::handle_arrival(std::uint32_t flight_index, Time now) {
  const Flight flight = flights_[flight_index];
  free_flights_.push_back(flight_index);
  const NpuId v = links_[flight.link].dst;
  ChunkId chunk = flight.chunk;
  if (model_ == LinkModel::kTacos && !links_[flight.link].switch_route()) queue_link(flight.link);
  if (unicast_) {
    moving_[chunk] = 0;
    deliver(v, chunk, now);
    return;
  }
  if (heterogeneous_ingress_[v] && has(v, chunk)) {
    // A faster path won: carry a replacement the source held at the start, if any (not in a
    // multicast message, whose copies all carry the same chunk).
    const std::optional<ChunkId> replacement =
        flight.multicast ? std::nullopt : find_replacement(flight, now);
    if (!replacement) {
      ++wasted_;
      flights_[flight_index].wasted = true;
      return;
    }
    chunk = *replacement;
    if (flight.record >= 0) records_[flight.record].chunk = chunk;
  }
  if (pending(v, chunk)) {
    pending_.reset(v, chunk);
    pending_arrival_.erase(pair_key(v, chunk));
  }
  deliver(v, chunk, now);
}

GreedyMatcher::Pick GreedyMatcher::pick(LinkId link, Time now, std::vector<ChunkId>& batch) {
  const MatchLink& l = links_[link];
  if (l.switch_route())
    if (const auto wait = ports_.wait_for_hops(link, l, now)) {
      if (wait->new_wake)
        schedule(wait->free_at, kPortEventBit | static_cast<std::uint32_t>(wait->port));
      link_state_[link] = LinkState::kIdle;
      return {PickResult::kWaitsForPort};
    }
  const Time arrival = now + l.arrival_delay;
  WindowSlot* window = windows_.window(link);
  int size = windows_.size(link);
  const std::uint32_t source_log_size = logs_.size(l.src);
  std::uint32_t cursor = windows_.cursor(link);
  auto refill = [&] {
    while (size < windows_.capacity() && cursor < source_log_size) {
      const ChunkId c = logs_.at(l.src, cursor);
      if (offerable(link, c, arrival)) window[size++] = WindowSlot{cursor, c};
      ++cursor;
    }
  };
  // Entries that stopped being useful leave the window for good: usefulness only decreases
  // (v got them, they moved on, or they are on their way and this link only gets later).
  // Copy chunks are checked lazily, only when drawn: a uniform draw that rejects stale
  // entries is still uniform over the live ones, and it saves most of the memory traffic.
  if (choice_.ranks_window()) {
    for (int i = 0; i < size;) {
      if (offerable(link, window[i].chunk, arrival))
        ++i;
      else
        window[i] = window[--size];
    }
  }
  auto next_chunk = [&]() -> std::optional<ChunkId> {
    while (true) {
      refill();
      if (size == 0) return std::nullopt;
      const int choice = choice_.choose(link, l.src, window, size, [this](NpuId npu, ChunkId c) {
        return remaining_distance(npu, c);
      });
      const ChunkId candidate = window[choice].chunk;
      window[choice] = window[--size];
      if (choice_.ranks_window() || offerable(link, candidate, arrival)) return candidate;
    }
  };
  const std::optional<ChunkId> chunk = next_chunk();
  if (chunk && !unicast_) {
    // Marked before any further pick, so that a batch's next picks see it as on its way.
    mark_on_way(l.dst, *chunk, arrival);
    const std::int64_t cap = batch_latencies_ > 0 ? batch_cap(l, batch_latencies_) : 1;
    for (std::int64_t m = 1; m < cap; ++m) {
      const std::optional<ChunkId> more = next_chunk();
      if (!more) break;
      mark_on_way(l.dst, *more, arrival);
      batch.push_back(*more);
    }
  }
  windows_.cursor(link) = cursor;
  windows_.size(link) = static_cast<std::uint8_t>(size);
  if (!chunk) {
    link_state_[link] = LinkState::kIdle;
    return {PickResult::kNothingToSend};
  }
  link_state_[link] = LinkState::kBusy;
  if (l.switch_route()) ports_.reserve(l, now);
  if (unicast_) moving_[*chunk] = 1;
  return {PickResult::kSends, *chunk, source_log_size};
}

void GreedyMatcher::start(const Started& started, const std::vector<ChunkId>& batch, Time now) {
  const LinkId link = started.link;
  const ChunkId chunk = started.chunk;
  const MatchLink& l = links_[link];
  const bool multicast = started.members_end > started.members_begin;
  const std::int32_t group = multicast ? fanout_.new_group() : -1;
  // One transfer per receiver; a multicast message's copies share the start and the entry hop.
  const std::uint32_t batched = started.batch_end - started.batch_begin;
  // A batch arrives when all its bytes have: the latency and one serialization of them all.
  const Time batch_extra =
      batched == 0 ? 0
                   : serialization_time(chunk_bytes_ * (batched + 1), l.bandwidth_gbps) -
                         serialization_time(chunk_bytes_, l.bandwidth_gbps);
  auto fly = [&](LinkId on, ChunkId carried, bool continues) {
    const MatchLink& route = links_[on];
    const Time arrival = now + route.arrival_delay + batch_extra;
    std::int64_t record = -1;
    if (keep_transfers_) {
      record = static_cast<std::int64_t>(records_.size());
      records_.push_back(
          Record{route.src, route.dst, now, arrival, carried, true, group, continues});
    }
    std::uint32_t flight_index;
    const Flight flight{carried, on, started.source_log_size, multicast, false, record};
    if (!free_flights_.empty()) {
      flight_index = free_flights_.back();
      free_flights_.pop_back();
      flights_[flight_index] = flight;
    } else {
      flight_index = static_cast<std::uint32_t>(flights_.size());
      flights_.push_back(flight);
    }
    ++started_;
    if (flight_index >= kPortEventBit)
      throw Error("synthesize: more than 2^30 transfers in flight at once");
    schedule(arrival, flight_index);
  };
  fly(link, chunk, false);
  for (std::uint32_t k = started.batch_begin; k < started.batch_end; ++k) fly(link, batch[k], true);
  for (std::uint32_t k = started.members_begin; k < started.members_end; ++k)
    fly(fanout_.member(k), chunk, false);
  if (model_ == LinkModel::kAstra || l.switch_route())
    schedule(now + l.busy_delay, kFreeEventBit | static_cast<std::uint32_t>(link));
}

void GreedyMatcher::match_range(std::size_t begin, std::size_t end, Time now, MatchOutput& out) {
  // Each try reads its source's log at the link's cursor, far from the last one: fetch a few
  // links ahead so those reads overlap. Nearer, with that log line arrived, fetch the
  // receiver's "has" words its candidates will test (on torus2d:128x128 --time-only, 112-122
  // -> 77-79 CPU-seconds; 8 links ahead: 88).
  constexpr std::size_t kAhead = 8;
  constexpr std::size_t kReceiverAhead = 4;
  for (std::size_t i = begin; i < end; ++i) {
    if (i + kAhead < end) prefetch_link(sort_keys_[i + kAhead].second);
    if (i + kReceiverAhead < end) prefetch_receiver(sort_keys_[i + kReceiverAhead].second);
    const LinkId link = sort_keys_[i].second;
    const auto batch_begin = static_cast<std::uint32_t>(out.batch.size());
    const Pick pick_result = pick(link, now, out.batch);
    switch (pick_result.result) {
      case PickResult::kSends:
        out.started.push_back(Started{link, pick_result.chunk, pick_result.source_log_size, 0, 0,
                                      batch_begin, static_cast<std::uint32_t>(out.batch.size())});
        break;
      case PickResult::kNothingToSend:
        out.idle.push_back(link);
        break;
      case PickResult::kWaitsForPort:  // queued again when the port frees
        break;
    }
  }
}

void GreedyMatcher::match_queued_links(Time now) {
  const std::size_t count = queued_.size();
  if (count == 0) return;
  ++rounds_;
  sort_keys_.resize(count);
  if (switch_routes_)
    match_switch_round(now);
  else
    match_direct_round(now);
}

void GreedyMatcher::match_switch_round(Time now) {
  const std::size_t count = queued_.size();
  ports_.order_round(queued_, links_, choice_, seed_, rounds_, npus_, sort_keys_);
  queued_.clear();
  outputs_[0].clear();
  if (count >= grouped_round_) {
    match_switch_round_by_port(count, now, outputs_[0]);
  } else {
    std::sort(sort_keys_.begin(), sort_keys_.end());
    match_range(0, count, now, outputs_[0]);
  }
  // Multicast fills what the round left free (multicast_fanout.h).
  if (fanout_.active()) {
    fanout_.clear_members();
    for (Started& started : outputs_[0].started) {
      if (!fanout_.enters_multicast(started.link)) continue;
      started.members_begin = fanout_.members_end();
      fanout_.add_members(
          started.link, now, links_, ports_,
          [&](LinkId m, Time arrival) { return offerable(m, started.chunk, arrival); },
          [&](LinkId m, Time arrival) { mark_on_way(links_[m].dst, started.chunk, arrival); });
      started.members_end = fanout_.members_end();
    }
  }
  for (LinkId link : outputs_[0].idle) idle_out_[links_[link].src].push_back(link);
  for (const Started& started : outputs_[0].started) start(started, outputs_[0].batch, now);
}

// The round of match_range over sort_keys_ sorted, without sorting them all. Every route of an
// NPU's port starts on that port and no route passes it later, so once one of them sends in a
// round (or when the port is busy before it), each of the port's routes left in the round finds
// the port busy: it waits for the port, which touches nothing any other route reads in the round
// (the port's waiters and its wake). So the routes of each port are taken in key order (a heap
// per port) until one sends, merged across ports in key order, and the rest wait in one step.
// Links and outcomes are those of the sorted round in the same order; what it saves is the sort
// and a pick per route after its port's send (at 512 NPUs, 510 routes per message sent).
void GreedyMatcher::match_switch_round_by_port(std::size_t count, Time now, MatchOutput& out) {
  using Key = std::pair<std::uint64_t, LinkId>;
  const std::size_t direct = ports_.ports();  // the group of direct links: each goes alone
  if (round_group_.empty()) {
    // Per link, its group, read once per link and round: a compact array, not the route.
    round_group_.resize(links_.size());
    for (std::size_t l = 0; l < links_.size(); ++l)
      round_group_[l] = links_[l].switch_route()
                            ? static_cast<std::uint32_t>(ports_.first_hop(links_[l]))
                            : static_cast<std::uint32_t>(direct);
  }
  group_of_.resize(count);
  for (std::size_t i = 0; i < count; ++i) group_of_[i] = round_group_[sort_keys_[i].second];
  group_into(by_port_, direct + 1, count,
             [&](std::size_t i, auto&& emit) { emit(group_of_[i], sort_keys_[i]); });
  using Head = std::pair<Key, std::uint32_t>;  // a group's smallest key left, the group
  std::vector<Head> heads;
  std::vector<std::uint32_t> left(direct + 1, 0);  // per group: its heap's size
  auto wait_all = [&](std::uint32_t g, const SwitchPorts::Wait& wait) {
    if (wait.new_wake) schedule(wait.free_at, kPortEventBit | static_cast<std::uint32_t>(g));
    const auto group = by_port_[g];
    for (std::uint32_t i = 0; i < left[g]; ++i) {
      ports_.add_waiter(static_cast<LinkId>(g), group[i].second);
      link_state_[group[i].second] = LinkState::kIdle;
    }
    left[g] = 0;
  };
  for (std::uint32_t g = 0; g <= direct; ++g) {
    const auto group = by_port_[g];
    if (group.empty()) continue;
    left[g] = static_cast<std::uint32_t>(group.size());
    if (g < direct)
      if (const auto wait = ports_.wait_for_port(static_cast<LinkId>(g), now)) {
        wait_all(g, *wait);
        continue;
      }
    std::make_heap(group.begin(), group.end(), std::greater<>());
    heads.emplace_back(group.front(), g);
  }
  std::make_heap(heads.begin(), heads.end(), std::greater<>());
  while (!heads.empty()) {
    std::pop_heap(heads.begin(), heads.end(), std::greater<>());
    const std::uint32_t g = heads.back().second;
    heads.pop_back();
    const auto group = by_port_[g];
    std::pop_heap(group.begin(), group.begin() + left[g], std::greater<>());
    const LinkId link = group[--left[g]].second;
    const auto batch_begin = static_cast<std::uint32_t>(out.batch.size());
    const Pick pick_result = pick(link, now, out.batch);
    if (pick_result.result == PickResult::kSends) {
      out.started.push_back(Started{link, pick_result.chunk, pick_result.source_log_size, 0, 0,
                                    batch_begin, static_cast<std::uint32_t>(out.batch.size())});
      if (g < direct && left[g] > 0)
        wait_all(g, *ports_.wait_for_port(static_cast<LinkId>(g), now));
    } else if (pick_result.result == PickResult::kNothingToSend) {
      out.idle.push_back(link);
    }
    if (left[g] > 0) {
      heads.emplace_back(group.front(), g);
      std::push_heap(heads.begin(), heads.end(), std::greater<>());
    }
  }
}

void GreedyMatcher::sort_by_destination() {
  // Links into the same NPU compete for its needs: offer them fastest first (the earliest
  // arrival wins), in seeded random order among equals. Links into different NPUs do not
  // interact, so they go NPU by NPU, which keeps each NPU's state bits in cache.
  const std::size_t count = queued_.size();
  for (std::size_t i = 0; i < count; ++i) {
    const LinkId l = queued_[i];
    const std::uint64_t key = (static_cast<std::uint64_t>(links_[l].dst) << 40) |
                              (static_cast<std::uint64_t>(links_[l].delay_rank) << 24) |
                              (mix64(seed_ ^ (static_cast<std::uint64_t>(rounds_) << 32) ^
                                     static_cast<std::uint64_t>(l)) >>
                               40);
    sort_keys_[i] = {key, l};
  }
  queued_.clear();
  if (count * 8 < static_cast<std::size_t>(npus_)) {
    std::sort(sort_keys_.begin(), sort_keys_.end());
    return;
  }
  // Counting sort by destination, then each (small) destination group by its key.
  group_into(by_destination_, npus_, count,
             [&](std::size_t i, auto&& emit) { emit(sort_keys_[i].first >> 40, sort_keys_[i]); });
  for (int v = 0; v < npus_; ++v)
    if (by_destination_.size(v) > 1) {
      const auto group = by_destination_[v];
      std::sort(group.begin(), group.end());
    }
  sort_keys_.swap(by_destination_.values);
}

void GreedyMatcher::match_direct_round(Time now) {
  const std::size_t count = queued_.size();
  sort_by_destination();
  // Links into different NPUs touch disjoint state, so large batches are split between
  // threads at an NPU boundary; the effects are applied in the same order either way, so the
  // result does not depend on the thread count.
  std::size_t split = count;
  if (match_threads_ > 1 && count >= parallel_round_) {
    split = count / 2;
    while (split < count &&
           links_[sort_keys_[split].second].dst == links_[sort_keys_[split - 1].second].dst)
      ++split;
  }
  outputs_[0].clear();
  outputs_[1].clear();
  if (split < count) {
    run_on_two_threads([&] { match_range(0, split, now, outputs_[0]); },
                       [&] { match_range(split, count, now, outputs_[1]); });
  } else {
    match_range(0, count, now, outputs_[0]);
  }
  for (const MatchOutput& out : outputs_) {
    for (LinkId link : out.idle) idle_out_[links_[link].src].push_back(link);
    for (const Started& s : out.started) start(s, out.batch, now);
  }
}

void GreedyMatcher::prefetch_link(LinkId link) const {
  logs_.prefetch(links_[link].src, windows_.cursor(link));
}

void GreedyMatcher::prefetch_receiver(LinkId link) {
  if (unicast_) return;
  const MatchLink& l = links_[link];
  const WindowSlot* window = windows_.window(link);
  const int size = windows_.size(link);
  for (int i = 0; i < size; ++i) has_.prefetch(l.dst, window[i].chunk);
  const std::uint32_t cursor = windows_.cursor(link);
  const std::uint32_t log_size = logs_.size(l.src);
  const int room = windows_.capacity() - size;
  for (std::uint32_t p = cursor; p < log_size && p < cursor + static_cast<std::uint32_t>(room); ++p)
    has_.prefetch(l.dst, logs_.at(l.src, p));
}

void GreedyMatcher::arrive(const std::vector<std::uint32_t>& bucket, Time now) {
  constexpr std::size_t kAhead = 8;
  for (std::size_t i = 0; i < bucket.size(); ++i) {
    if (i + kAhead < bucket.size() && is_flight(bucket[i + kAhead])) {
      const Flight& ahead = flights_[bucket[i + kAhead]];
      if (!unicast_) has_.prefetch(links_[ahead.link].dst, ahead.chunk);
    }
    if (is_flight(bucket[i])) handle_arrival(bucket[i], now);
  }
}

// The arrivals of a large round for an all-NPU copy collective with uniform in-links: nothing
// is ever wasted, and an arrival touches only its receiver (bits, log, idle out-links), so the
// receivers are split between two threads: those below a pivot NPU and the rest, each thread
// taking its receivers' arrivals in bucket order. A bucket need not be grouped by receiver:
// batched messages of different sizes, started in different rounds, arrive together. Each
// receiver sees its arrivals in the order arrive() would take them; the links to re-match are
// gathered per thread, and the next round orders them by its own keys (sort_by_destination),
// not by the order they were queued in. What handle_arrival and deliver do beyond the receiver
// (freeing the flight, counting what is left, progress) touches shared state, so it is done
// here once per bucket after the join.
void GreedyMatcher::arrive_in_parallel(const std::vector<std::uint32_t>& bucket, Time now) {
  auto receiver = [&](std::size_t i) {
    return (bucket[i] & kFreeEventBit) ? -1 : links_[flights_[bucket[i]].link].dst;
  };
  // The receiver in the bucket's middle: half the arrivals each where the bucket is one
  // round's, sorted by receiver (the common case).
  NpuId pivot = -1;
  for (std::size_t i = bucket.size() / 2; i < bucket.size() && pivot < 0; ++i) pivot = receiver(i);
  if (pivot < 0) pivot = npus_;
  std::int64_t delivered[2] = {0, 0};
  auto run_range = [&](bool upper, std::vector<LinkId>& queued, std::int64_t& count) {
    constexpr std::size_t kAhead = 8;
    const std::size_t end = bucket.size();
    for (std::size_t i = 0; i < end; ++i) {
      if (i + kAhead < end && !(bucket[i + kAhead] & kFreeEventBit)) {
        const Flight& ahead = flights_[bucket[i + kAhead]];
        if ((links_[ahead.link].dst >= pivot) == upper)
          has_.prefetch(links_[ahead.link].dst, ahead.chunk);
      }
      if (bucket[i] & kFreeEventBit) continue;
      const Flight& flight = flights_[bucket[i]];
      const NpuId v = links_[flight.link].dst;
      if ((v >= pivot) != upper) continue;
      if (model_ == LinkModel::kTacos) queue_link(flight.link, queued);
      has_.set(v, flight.chunk);
      ++count;
      receive(v, flight.chunk, queued);
    }
  };
  outputs_[1].idle.clear();
  run_on_two_threads([&] { run_range(false, queued_, delivered[0]); },
                     [&] { run_range(true, outputs_[1].idle, delivered[1]); });
  queued_.insert(queued_.end(), outputs_[1].idle.begin(), outputs_[1].idle.end());
  for (std::uint32_t event : bucket)
    if (!(event & kFreeEventBit)) free_flights_.push_back(event);
  const std::int64_t count = delivered[0] + delivered[1];
  if (count > 0) {
    const std::int64_t old_remaining = remaining_;
    remaining_ -= count;
    finish_time_ = now;
    if (progress_ && total_needed_ > 0 && (old_remaining >> 16) != (remaining_ >> 16))
      progress_(1.0 - static_cast<double>(remaining_) / static_cast<double>(total_needed_));
  }
}

void GreedyMatcher::set_whole_deadline(Time deadline, const std::vector<Time>* base_load) {
  if (base_load && ports_.ports() > 0 && base_load->size() != ports_.ports())
    throw Error("synthesize: a base load needs one entry per link (internal)");
  whole_deadline_ = deadline;
  base_load_ = base_load;
}

bool GreedyMatcher::load_reaches_deadline(const std::vector<std::uint32_t>& bucket) {
  if (direct_load_.empty()) {
    direct_load_.assign(links_.size(), 0);
    port_load_.assign(ports_.ports(), 0);
  }
  bool reached = false;
  auto add = [&](Time& load, Time busy, Time base) {
    load += busy;
    if (reached) return;
    if (load >= deadline_) {
      reached = true;
      abandoned_at_ = load;
    } else if (base_load_ && load + base >= whole_deadline_) {
      reached = true;
      abandoned_at_ = load + base;
    }
  };
  for (const std::uint32_t event : bucket) {
    if (!is_flight(event)) continue;
    // The arrival has been handled; its flight stays as it was until the next round starts.
    const Flight& flight = flights_[event];
    if (flight.multicast || flight.wasted) continue;
    const MatchLink& l = links_[flight.link];
    if (l.switch_route())
      ports_.for_each_hop(l, [&](LinkId port, Time busy) {
        add(port_load_[port], busy, base_load_ ? (*base_load_)[port] : 0);
      });
    else
      add(direct_load_[flight.link], l.busy_delay, 0);
  }
  return reached;
}

void GreedyMatcher::run() {
  seed_initial_holdings();
  for (LinkId l = 0; l < static_cast<LinkId>(links_.size()); ++l) queue_link(l);
  // Batched messages pay one latency for several chunks: their arrivals are not counted.
  const bool bound_load =
      ((deadline_ != kNoDeadline && retimed_deadline_) || base_load_) && !batches();
  Time now = 0;
  while (remaining_ > 0) {
    match_queued_links(now);
    if (events_.empty()) break;
    auto node = events_.extract(events_.begin());
    now = node.key();
    check_schedule_time(now, "synthesis");
    if (!retimed_deadline_ && now >= deadline_) {
      // Something is still missing and nothing arrives before `now`.
      abandoned_ = true;
      abandoned_at_ = now;
      return;
    }
    std::vector<std::uint32_t>& bucket = node.mapped();
    if (match_threads_ > 1 && bucket.size() >= parallel_round_)
      arrive_in_parallel(bucket, now);
    else
      arrive(bucket, now);
    if (bound_load && load_reaches_deadline(bucket)) {
      abandoned_ = true;
      return;
    }
    for (std::uint32_t event : bucket) {
      if (event & kFreeEventBit) {
        queue_link(static_cast<LinkId>(event & ~kFreeEventBit));
      } else if (event & kPortEventBit) {
        ports_.wake(static_cast<LinkId>(event & ~kPortEventBit), now, [&](LinkId l) {
          if (link_state_[l] == LinkState::kIdle) queue_link(l);
        });
      }
    }
    bucket.clear();
    spare_buckets_.push_back(std::move(bucket));
  }
  if (remaining_ > 0) {
    for (ChunkId c = 0; c < chunks_; ++c)
      for (NpuId dst : collective_.destinations(c))
        if (unicast_ ? holder_[c] != dst : !has(dst, c))
          throw Error("synthesize: chunk " + std::to_string(c) + " can never reach NPU " +
                      std::to_string(dst) + " (no path from its source)");
  }
  // Transfers still in flight at the end deliver nothing anyone needs.
  for (const auto& [time, bucket] : events_)
    for (std::uint32_t event : bucket)
      if (is_flight(event)) {
        ++cancelled_;
        if (flights_[event].record >= 0) records_[flights_[event].record].kept = false;
      }
  if (progress_) progress_(1.0);
}

Algorithm GreedyMatcher::take_algorithm() {
  if (abandoned_) throw Error("synthesize: internal error, an abandoned run has no schedule");
  Algorithm algorithm(collective_);
  algorithm.reserve(records_.size());
  // A multicast message keeps its group while two or more of its copies are kept.
  std::vector<std::int32_t> kept_copies(static_cast<std::size_t>(fanout_.groups()), 0);
  for (const Record& r : records_)
    if (r.kept && r.multicast >= 0) ++kept_copies[r.multicast];
  std::vector<ChunkId> message;
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const Record& r = records_[i];
    message.clear();
    if (r.kept) message.push_back(r.chunk);
    // A batch's chunks are one transfer: its time is that of the whole message.
    while (i + 1 < records_.size() && records_[i + 1].continues)
      if (records_[++i].kept) message.push_back(records_[i].chunk);
    if (!message.empty())
      algorithm.add_transfer(r.src, r.dst, r.start, r.end, message, false,
                             r.multicast >= 0 && kept_copies[r.multicast] > 1 ? r.multicast : -1);
  }
  records_.clear();
  records_.shrink_to_fit();
  algorithm.synthesizer = "tacos";
  algorithm.link_model = model_;
  algorithm.collective_time = finish_time_;
  return algorithm;
}

}  // namespace tacos::detail
