#pragma once
// One trial of the TACOS greedy link-chunk matching over a time-expanded network (docs/design.md,
// "The TACOS synthesizer"), for copy collectives: chunks that go to every member (All-Gather,
// Broadcast) and unicast chunks (Gather, Scatter, All-to-All). Reductions are built from these
// by reversal (reduction.cpp). Internal to the library; synthesize_tacos runs trials of it.
//
// The core here decides when links are matched (event by event; a round's free links in
// order), which chunks a link may offer (useful to its receiver: for unicast strictly closer
// to the destination, for relays closer to a member lacking it; not already on its way unless
// a faster link overtakes), what an arrival does (delivery, or a replacement when a faster
// copy won) and when the collective is done. Each of these parts decides one thing more:
// - matcher/chunk_choice.h: which offerable chunk a free link sends (its window, own chunks /
//   rarest / farthest destination first, seeded tie-breaks);
// - matcher/switch_ports.h: which routes through switches are links, when their ports are
//   free, and the order of a round over switch ports;
// - matcher/multicast_fanout.h: which receivers share a message through a multicast switch;
// - matcher/fast_domains.h: a slow link into a fast domain offers only what the domain lacks.
// Unicast flows, relays and uneven in-link delays stay in the core: they change what
// "offerable" and "deliver" mean at every step rather than adding a decision of their own.
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "../common/group_by.h"
#include "chunk_logs.h"
#include "matcher/bit_matrix.h"
#include "matcher/chunk_choice.h"
#include "matcher/fast_domains.h"
#include "matcher/match_link.h"
#include "matcher/multicast_fanout.h"
#include "matcher/switch_ports.h"
#include "tacos/synthesis/synthesizer.h"

namespace tacos::detail {

class GreedyMatcher {
 public:
  // `threads` > 1 lets large matching rounds of copy collectives run on two threads; the
  // result is the same for any thread count.
  // `batch_latencies` > 0: batched messages. A free link sends the chunks it picks one after
  // another in one message, as many as take about `batch_latencies` latencies to serialize
  // (batch_cap). Under the tacos link model a message holds its link for the latency as well,
  // so where chunks are small next to the latency (many NPUs, many chunks per NPU) one chunk per
  // message spends most of a link's time in latencies: torus2d:32x32 All-Gather at K = 4 moves
  // 16 KiB in 0.31 us against 0.5 us of latency. Batching lets the message size grow with
  // what a sender holds: small at the start, where the pipeline fills, large later. Applies to
  // copy chunks on direct links with uniform in-links under the tacos link model; batches()
  // says whether it does here.
  GreedyMatcher(const Topology& topology, const Collective& collective, LinkModel model,
                std::uint64_t seed, bool keep_transfers, const ProgressCallback& progress,
                int threads = 1, int batch_latencies = 0);

  bool batches() const { return batch_latencies_ > 0; }

  // Switch rounds of at least `links` links go port by port (kGroupedRound by default); the
  // schedule is the same either way, which tests check by setting it to 0 and to the maximum.
  void set_grouped_round(std::size_t links) { grouped_round_ = links; }
  // Rounds (links to match, arrivals to handle) of at least `events` go on two threads when
  // the matcher has two (kParallelBatch by default); tests lower it to reach that path on
  // small fabrics, whose schedule must not change. At least 2 (a round splits in two halves).
  void set_parallel_round(std::size_t events) {
    parallel_round_ = events < 2 ? std::size_t{2} : events;
  }

  // The message sizes batched runs try, in latencies of serialization per message (each kept
  // where faster: docs/quality.md, "Measured choices").
  static constexpr int kBatchLatencies[] = {6, 14, 28};
  // The least time any schedule sending one chunk per message (the plain greedy's) takes for a
  // copy collective whose chunks go to every member (All-Gather, Broadcast): each chunk a
  // member lacks comes in over one of its in-links in a message of its own, and an in-link
  // busy for b per message carries at most T / b of them by time T. 0 for other collectives.
  static Time one_chunk_per_message_minimum(const Topology& topology, const Collective& collective,
                                            LinkModel model);
  // Chunks per batched message on a link of `latency` that serializes a chunk in
  // `serialization`: `latencies` latencies' worth, 1..kMaxBatch.
  static std::int64_t batch_cap(Time latency, Time serialization, int latencies);

  // Branch and bound (a deadline: the best time some other plan already reaches). The run is
  // abandoned as soon as it provably cannot finish before `deadline`:
  // - `retimed` false (the greedy's own times are its result): once the next event is at or
  //   after `deadline`, as a delivery still missing comes no earlier;
  // - `retimed` true (the schedule is re-timed, reordered or justified afterwards, which can
  //   make it earlier): once the messages that have arrived keep one link busy for `deadline`
  //   or longer in all. Every arrived message stays in the schedule and a link serves one
  //   message at a time, so no re-timing of it finishes sooner. Batched and multicast
  //   messages are not counted (their links are busy for less than one chunk each), so the
  //   bound only errs low.
  //   Deliveries a faster path beat are not counted either (a reduction prunes them).
  // Call before run().
  void set_deadline(Time deadline, bool retimed) {
    deadline_ = deadline;
    retimed_deadline_ = retimed;
  }
  // A second retimed deadline, for a part of a larger schedule (an All-Reduce's phase):
  // abandoned once the arrivals on a physical link of a switch route plus `base_load` (one entry
  // per link of the topology: what the rest of the schedule keeps that link busy for at least)
  // reach `deadline`. Direct links count without it (the bound only errs low). Call before run().
  void set_whole_deadline(Time deadline, const std::vector<Time>* base_load);
  bool abandoned() const { return abandoned_; }
  // When abandoned: the time (not retimed) or the link's busy time (retimed) that reached the
  // deadline.
  Time abandoned_at() const { return abandoned_at_; }

  // Runs to completion or until abandoned (set_deadline); throws Error if some destination can
  // never get a chunk.
  void run();

  Time collective_time() const { return finish_time_; }
  std::int64_t transfers() const { return started_ - cancelled_; }
  std::int64_t wasted_transfers() const { return wasted_; }
  // Moves the schedule out (valid after run() when keep_transfers was set).
  Algorithm take_algorithm();

 private:
  enum class LinkState : std::uint8_t { kBusy, kIdle, kQueued };
  struct Flight {
    ChunkId chunk;
    LinkId link;
    std::uint32_t source_log_length;  // what the source held when the transfer started
    bool multicast = false;           // part of a multicast message: never carries a replacement
    bool wasted = false;  // arrived where a faster path had won (pruned from reductions)
    std::int64_t record;  // index into records_, or -1 (after the bool: 24 bytes, not 32)
  };
  struct Record {
    DeviceId src, dst;
    Time start, end;
    ChunkId chunk;
    bool kept;
    std::int32_t multicast = -1;  // group id (Transfer::multicast), or -1
    bool continues = false;       // same message as the record before it (a batch)
  };
  static constexpr std::uint32_t kFreeEventBit = 0x80000000U;
  // A physical link on switch routes may be free again for the links waiting on it.
  static constexpr std::uint32_t kPortEventBit = 0x40000000U;
  static bool is_flight(std::uint32_t event) {
    return (event & (kFreeEventBit | kPortEventBit)) == 0;
  }

  void build_links(const Topology& topology, Bytes chunk_bytes);
  void compute_distances();
  void seed_initial_holdings();
  void schedule(Time time, std::uint32_t event);
  void handle_arrival(std::uint32_t flight_index, Time now);
  void arrive(const std::vector<std::uint32_t>& bucket, Time now);
  void arrive_in_parallel(const std::vector<std::uint32_t>& bucket, Time now);
  // Adds the arrived messages of `bucket` to their links' busy time (set_deadline, retimed);
  // true once one link reaches the deadline.
  bool load_reaches_deadline(const std::vector<std::uint32_t>& bucket);
  // `inline` (defined in greedy_matcher.cpp ahead of their callers): they run once per
  // delivery or pick, and as separate calls they slow the matching down measurably.
  inline void deliver(NpuId npu, ChunkId chunk, Time now);
  inline void queue_link(LinkId link);
  inline void queue_link(LinkId link, std::vector<LinkId>& queue);
  // What new data at `npu` changes at `npu` alone (its log, its idle out-links, queued on
  // `queue`): the part of a delivery that two threads may do for different receivers.
  inline void receive(NpuId npu, ChunkId chunk, std::vector<LinkId>& queue);
  void match_queued_links(Time now);
  void match_switch_round(Time now);
  void match_direct_round(Time now);
  void sort_by_destination();
  bool useful(LinkId link, ChunkId chunk) const;
  bool offerable(LinkId link, ChunkId chunk, Time arrival) const;
  // Marks `chunk` as on its way to `dst` (arriving at `arrival`) and counts the new holder.
  inline void mark_on_way(NpuId dst, ChunkId chunk, Time arrival);
  struct Started {
    LinkId link;
    ChunkId chunk;
    std::uint32_t source_log_size;
    // Multicast: the other links of the message, members [members_begin, members_end) of fanout_.
    std::uint32_t members_begin = 0;
    std::uint32_t members_end = 0;
    // Batching: the message's other chunks, [batch_begin, batch_end) of its output's batch.
    std::uint32_t batch_begin = 0;
    std::uint32_t batch_end = 0;
  };
  struct MatchOutput {
    std::vector<LinkId> idle;
    std::vector<Started> started;
    std::vector<ChunkId> batch;
    void clear() {
      idle.clear();
      started.clear();
      batch.clear();
    }
  };
  static constexpr std::size_t kParallelBatch = 2048;
  std::size_t parallel_round_ = kParallelBatch;
  // Switch rounds of this many links or more go port by port (match_switch_round_by_port);
  // smaller ones are sorted whole, which costs less than grouping them.
  static constexpr std::size_t kGroupedRound = 1024;
  enum class PickResult : std::uint8_t {
    kSends,
    kNothingToSend,  // idle until its source gets new data
    kWaitsForPort,   // a hop of its switch route is busy; woken when it frees
  };
  struct Pick {
    PickResult result;
    ChunkId chunk = 0;                  // kSends: what it sends
    std::uint32_t source_log_size = 0;  // kSends: what its source held at the start
  };
  // Chooses what `link` sends now and marks it on its way (touches only the link, its
  // destination's bits and, for unicast, the chunk).
  // With batching, the chunks after the first go to `batch`.
  Pick pick(LinkId link, Time now, std::vector<ChunkId>& batch);
  // Records the transfer (one per receiver of a multicast message) and schedules its events.
  void start(const Started& started, const std::vector<ChunkId>& batch, Time now);
  void match_range(std::size_t begin, std::size_t end, Time now, MatchOutput& out);
  // A large switch round in the order of sort_keys_ (as match_range after sorting them), by
  // first hop: see greedy_matcher.cpp.
  void match_switch_round_by_port(std::size_t count, Time now, MatchOutput& out);
  void prefetch_link(LinkId link) const;
  // The words of has_ that pick(link) will test first: its window's and the next log entries'.
  void prefetch_receiver(LinkId link);
  std::optional<ChunkId> find_replacement(const Flight& flight, Time now);
  Time remaining_distance(NpuId npu, ChunkId chunk) const;

  const Topology& topology_;
  const Collective& collective_;
  LinkModel model_;
  std::uint64_t seed_;
  int match_threads_ = 1;
  int batch_latencies_ = 0;  // 0: one chunk per message
  Bytes chunk_bytes_ = 0;
  // At most this many chunks per batched message: an MSCCL thread block runs at most 64 steps,
  // and a message of scattered chunks takes one step per chunk.
  static constexpr std::int64_t kMaxBatch = 32;
  // batch_cap of a matcher link.
  std::int64_t batch_cap(const MatchLink& link, int latencies) const;
  std::uint64_t rounds_ = 0;  // matching rounds so far
  std::size_t grouped_round_ = kGroupedRound;
  MatchOutput outputs_[2];
  bool keep_transfers_;
  const ProgressCallback& progress_;

  int npus_ = 0;
  int chunks_ = 0;
  int members_ = 0;
  // Unicast chunks (one destination each) move: one holder at a time, forwarded only to a
  // neighbour strictly closer to the destination. Copy chunks spread to every member.
  bool unicast_ = false;
  // Copy collectives on a subset: non-members relay when that brings a chunk strictly closer
  // to a member still lacking it.
  bool relays_ = false;
  std::vector<int> member_index_;   // per NPU, or -1
  std::vector<Time> distance_;      // [member][npu]: shortest time npu -> member
  std::vector<int> distance_row_;   // per member: row in distance_, or -1
  BitMatrix closer_;                // [link][member]: dst strictly closer than src
  BitMatrix lacking_;               // [chunk][member]: member still needs the chunk
  std::vector<NpuId> holder_;       // unicast: where each chunk is now
  std::vector<char> moving_;        // unicast: chunk in flight
  std::vector<NpuId> destination_;  // unicast: each chunk's destination

  SwitchPorts ports_;  // switch routes' physical hops and when each is free
  bool switch_routes_ = false;
  MulticastFanout fanout_;        // copies of one message through a multicast switch
  FastDomains domains_;           // a slower way into a fast domain only for what it lacks
  std::vector<MatchLink> links_;  // sorted by (dst, src); "link" below means an index here
  std::vector<int> in_begin_;     // per NPU: its in-links are [in_begin_[v], in_begin_[v+1])
  // NPUs whose in-links differ in delay: a faster link may overtake a chunk in flight, so
  // they keep the arrival time of each chunk in flight to them.
  std::vector<char> heterogeneous_ingress_;
  std::unordered_map<std::uint64_t, Time> pending_arrival_;

  // One bit per (NPU, chunk). A chunk on its way to an NPU whose in-links all take equally long
  // cannot be overtaken, so for such NPUs the bit is set when the chunk is sent ("has it or
  // will"); NPUs with mixed in-link delays keep the in-flight bit apart, in pending_.
  BitMatrix has_;
  BitMatrix pending_;  // allocated only when some NPU has mixed in-link delays
  bool has(NpuId npu, ChunkId chunk) const { return has_.test(npu, chunk); }
  bool pending(NpuId npu, ChunkId chunk) const {
    return heterogeneous_ingress_[npu] && pending_.test(npu, chunk);
  }
  ChunkLogs logs_;       // per NPU, chunks in arrival order
  LinkWindows windows_;  // per link: cursor into its source's log, window of candidates
  ChunkChoice choice_;   // which window entry a link sends
  std::vector<LinkState> link_state_;
  std::vector<std::vector<LinkId>> idle_out_;  // per NPU, free links waiting for data
  std::vector<LinkId> queued_;
  std::vector<std::pair<std::uint64_t, LinkId>> sort_keys_;  // (dst, delay rank, random)
  // sort_keys_ grouped by first hop (match_switch_round_by_port; direct links last), kept to
  // reuse its storage.
  Groups<std::uint32_t, std::pair<std::uint64_t, LinkId>> by_port_;
  std::vector<std::uint32_t> round_group_;  // per link: its first hop, or the direct group
  std::vector<std::uint32_t> group_of_;     // per entry of sort_keys_: its link's group
  // sort_keys_ grouped by destination (sort_by_destination), kept to reuse its storage.
  Groups<std::uint32_t, std::pair<std::uint64_t, LinkId>> by_destination_;

  std::vector<Flight> flights_;
  std::vector<std::uint32_t> free_flights_;
  std::map<Time, std::vector<std::uint32_t>> events_;
  std::vector<std::vector<std::uint32_t>> spare_buckets_;
  std::vector<Record> records_;

  static constexpr Time kNoDeadline = std::numeric_limits<Time>::max();
  Time deadline_ = kNoDeadline;
  bool retimed_deadline_ = false;
  bool abandoned_ = false;
  Time abandoned_at_ = 0;
  std::vector<Time> direct_load_;  // per matcher link (direct links): busy time of arrivals
  std::vector<Time> port_load_;    // per physical link on switch routes: the same
  Time whole_deadline_ = std::numeric_limits<Time>::max();  // set_whole_deadline
  const std::vector<Time>* base_load_ = nullptr;

  std::int64_t remaining_ = 0;
  std::int64_t total_needed_ = 0;
  std::int64_t started_ = 0;
  std::int64_t cancelled_ = 0;
  std::int64_t wasted_ = 0;
  Time finish_time_ = 0;
};

}  // namespace tacos::detail
