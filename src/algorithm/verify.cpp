// Replay of an algorithm's own times: links, durations, causality, link occupancy and
// postconditions. Everything works on flat arrays grouped by counting sort (per chunk, per link),
// never on a devices x chunks matrix: a chunk's holders are tracked in one scratch array over the
// devices that is reset after each chunk.
//
// Copy collectives: the per-chunk pass keeps, for the chunk at hand, the earliest time each
// device holds it (`arrival`).
//
// Reduction collectives (partial sums): the per-chunk pass replays the chunk's transfers in time
// order (arrivals before starts at equal times) and keeps, per device, the set of contributors
// its partial covers: a bitset over the collective's members, held in a small pool of bitsets
// with reference counts (`PartialSums`). A transfer's start takes a reference to the sender's
// set (the value it carries); a copy's end hands that reference to the receiver, a reduction's
// end unions it into the receiver's set (in place when nobody else refers to it, else copy on
// write). Devices get their initial set ({self} for contributors, empty otherwise) lazily, on
// first use. The pool is emptied after each chunk, so memory is O(N + live sets of one chunk x
// members / 8 bytes) and time O(T log T + T x members / 64) word operations.
#include "tacos/algorithm/verify.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "../common/group_by.h"
#include "tacos/collective/collective.h"
#include "tacos/common/units.h"
#include "tacos/topology/switch_routes.h"
#include "transfer_check.h"

namespace tacos {
namespace {

constexpr Time kNever = std::numeric_limits<Time>::max();

std::string us(Time ps) { return format_micros(ps) + " us"; }

std::string link_name(const Topology& topology, LinkId id) {
  const Link& l = topology.link(id);
  return std::to_string(l.src) + " -> " + std::to_string(l.dst);
}

// Copy collectives, chunk by chunk: arrival[d] is the earliest time device d holds the chunk (0
// at its sources), kNever when it never does. Sets the lowest-index causality violation and the
// first chunk (lowest id) with a destination that never gets it.
void check_copies(const Algorithm& algorithm, const Topology& topology,
                  const std::vector<std::int64_t>& chunk_offsets,
                  const std::vector<std::uint32_t>& by_chunk, std::string& causal_error,
                  std::string& missing_error) {
  const auto& transfers = algorithm.transfers();
  const Collective& collective = algorithm.collective();
  std::vector<Time> arrival(topology.devices(), kNever);
  std::vector<DeviceId> touched;
  std::size_t causal_index = transfers.size();  // lowest violating transfer so far
  for (ChunkId c = 0; c < collective.num_chunks(); ++c) {
    const std::uint32_t* begin = by_chunk.data() + chunk_offsets[c];
    const std::uint32_t* end = by_chunk.data() + chunk_offsets[c + 1];
    auto hold = [&](DeviceId d, Time when) {
      if (arrival[d] == kNever) touched.push_back(d);
      arrival[d] = std::min(arrival[d], when);
    };
    for (const std::uint32_t* p = begin; p != end; ++p) hold(transfers[*p].dst, transfers[*p].end);
    for (NpuId s : collective.sources(c)) hold(s, 0);
    for (const std::uint32_t* p = begin; p != end && *p < causal_index; ++p) {
      const Transfer& t = transfers[*p];
      const Time at = arrival[t.src];
      if (at <= t.start) continue;
      causal_index = *p;
      causal_error =
          describe_transfer(algorithm, *p) + " starts at " + us(t.start) + " but chunk " +
          std::to_string(c) +
          (at == kNever ? " never reaches " + describe_device(topology, t.src)
                        : " reaches " + describe_device(topology, t.src) + " only at " + us(at));
      break;
    }
    if (missing_error.empty())
      for (NpuId d : collective.destinations(c))
        if (arrival[d] == kNever) {
          missing_error = "chunk " + std::to_string(c) + " never reaches " +
                          describe_device(topology, d) + ", one of its destinations";
          break;
        }
    for (DeviceId d : touched) arrival[d] = kNever;
    touched.clear();
  }
}

// Contributor sets of one chunk: bitsets of `words` 64-bit words over the collective's members,
// addressed by handles into a pool; kEmpty is the empty set (never stored). Handles are shared by
// reference count (device states and the values of transfers in flight).
class PartialSums {
 public:
  static constexpr std::uint32_t kEmpty = std::numeric_limits<std::uint32_t>::max();

  explicit PartialSums(int bits) : words_(static_cast<std::size_t>((bits + 63) / 64)) {}

  std::size_t words() const { return words_; }
  const std::uint64_t* bits(std::uint32_t h) const { return pool_.data() + h * words_; }

  std::uint32_t singleton(int bit) {
    const std::uint32_t h = allocate();
    pool_[h * words_ + static_cast<std::size_t>(bit) / 64] |= std::uint64_t{1} << (bit % 64);
    return h;
  }
  std::uint32_t share(std::uint32_t h) {
    if (h != kEmpty) ++refs_[h];
    return h;
  }
  void release(std::uint32_t h) {
    if (h != kEmpty && --refs_[h] == 0) free_.push_back(h);
  }
  // Lowest bit in both sets, or -1.
  int first_common(std::uint32_t a, std::uint32_t b) const {
    if (a == kEmpty || b == kEmpty) return -1;
    const std::uint64_t* x = bits(a);
    const std::uint64_t* y = bits(b);
    for (std::size_t w = 0; w < words_; ++w)
      if (const std::uint64_t both = x[w] & y[w])
        return static_cast<int>(w * 64) + std::countr_zero(both);
    return -1;
  }
  // Lowest bit of `expected` (a words()-long array) missing from set h, or -1.
  int first_missing(const std::uint64_t* expected, std::uint32_t h) const {
    const std::uint64_t* x = h == kEmpty ? nullptr : bits(h);
    for (std::size_t w = 0; w < words_; ++w)
      if (const std::uint64_t missing = expected[w] & ~(x ? x[w] : 0))
        return static_cast<int>(w * 64) + std::countr_zero(missing);
    return -1;
  }
  // The union of set `into` (whose reference is consumed) and set `add` (whose reference is
  // kept), as a new reference. Modifies `into` in place when it is the only reference to it.
  std::uint32_t merge(std::uint32_t into, std::uint32_t add) {
    if (add == kEmpty) return into;
    if (into == kEmpty) return share(add);
    std::uint32_t out = into;
    if (refs_[into] != 1) {
      out = allocate();
      std::copy_n(pool_.begin() + into * words_, words_, pool_.begin() + out * words_);
      release(into);
    }
    std::uint64_t* o = pool_.data() + out * words_;
    const std::uint64_t* a = bits(add);
    for (std::size_t w = 0; w < words_; ++w) o[w] |= a[w];
    return out;
  }
  // Forgets every set (keeps the memory).
  void clear() {
    pool_.clear();
    refs_.clear();
    free_.clear();
  }

 private:
  std::uint32_t allocate() {
    std::uint32_t h;
    if (!free_.empty()) {
      h = free_.back();
      free_.pop_back();
      std::fill_n(pool_.begin() + h * words_, words_, 0);
    } else {
      h = static_cast<std::uint32_t>(refs_.size());
      refs_.push_back(0);
      pool_.resize(pool_.size() + words_, 0);
    }
    refs_[h] = 1;
    return h;
  }

  std::size_t words_;
  std::vector<std::uint64_t> pool_;
  std::vector<std::uint32_t> refs_;
  std::vector<std::uint32_t> free_;
};

// What the partial-sum replay found: the earliest violation during the replay (by event time,
// then transfer index) and the first missing contribution at a destination (lowest chunk id).
struct ReductionReplay {
  bool violation = false;
  Time violation_time = 0;
  std::uint32_t violation_index = 0;
  std::string violation_error;
  std::string missing_error;
};

// Replays reduction collectives chunk by chunk (see the comment at the top of this file).
// `by_chunk` holds, per chunk (between chunk_offsets), the transfers carrying it in index order.
ReductionReplay replay_partial_sums(const Algorithm& algorithm, const Topology& topology,
                                    const std::vector<std::int64_t>& chunk_offsets,
                                    const std::vector<std::uint32_t>& by_chunk) {
  ReductionReplay out;
  const auto& transfers = algorithm.transfers();
  const Collective& collective = algorithm.collective();
  const int num_members = collective.num_members();
  PartialSums sums(num_members);
  const std::size_t words = sums.words();
  constexpr std::uint32_t kUntouched = PartialSums::kEmpty - 1;
  std::vector<std::uint32_t> state(topology.devices(), kUntouched);  // device -> set handle
  std::vector<DeviceId> touched;
  std::vector<std::uint64_t> expected(words);  // the chunk's contributors
  std::vector<std::uint32_t> carried;          // per entry of the chunk: the set it carries
  struct Event {
    Time time;
    std::uint64_t key;  // (is_start << 32) | entry: arrivals before starts, then index order
    bool operator<(const Event& o) const { return time != o.time ? time < o.time : key < o.key; }
  };
  std::vector<Event> events;
  auto bit_of = [&](DeviceId d) {
    const int m = d < collective.topology_npus() ? collective.member_index(d) : -1;
    return m >= 0 && (expected[static_cast<std::size_t>(m) / 64] >> (m % 64) & 1) ? m : -1;
  };
  auto get = [&](DeviceId d) {
    if (state[d] == kUntouched) {
      touched.push_back(d);
      const int bit = bit_of(d);
      state[d] = bit >= 0 ? sums.singleton(bit) : PartialSums::kEmpty;
    }
    return state[d];
  };
  auto npu_of_bit = [&](int bit) { return collective.members()[bit]; };

  for (ChunkId c = 0; c < collective.num_chunks(); ++c) {
    const std::uint32_t* entries = by_chunk.data() + chunk_offsets[c];
    const std::size_t count = static_cast<std::size_t>(chunk_offsets[c + 1] - chunk_offsets[c]);
    std::fill(expected.begin(), expected.end(), 0);
    for (NpuId s : collective.sources(c)) {
      const int m = collective.member_index(s);
      expected[static_cast<std::size_t>(m) / 64] |= std::uint64_t{1} << (m % 64);
    }
    events.clear();
    for (std::size_t p = 0; p < count; ++p) {
      const Transfer& t = transfers[entries[p]];
      events.push_back(Event{t.start, (std::uint64_t{1} << 32) | p});
      events.push_back(Event{t.end, p});
    }
    std::sort(events.begin(), events.end());
    carried.assign(count, kUntouched);

    auto violate = [&](std::size_t p, Time when, std::string message) {
      const std::uint32_t index = entries[p];
      if (!out.violation || when < out.violation_time ||
          (when == out.violation_time && index < out.violation_index)) {
        out.violation = true;
        out.violation_time = when;
        out.violation_index = index;
        out.violation_error = std::move(message);
      }
    };
    // The value a transfer carries: its sender's set at its start.
    auto sample = [&](std::size_t p) -> bool {
      const Transfer& t = transfers[entries[p]];
      const std::uint32_t h = get(t.src);
      if (h == PartialSums::kEmpty) {
        Time first = kNever;
        for (std::size_t q = 0; q < count; ++q)
          if (transfers[entries[q]].dst == t.src)
            first = std::min(first, transfers[entries[q]].end);
        const std::string at = describe_device(topology, t.src);
        violate(p, t.start,
                describe_transfer(algorithm, entries[p]) + " starts at " + us(t.start) +
                    " and sends chunk " + std::to_string(c) + " from " + at +
                    ", which holds no partial of it" +
                    (first == kNever ? " (none ever reaches " + at + ")"
                                     : " (the first one reaches " + at + " at " + us(first) + ")"));
        return false;
      }
      carried[p] = sums.share(h);
      return true;
    };

    bool ok = true;
    for (const Event& e : events) {
      if (out.violation && e.time > out.violation_time) break;  // cannot be the earliest
      const std::size_t p = static_cast<std::size_t>(e.key & 0xffffffffu);
      const Transfer& t = transfers[entries[p]];
      if (e.key >> 32) {
        if (carried[p] == kUntouched && !(ok = sample(p))) break;
        continue;
      }
      // An arrival (its start came first unless the transfer takes no time).
      if (carried[p] == kUntouched && !(ok = sample(p))) break;
      const std::uint32_t have = get(t.dst);
      if (!t.reduce) {
        sums.release(have);
        state[t.dst] = carried[p];
        continue;
      }
      const int twice = sums.first_common(have, carried[p]);
      if (twice >= 0) {
        violate(p, t.end,
                "chunk " + std::to_string(c) + ": " + describe_device(topology, t.dst) +
                    " receives NPU " + std::to_string(npu_of_bit(twice)) +
                    "'s contribution twice (" + describe_transfer(algorithm, entries[p]) + " at " +
                    us(t.end) + ")");
        ok = false;
        break;
      }
      state[t.dst] = sums.merge(have, carried[p]);
      sums.release(carried[p]);
    }

    if (ok && !out.violation && out.missing_error.empty())
      for (NpuId d : collective.destinations(c)) {
        const int missing = sums.first_missing(expected.data(), get(d));
        if (missing < 0) continue;
        out.missing_error = "chunk " + std::to_string(c) + " at " + describe_device(topology, d) +
                            " lacks the contribution of NPU " + std::to_string(npu_of_bit(missing));
        break;
      }
    for (DeviceId d : touched) state[d] = kUntouched;
    touched.clear();
    sums.clear();
  }
  return out;
}

// Per link, transfers by (start, index): none may start while an earlier one keeps the link busy
// (tacos: until its end; astra: until its bytes are serialized); a message through switches
// holds its first link for that hop's time only. A multicast group occupies its entry link
// once: only its leader is counted there. Returns the earliest conflict, or "".
std::string first_link_conflict(const Algorithm& algorithm, const Topology& topology,
                                LinkModel model, const std::vector<LinkId>& link_of,
                                const std::vector<char>& multi_hop,
                                const std::vector<std::uint32_t>& leader,
                                const std::vector<Time>& single_chunk_ser) {
  const auto& transfers = algorithm.transfers();
  const std::size_t num_transfers = transfers.size();
  auto serialization = [&](const Transfer& t, LinkId l) {
    return t.num_chunks == 1
               ? single_chunk_ser[l]
               : serialization_time(algorithm.transfer_bytes(t), topology.link(l).bandwidth_gbps);
  };
  // Occupying transfers by link as (start, index) pairs, so that sorting reads memory in
  // sequence; usually already sorted.
  auto occupancy = detail::group_by<std::int64_t, std::pair<Time, std::uint32_t>>(
      static_cast<std::size_t>(topology.num_links()), num_transfers,
      [&](std::size_t i, auto&& emit) {
        if (leader[i] == i)
          emit(link_of[i], std::pair{transfers[i].start, static_cast<std::uint32_t>(i)});
      });
  auto busy_until = [&](std::uint32_t i) {
    const Transfer& t = transfers[i];
    const LinkId l = link_of[i];
    if (multi_hop[i])
      return t.start + link_busy_time(model, topology.link(l).latency_ps, serialization(t, l));
    if (model == LinkModel::kTacos) return t.end;
    return t.start + serialization(t, l);
  };
  bool conflict = false;
  Time conflict_time = 0;
  std::string conflict_error;
  for (LinkId l = 0; l < topology.num_links(); ++l) {
    const auto group = occupancy[static_cast<std::size_t>(l)];
    const auto begin = group.begin();
    const auto end = group.end();
    if (!std::is_sorted(begin, end)) std::sort(begin, end);
    Time busy = std::numeric_limits<Time>::min();
    std::uint32_t holder = 0;
    for (auto it = begin; it != end; ++it) {
      const std::uint32_t i = it->second;
      const Transfer& t = transfers[i];
      if (t.start < busy) {
        if (!conflict || t.start < conflict_time) {
          conflict = true;
          conflict_time = t.start;
          conflict_error = "link " + link_name(topology, l) +
                           " carries two transfers at once: " + describe_transfer(algorithm, i) +
                           " starts at " + us(t.start) + " while " +
                           describe_transfer(algorithm, holder) + " keeps it busy until " +
                           us(busy);
        }
        break;
      }
      const Time until = busy_until(i);
      if (until > busy) {
        busy = until;
        holder = i;
      }
    }
  }
  return conflict ? conflict_error : std::string();
}

}  // namespace

std::string describe_device(const Topology& topology, DeviceId device) {
  return (topology.is_switch(device) ? "switch " : "NPU ") + std::to_string(device);
}

std::string describe_transfer(const Algorithm& algorithm, std::size_t index) {
  const Transfer& t = algorithm.transfers()[index];
  const auto chunks = algorithm.chunks(t);
  std::string text = "transfer " + std::to_string(index) + " (" + std::to_string(t.src) + " -> " +
                     std::to_string(t.dst) + ", ";
  if (chunks.empty()) return text + "no chunks)";
  constexpr std::size_t kShown = 4;
  text += chunks.size() == 1 ? "chunk " : "chunks ";
  for (std::size_t i = 0; i < chunks.size() && i < kShown; ++i)
    text += (i ? ", " : "") + std::to_string(chunks[i]);
  if (chunks.size() > kShown) text += ", ... (" + std::to_string(chunks.size()) + " chunks)";
  return text + ")";
}

std::string check_multicast_groups(const Algorithm& algorithm, const Topology& topology,
                                   std::vector<std::uint32_t>& leader) {
  const auto& transfers = algorithm.transfers();
  leader.resize(transfers.size());
  for (std::size_t i = 0; i < transfers.size(); ++i) leader[i] = static_cast<std::uint32_t>(i);
  if (!algorithm.has_multicast()) return {};
  const SwitchRoutes& routes = topology.switch_routes();
  // (group, transfer) pairs in group order, transfers ascending within a group.
  std::vector<std::pair<std::int32_t, std::uint32_t>> members;
  for (std::size_t i = 0; i < transfers.size(); ++i)
    if (transfers[i].multicast >= 0)
      members.emplace_back(transfers[i].multicast, static_cast<std::uint32_t>(i));
  std::sort(members.begin(), members.end());
  auto group_name = [](std::int32_t g) { return "multicast group " + std::to_string(g); };
  for (std::size_t k = 0; k < members.size(); ++k) {
    const auto [g, i] = members[k];
    const Transfer& t = transfers[i];
    const std::string what = describe_transfer(algorithm, i);
    if (t.reduce)
      return what + " is in " + group_name(g) +
             " but is a reduce transfer (a multicast switch copies; reductions in a switch are "
             "transfers into a reducing switch)";
    const auto route = routes.route(t.src, t.dst);
    if (route.size() < 2)
      return what + " is in " + group_name(g) +
             " but goes over a direct link (a multicast message enters a multicast switch)";
    const DeviceId entry = topology.link(route[0]).dst;
    if (!topology.is_multicast(entry))
      return what + " is in " + group_name(g) + " but its route enters " +
             describe_device(topology, entry) + ", which is not multicast";
    const bool first = k == 0 || members[k - 1].first != g;
    if (first) continue;
    const std::uint32_t head = leader[members[k - 1].second];
    leader[i] = head;
    const Transfer& f = transfers[head];
    const auto a = algorithm.chunks(f), b = algorithm.chunks(t);
    std::string differs;
    if (t.src != f.src)
      differs = "sender";
    else if (t.start != f.start)
      differs = "start";
    else if (!std::equal(a.begin(), a.end(), b.begin(), b.end()))
      differs = "chunk list";
    else if (route[0] != routes.route(f.src, f.dst)[0])
      differs = "first link";
    if (!differs.empty())
      return what + " is in " + group_name(g) + " with " + describe_transfer(algorithm, head) +
             " but has another " + differs +
             " (a multicast group is one message: one sender, start and chunk list, one entry "
             "into the switch)";
  }
  // Distinct receivers: any repeat within a group.
  std::vector<std::pair<std::int32_t, DeviceId>> receivers;
  receivers.reserve(members.size());
  for (const auto& [g, i] : members) receivers.emplace_back(g, transfers[i].dst);
  std::sort(receivers.begin(), receivers.end());
  for (std::size_t k = 1; k < receivers.size(); ++k)
    if (receivers[k] == receivers[k - 1])
      return group_name(receivers[k].first) + " sends to NPU " +
             std::to_string(receivers[k].second) + " twice";
  return {};
}

VerifyResult verify_algorithm(const Algorithm& algorithm, const Topology& topology,
                              LinkModel model) {
  VerifyResult result;
  const auto& transfers = algorithm.transfers();
  const Collective& collective = algorithm.collective();
  const std::size_t num_transfers = transfers.size();
  for (const Transfer& t : transfers)
    result.collective_time = std::max(result.collective_time, t.end);
  auto fail = [&](std::string message) {
    result.ok = false;
    result.error = std::move(message);
    return result;
  };

  if (collective.topology_npus() != topology.npus())
    return fail("the algorithm's collective is for a topology of " +
                std::to_string(collective.topology_npus()) + " NPUs but the topology has " +
                std::to_string(topology.npus()));
  const bool reduction = is_reduction(collective.kind());
  if (num_transfers > std::numeric_limits<std::uint32_t>::max())
    return fail("too many transfers to verify (" + std::to_string(num_transfers) + ")");

  const int num_chunks = collective.num_chunks();

  // Serialization of one chunk per link (most messages carry one chunk).
  std::vector<Time> single_chunk_ser(topology.num_links());
  for (LinkId l = 0; l < topology.num_links(); ++l)
    single_chunk_ser[l] =
        serialization_time(collective.chunk_bytes(), topology.link(l).bandwidth_gbps);
  auto serialization = [&](const Transfer& t, LinkId l) {
    return t.num_chunks == 1
               ? single_chunk_ser[l]
               : serialization_time(algorithm.transfer_bytes(t), topology.link(l).bandwidth_gbps);
  };

  // 1. Each transfer on its own, in index order.
  // A message between NPUs without a direct link crosses switches (SwitchRoutes): it needs
  // every hop's time, and its first hop is the link it occupies at its recorded start.
  std::vector<LinkId> link_of(num_transfers);
  std::vector<char> multi_hop(num_transfers, 0);
  for (std::size_t i = 0; i < num_transfers; ++i) {
    const Transfer& t = transfers[i];
    const detail::TransferCheck check = detail::check_transfer(algorithm, topology, i);
    if (!check.ok()) return fail(check.error);
    const auto route = check.route;
    const LinkId link = route[0];
    link_of[i] = link;
    multi_hop[i] = route.size() > 1;
    if (t.reduce && !reduction)
      return fail(describe_transfer(algorithm, i) +
                  " is a reduction (a partial-sum transfer) but " + to_string(collective.kind()) +
                  " is not a reduction collective");
    if (t.start < 0)
      return fail(describe_transfer(algorithm, i) + " starts at a negative time (" +
                  std::to_string(t.start) + " ps)");
    const Bytes bytes = algorithm.transfer_bytes(t);
    Time needed = 0;
    for (LinkId hop : route) needed += topology.link(hop).latency_ps + serialization(t, hop);
    if (t.end < t.start || t.end - t.start < needed)
      return fail(describe_transfer(algorithm, i) + " lasts " + us(t.end - t.start) + " (" +
                  std::to_string(t.end - t.start) + " ps) but link " + link_name(topology, link) +
                  " needs " + us(needed) + " (" + std::to_string(needed) + " ps) for " +
                  std::to_string(bytes) + " bytes");
  }

  // Multicast groups: well formed, and only their leaders occupy the shared entry link.
  std::vector<std::uint32_t> leader;
  if (std::string error = check_multicast_groups(algorithm, topology, leader); !error.empty())
    return fail(error);

  // 2. Per chunk: the transfers carrying it, in index order.
  auto chunk_transfers = detail::group_by<std::int64_t, std::uint32_t>(
      static_cast<std::size_t>(num_chunks), num_transfers, [&](std::size_t i, auto&& emit) {
        for (ChunkId c : algorithm.chunks(transfers[i])) emit(c, static_cast<std::uint32_t>(i));
      });
  // A transfer listing a chunk twice files it twice in a row under that chunk.
  for (std::size_t c = 0; c < chunk_transfers.keys(); ++c) {
    const auto group = chunk_transfers[c];
    const auto twice = std::adjacent_find(group.begin(), group.end());
    if (twice != group.end())
      return fail(describe_transfer(algorithm, *twice) + " carries chunk " + std::to_string(c) +
                  " twice");
  }
  const std::vector<std::int64_t>& chunk_offsets = chunk_transfers.offsets;
  std::vector<std::uint32_t>& by_chunk = chunk_transfers.values;  // freed after its use

  // Causality and postconditions, one chunk at a time.
  std::string causal_error;
  std::string missing_error;  // first chunk (lowest id) with a destination that never gets it
  if (reduction) {
    ReductionReplay replay = replay_partial_sums(algorithm, topology, chunk_offsets, by_chunk);
    causal_error = std::move(replay.violation_error);
    missing_error = std::move(replay.missing_error);
  } else {
    check_copies(algorithm, topology, chunk_offsets, by_chunk, causal_error, missing_error);
  }
  if (!causal_error.empty()) return fail(causal_error);
  by_chunk = {};

  // 3. Link occupancy.
  if (std::string conflict = first_link_conflict(algorithm, topology, model, link_of, multi_hop,
                                                 leader, single_chunk_ser);
      !conflict.empty())
    return fail(conflict);
  if (!missing_error.empty()) return fail(missing_error);

  result.ok = true;
  return result;
}

}  // namespace tacos
