// The port engine (port_engine.h). Per message flat arrays (route, bytes, hop, FIFO link);
// per link a free flag, a FIFO of messages as a linked list through the messages (a message
// waits in at most one FIFO at a time) and a SwitchQueue for links leaving a switch.
#include "port_engine.h"

#include <algorithm>

#include "tacos/common/time_limit.h"
#include "tacos/common/units.h"

namespace tacos::detail {

PortEngine::PortEngine(const Topology& topology, Options options, std::size_t messages,
                       Client& client)
    : topology_(topology), options_(std::move(options)), client_(client) {
  options_.priority.resize(std::max<std::size_t>(options_.priority.size(), kFirstCallerKind), 0);
  route_.resize(messages);
  bytes_.assign(messages, 0);
  chunk_.assign(messages, 0);
  hop_.assign(messages, 0);
  next_.assign(messages, kNone);
  ready_.assign(messages, 0);
  start_.assign(messages, -1);
  end_.assign(messages, -1);
  const int links = topology.num_links();
  free_.assign(links, 1);
  from_switch_.resize(links);
  for (LinkId l = 0; l < links; ++l) from_switch_[l] = topology.is_switch(topology.link(l).src);
  head_.assign(links, kNone);
  tail_.assign(links, kNone);
  switch_queue_.resize(links);
  busy_ps_.assign(links, 0);
}

void PortEngine::set_message(std::uint32_t msg, std::span<const LinkId> route, Bytes bytes,
                             ChunkId chunk) {
  route_[msg] = route;
  bytes_[msg] = bytes;
  chunk_[msg] = chunk;
}

void PortEngine::cache_serialization(Bytes bytes) {
  cached_bytes_ = bytes;
  cached_ser_.resize(topology_.num_links());
  for (LinkId l = 0; l < topology_.num_links(); ++l)
    cached_ser_[l] = serialization_time(bytes, topology_.link(l).bandwidth_gbps);
}

void PortEngine::add_member(std::uint32_t leader, std::uint32_t member) {
  if (next_member_.empty()) {
    next_member_.assign(route_.size(), kNone);
    last_member_.assign(route_.size(), kNone);
  }
  if (last_member_[leader] == kNone)
    next_member_[leader] = member;
  else
    next_member_[last_member_[leader]] = member;
  last_member_[leader] = member;
}

void PortEngine::post(Time time, std::uint32_t kind, std::uint32_t id) {
  const std::uint64_t tie = options_.ties_by_id ? id : seq_++;
  const std::uint64_t priority = kind < options_.priority.size() ? options_.priority[kind] : 0;
  events_.push(Event{time, priority << 56 | tie, kind, id});
}

void PortEngine::append(LinkId link, std::uint32_t msg) {
  next_[msg] = kNone;
  if (tail_[link] == kNone)
    head_[link] = msg;
  else
    next_[tail_[link]] = msg;
  tail_[link] = msg;
}

void PortEngine::enqueue(std::uint32_t msg, bool ready) {
  ready_[msg] = ready;
  append(route_[msg][hop_[msg]], msg);
}

void PortEngine::ready(std::uint32_t msg, Time now) {
  ready_[msg] = 1;
  const LinkId link = route_[msg][hop_[msg]];
  if (hop_[msg] == 0 && from_switch_[link]) {  // a reducing switch's own message
    queue_at_switch(msg, link, now);
    return;
  }
  if (head_[link] == msg) try_start(link, now);
}

void PortEngine::send(std::uint32_t msg, Time now) {
  if (!options_.congestion) {
    begin(msg, now);
    return;
  }
  queue_ready(msg, route_[msg][hop_[msg]], now);
}

void PortEngine::queue_ready(std::uint32_t msg, LinkId link, Time now) {
  ready_[msg] = 1;
  append(link, msg);
  if (options_.start_at_event)
    post(now, kStart, static_cast<std::uint32_t>(link));
  else
    try_start(link, now);
}

void PortEngine::try_start(LinkId link, Time now) {
  if (from_switch_[link]) {
    serve(link, now);
    return;
  }
  if (!free_[link]) return;
  const std::uint32_t msg = head_[link];
  if (msg == kNone || !ready_[msg]) return;
  head_[link] = next_[msg];
  if (head_[link] == kNone) tail_[link] = kNone;
  if (hop_[msg] == 0)
    begin(msg, now);
  else
    cross(msg, now);
}

void PortEngine::begin(std::uint32_t msg, Time now) {
  start_[msg] = now;
  ++started_;
  if (!next_member_.empty())
    for (std::uint32_t m = next_member_[msg]; m != kNone; m = next_member_[m]) {
      start_[m] = now;
      ++started_;
    }
  if (options_.congestion)
    cross(msg, now);
  else
    cross_route(msg, now);
  client_.started(*this, msg, now);
}

Time PortEngine::serialization(std::uint32_t msg, LinkId link) const {
  if (bytes_[msg] == cached_bytes_ && cached_bytes_ > 0) return cached_ser_[link];
  return serialization_time(bytes_[msg], topology_.link(link).bandwidth_gbps);
}

void PortEngine::cross(std::uint32_t msg, Time now) {
  const LinkId l = route_[msg][hop_[msg]];
  const Link& link = topology_.link(l);
  Time ser = serialization(msg, l);
  Time busy = link_busy_time(options_.model, link.latency_ps, ser);
  Time travel = link.latency_ps + ser;
  if (options_.whole_ns && options_.model == LinkModel::kAstra) {
    // ASTRA-sim: bandwidth in bytes per ns, both delays cast to whole ns.
    const double bytes_per_ns = link.bandwidth_gbps * kBytesPerGB / 1e9;
    const double ser_ns = static_cast<double>(bytes_[msg]) / bytes_per_ns;
    const double latency_ns = static_cast<double>(link.latency_ps) / kPicosPerNano;
    busy = static_cast<Time>(ser_ns) * kPicosPerNano;
    travel = static_cast<Time>(latency_ns + ser_ns) * kPicosPerNano;
  }
  free_[l] = 0;
  busy_ps_[l] += busy;
  ++hops_;
  post(now + busy, from_switch_[l] ? kSwitchFree : kLinkFree, static_cast<std::uint32_t>(l));
  post(now + travel, hop_[msg] + 1 < route_[msg].size() ? kHop : kArrive, msg);
}

// ASTRA-sim's congestion-unaware backend: every latency, and the bytes once at the narrowest
// hop; no link is held.
void PortEngine::cross_route(std::uint32_t msg, Time now) {
  const std::span<const LinkId> route = route_[msg];
  Time latency = 0;
  double narrowest = std::numeric_limits<double>::infinity();
  for (LinkId l : route) {
    latency += topology_.link(l).latency_ps;
    narrowest = std::min(narrowest, topology_.link(l).bandwidth_gbps);
  }
  hop_[msg] = static_cast<std::uint32_t>(route.size() - 1);
  hops_ += static_cast<std::int64_t>(route.size());
  post(now + latency + serialization_time(bytes_[msg], narrowest), kArrive, msg);
}

void PortEngine::reach(std::uint32_t msg, Time now) {
  // A multicast leader reaching its switch is copied to every member's next hop, members first.
  if (hop_[msg] == 0 && !next_member_.empty())
    for (std::uint32_t m = next_member_[msg]; m != kNone; m = next_member_[m]) queue_next(m, now);
  queue_next(msg, now);
}

void PortEngine::queue_next(std::uint32_t msg, Time now) {
  const LinkId l = route_[msg][++hop_[msg]];
  if (!from_switch_[l]) {  // through an NPU (the Chakra replay's fewest-hop paths)
    queue_ready(msg, l, now);
    return;
  }
  queue_at_switch(msg, l, now);
}

void PortEngine::queue_at_switch(std::uint32_t msg, LinkId link, Time now) {
  const std::span<const LinkId> route = route_[msg];
  switch_queue_[link].push(
      {now, topology_.link(route.front()).src, topology_.link(route.back()).dst, chunk_[msg], msg});
  if (free_[link]) post(now, kServe, static_cast<std::uint32_t>(link));
}

void PortEngine::serve(LinkId link, Time now) {
  SwitchQueue& queue = switch_queue_[link];
  if (!free_[link] || queue.empty()) return;
  const std::uint32_t msg = queue.top().id;
  queue.pop();
  if (hop_[msg] != 0) {
    cross(msg, now);
    return;
  }
  // A reducing switch's own message starts here (alone: multicast groups leave NPUs).
  start_[msg] = now;
  ++started_;
  cross(msg, now);
  client_.started(*this, msg, now);
}

void PortEngine::run() {
  while (!events_.empty()) {
    const Event e = events_.top();
    events_.pop();
    check_schedule_time(e.time, options_.clock);
    switch (e.kind) {
      case kArrive:
        end_[e.id] = e.time;
        client_.arrived(*this, e.id, e.time);
        break;
      case kHop:
        reach(e.id, e.time);
        break;
      case kLinkFree:
        free_[e.id] = 1;
        try_start(static_cast<LinkId>(e.id), e.time);
        break;
      case kSwitchFree:
        free_[e.id] = 1;
        if (!options_.serve_after_free)
          serve(static_cast<LinkId>(e.id), e.time);
        else if (!switch_queue_[e.id].empty())
          post(e.time, kServe, e.id);
        break;
      case kServe:
        serve(static_cast<LinkId>(e.id), e.time);
        break;
      case kStart:
        try_start(static_cast<LinkId>(e.id), e.time);
        break;
      default:
        client_.event(*this, e.kind, e.id, e.time);
    }
  }
}

}  // namespace tacos::detail
