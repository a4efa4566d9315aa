#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <system_error>
#include <thread>
#include <tuple>

#include "../common/parallel_tasks.h"
#include "domain_relay.h"
#include "greedy_matcher.h"
#include "in_switch.h"
#include "justification.h"
#include "message_coalescing.h"
#include "reduction.h"
#include "routed_unicast.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/error.h"
#include "tacos/common/time_limit.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/synthesizer.h"
#include "tree_packing.h"

namespace tacos {
namespace {

constexpr Time kNoDeadline = std::numeric_limits<Time>::max();

struct TrialOutcome {
  std::uint64_t seed = 0;
  // SynthesisOptions::deadline: no plan of the trial can finish before it; `time` is the
  // busiest link's load that showed it, and there is no schedule.
  bool abandoned = false;
  Time time = 0;
  std::int64_t transfers = 0;
  std::int64_t wasted = 0;
  std::optional<Algorithm> algorithm;
};

bool better(const TrialOutcome& a, const TrialOutcome& b) {
  return a.time != b.time ? a.time < b.time : a.seed < b.seed;
}

// Names a destination some source cannot reach (switches were unwound, NPUs relay).
void require_reachable(const Topology& topology, const Collective& collective) {
  auto fail = [](NpuId from, NpuId to) {
    throw Error("synthesize: NPU " + std::to_string(to) + " cannot be reached from NPU " +
                std::to_string(from) + " (no path in the topology)");
  };
  const auto& members = collective.members();
  const CollectiveKind kind = collective.kind();
  const bool from_root = kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kScatter;
  const bool to_root = kind == CollectiveKind::kReduce || kind == CollectiveKind::kGather;
  const NpuId hub = from_root || to_root ? collective.root() : members.front();
  if (!to_root) {
    const auto seen = topology.reachable(hub, true);
    for (NpuId m : members)
      if (!seen[m]) fail(hub, m);
  }
  if (!from_root) {
    const auto seen = topology.reachable(hub, false);
    for (NpuId m : members)
      if (!seen[m]) fail(m, hub);
  }
}

// The domain relay (domain_relay.h) has no seed: trials of one synthesis share each result
// (per topology object and collective shape) instead of recomputing it.
class RelayCache {
 public:
  std::optional<Algorithm> get(const Topology& topology, const Collective& collective,
                               LinkModel model) {
    const Key key{&topology,         static_cast<int>(collective.kind()),
                  collective.size(), collective.chunks_per_npu(),
                  collective.root(), static_cast<int>(model)};
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end())
      it = entries_.emplace(key, detail::domain_relay(topology, collective, model)).first;
    return it->second;
  }

 private:
  using Key = std::tuple<const Topology*, int, Bytes, int, NpuId, int>;
  std::mutex mutex_;
  std::map<Key, std::optional<Algorithm>> entries_;
};

// One trial's copy phases as the greedy and coalescing made them, before batching (run_copy):
// an All-Reduce trial runs each phase twice, plain and with batched messages, and the batched
// run starts from the same plain result (same topology, collective and seed), so it is made
// once. Per trial, never shared between threads.
class PlainCopies {
 public:
  using Key = std::tuple<const Topology*, int, Bytes, int, std::uint64_t>;
  static Key key(const Topology& topology, const Collective& collective, std::uint64_t seed) {
    return {&topology, static_cast<int>(collective.kind()), collective.size(),
            collective.chunks_per_npu(), seed};
  }
  const TrialOutcome* find(const Key& key) const {
    const auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
  }
  void add(const Key& key, const TrialOutcome& outcome) { entries_.emplace(key, outcome); }

 private:
  std::map<Key, TrialOutcome> entries_;
};

// What every trial of one synthesis shares besides its seed: passed down explicitly, so that
// what a trial does depends on its arguments only, never on the thread that runs it.
struct TrialContext {
  LinkModel model = LinkModel::kTacos;
  bool keep = true;  // SynthesisOptions::keep_transfers
  // SynthesisOptions::coalesce and ::justify; both need the transfers, so false unless keep.
  bool coalesce = true;
  bool batch = true;
  // All-Reduce: also the whole All-Reduce with batched phases, kept if faster (see trial_for).
  bool batch_all_reduce = false;
  bool justify = true;
  int matcher_threads = 1;       // threads a trial's matcher may use (the rest run other trials)
  RelayCache* relays = nullptr;  // shared by the trials; null: no sharing
  Time deadline = kNoDeadline;   // SynthesisOptions::deadline (All-Reduce plans)
  // SynthesisOptions::deadline for the one copy run of a copy collective or reduction through
  // switches (run_copy): its greedy stops once it cannot finish before it, and the trial is
  // abandoned unless the domain relay is a result.
  Time copy_deadline = kNoDeadline;
  // An All-Reduce wave's phase (run_copy through switches): its greedy stops once a link's
  // arrivals plus whole_base (per link id: what the rest of the All-Reduce keeps it busy for at
  // least) reach whole_deadline (GreedyMatcher::set_whole_deadline).
  Time whole_deadline = kNoDeadline;
  const std::vector<Time>* whole_base = nullptr;
  PlainCopies* plain = nullptr;  // the trial's own (All-Reduce); null: none kept
};

// Each direct link's chunks per batched message at `latencies` (greedy_matcher.h): two sizes
// with the same caps on every link give the same schedule.
std::vector<std::int64_t> batch_caps(const Topology& topology, const Collective& collective,
                                     int latencies) {
  std::vector<std::int64_t> caps(static_cast<std::size_t>(topology.num_links()));
  for (LinkId l = 0; l < topology.num_links(); ++l) {
    const Link& link = topology.link(l);
    caps[static_cast<std::size_t>(l)] = detail::GreedyMatcher::batch_cap(
        link.latency_ps, serialization_time(collective.chunk_bytes(), link.bandwidth_gbps),
        latencies);
  }
  return caps;
}

// The batch sizes (GreedyMatcher::kBatchLatencies) worth a run: those whose caps differ from
// the size before (caps grow with the size, and equal caps give the same schedule).
std::vector<int> distinct_batch_latencies(const Topology& topology, const Collective& collective) {
  std::vector<int> distinct;
  std::vector<std::int64_t> previous;
  for (const int latencies : detail::GreedyMatcher::kBatchLatencies) {
    std::vector<std::int64_t> caps = batch_caps(topology, collective, latencies);
    if (caps == previous) continue;
    distinct.push_back(latencies);
    previous = std::move(caps);
  }
  return distinct;
}

// Some direct link batches two chunks or more at the smallest batch size tried
// (greedy_matcher.h); never through switches nor under the astra model.
bool small_chunks(const Topology& topology, const Collective& collective, LinkModel model) {
  if (model != LinkModel::kTacos || topology.switches() > 0) return false;
  const std::vector<std::int64_t> caps =
      batch_caps(topology, collective, detail::GreedyMatcher::kBatchLatencies[0]);
  return std::any_of(caps.begin(), caps.end(), [](std::int64_t cap) { return cap > 1; });
}

void adopt_if_faster(TrialOutcome& outcome, std::optional<Algorithm> candidate) {
  if (!candidate || candidate->collective_time >= outcome.time) return;
  outcome.time = candidate->collective_time;
  outcome.transfers = static_cast<std::int64_t>(candidate->transfers().size());
  outcome.algorithm = std::move(*candidate);
}

// The least busy time that the greedy's plan of `collective` through switches keeps one link
// busy for, whatever it does: it sends one chunk per message (no batching or coalescing
// there), and every chunk an NPU lacks reaches it at least once, so an NPU with a single in-link
// receives that many messages over it. The largest over such NPUs.
Time greedy_switch_minimum(const Topology& topology, const Collective& collective,
                           LinkModel model) {
  std::vector<std::int64_t> lacking(static_cast<std::size_t>(topology.npus()), 0);
  for (ChunkId c = 0; c < collective.num_chunks(); ++c) {
    const auto sources = collective.sources(c);
    for (const NpuId d : collective.destinations(c))
      if (std::find(sources.begin(), sources.end(), d) == sources.end()) ++lacking[d];
  }
  Time least = 0;
  for (NpuId v = 0; v < topology.npus(); ++v) {
    if (lacking[v] == 0 || topology.in_links(v).size() != 1) continue;
    const Link& link = topology.link(topology.in_links(v)[0]);
    const Time message = link_busy_time(
        model, link.latency_ps, serialization_time(collective.chunk_bytes(), link.bandwidth_gbps));
    least = std::max(least, lacking[v] * message);
  }
  return least;
}

// A finished schedule as a trial's outcome (`seed`: the trial's; defined below).
TrialOutcome outcome_of(Algorithm algorithm, std::uint64_t seed, bool keep);

// `keep`: this phase's transfers are needed (a reduction reverses them) even where the
// synthesis as a whole keeps none (context.keep).
TrialOutcome run_copy(const Topology& topology, const Collective& collective,
                      const TrialContext& context, std::uint64_t seed, bool keep,
                      const ProgressCallback& progress) {
  const LinkModel model = context.model;
  // Through switches the matcher plans; the time is what the switches do with the plan: the
  // schedule is always kept and re-timed by the simulator (messages may leave early and wait
  // in a switch's queue, which the plan never does).
  const bool retime = topology.switches() > 0;
  const bool reuse = context.plain && keep && !retime;
  const PlainCopies::Key key = PlainCopies::key(topology, collective, seed);
  // Messages sized per port, relayed once into each domain (domain_relay.h), kept where faster
  // than the greedy's plan. It has no seed, so it is made first: the greedy's plan only counts
  // where it beats it, and the greedy stops as soon as it cannot (GreedyMatcher::set_deadline).
  std::optional<Algorithm> relay;
  if (retime)
    relay = context.relays ? context.relays->get(topology, collective, model)
                           : detail::domain_relay(topology, collective, model);
  TrialOutcome outcome;
  if (const TrialOutcome* made = reuse ? context.plain->find(key) : nullptr) {
    outcome = *made;
  } else {
    // The relay wins unless the greedy's plan is strictly faster: a plan that keeps some link
    // busy for the relay's whole time or longer cannot be. Nor can one that keeps a link busy
    // until the time to beat (copy_deadline).
    const Time to_beat =
        retime ? std::min(context.copy_deadline, relay ? relay->collective_time + 1 : kNoDeadline)
               : kNoDeadline;
    // The relay, where there is one, is then the result (a reduction reverses it, which may
    // change its time; the K search judges the result).
    auto give_up = [&](Time load) {
      if (relay) return outcome_of(std::move(*relay), seed, keep);
      TrialOutcome abandoned;
      abandoned.seed = seed;
      abandoned.abandoned = true;
      abandoned.time = load;
      return abandoned;
    };
    // Nor is the greedy run where the least it must keep one link busy already is more.
    if (to_beat != kNoDeadline)
      if (const Time least = greedy_switch_minimum(topology, collective, model); least >= to_beat)
        return give_up(least);
    // Nothing kept (--time-only, a phase timed alone): batched messages need no transfer list
    // to be timed, so each message size runs first (one run per distinct set of caps), and the
    // plain greedy only counts where it beats them: it stops once it cannot. Batched first: at
    // scale one chunk per message is several times slower, so the deadline stops it early
    // (docs/performance.md, "Measured costs").
    static const ProgressCallback kQuiet;
    std::optional<TrialOutcome> batched_best;
    if (!keep && !retime && context.batch) {
      for (const int latencies : distinct_batch_latencies(topology, collective)) {
        detail::GreedyMatcher batched(topology, collective, model, seed, false,
                                      batched_best ? kQuiet : progress, context.matcher_threads,
                                      latencies);
        if (!batched.batches()) continue;
        if (batched_best) batched.set_deadline(batched_best->time, /*retimed=*/false);
        batched.run();
        if (batched.abandoned() ||
            (batched_best && batched.collective_time() >= batched_best->time))
          continue;
        batched_best = TrialOutcome{};
        batched_best->seed = seed;
        batched_best->time = batched.collective_time();
        batched_best->transfers = batched.transfers();
        batched_best->wasted = batched.wasted_transfers();
      }
    }
    // One chunk per message cannot be faster where the members' in-links cannot even carry
    // the chunks one by one in that time (torus2d:128x128 All-Gather: 2,359 us against the
    // batched 417.8).
    if (batched_best && detail::GreedyMatcher::one_chunk_per_message_minimum(
                            topology, collective, model) >= batched_best->time)
      return *batched_best;
    detail::GreedyMatcher matcher(topology, collective, model, seed, keep || retime,
                                  batched_best ? kQuiet : progress, context.matcher_threads);
    if (to_beat != kNoDeadline) matcher.set_deadline(to_beat, /*retimed=*/true);
    if (batched_best) matcher.set_deadline(batched_best->time, /*retimed=*/false);
    if (retime && context.whole_base)
      matcher.set_whole_deadline(context.whole_deadline, context.whole_base);
    matcher.run();
    // Abandoned unless strictly faster (a deadline stops it at the batched time).
    if (batched_best && matcher.abandoned()) return *batched_best;
    if (matcher.abandoned()) return give_up(matcher.abandoned_at());
    outcome.seed = seed;
    outcome.time = matcher.collective_time();
    outcome.transfers = matcher.transfers();
    outcome.wasted = matcher.wasted_transfers();
    if (keep || retime) {
      outcome.algorithm = matcher.take_algorithm();
      outcome.algorithm->seed = seed;
    }
    if (keep && !retime && context.coalesce)
      // One message where the greedy sent two on a link and merging delays nothing: the link
      // pays its latency once (message_coalescing.h); kept if faster.
      adopt_if_faster(outcome, detail::coalesce_messages(*outcome.algorithm, topology, model));
    if (reuse) context.plain->add(key, outcome);
  }
  bool batched_won = false;
  if (keep && !retime && context.batch)
    // Batched messages (greedy_matcher.h) at three message sizes, each kept if faster than the
    // best so far (the coalesced greedy's included): the best size depends on the fabric and
    // the chunk size (docs/quality.md, "Measured choices"). A batched winner is coalesced too.
    for (const int latencies : distinct_batch_latencies(topology, collective)) {
      const ProgressCallback quiet;  // the progress shown is the first run's
      detail::GreedyMatcher batched(topology, collective, model, seed, true, quiet,
                                    context.matcher_threads, latencies);
      if (!batched.batches()) continue;
      // Kept only if faster than the best so far: abandoned once it cannot be.
      batched.set_deadline(outcome.time, /*retimed=*/false);
      batched.run();
      if (batched.abandoned() || batched.collective_time() >= outcome.time) continue;
      Algorithm algorithm = batched.take_algorithm();
      algorithm.seed = seed;
      outcome.time = batched.collective_time();
      outcome.transfers = static_cast<std::int64_t>(algorithm.transfers().size());
      outcome.wasted = batched.wasted_transfers();
      outcome.algorithm = std::move(algorithm);
      batched_won = true;
    }
  if (batched_won && context.coalesce)
    adopt_if_faster(outcome, detail::coalesce_messages(*outcome.algorithm, topology, model));
  if (retime) {
    const Time busiest = detail::compact(*outcome.algorithm, topology, model);
    outcome.time = outcome.algorithm->collective_time;
    // Justification reorders these same messages: it cannot finish before their busiest link
    // is done, so where that is already later than the relay's time the relay wins either way.
    const bool relay_wins = relay && busiest > relay->collective_time;
    if (keep && context.justify && !relay_wins)
      // Each port's messages reordered by how late they may start (justification.h). Through
      // switches only: on direct links the greedy's order has next to nothing to gain, and a seed's
      // gain there is luck that one trial does not share (numbers: docs/quality.md, "Measured
      // choices").
      adopt_if_faster(outcome, detail::justify_copy_schedule(*outcome.algorithm, topology, model));
    if (relay && relay->collective_time < outcome.time)
      return outcome_of(std::move(*relay), seed, keep);
    if (!keep) outcome.algorithm.reset();
  }
  return outcome;
}

Collective copy_counterpart(const Collective& reduction) {
  const CollectiveKind copy_kind = reduction.kind() == CollectiveKind::kReduce
                                       ? CollectiveKind::kBroadcast
                                       : CollectiveKind::kAllGather;
  return Collective::make(copy_kind, reduction.topology_npus(), reduction.size(),
                          reduction.chunks_per_npu(), reduction.members(),
                          reduction.root() >= 0 ? reduction.root() : 0);
}

// Reduce-Scatter / Reduce: the copy collective on the transposed topology, pruned to trees,
// reversed, and re-timed as early as dependencies allow.
// An abandoned copy run (context.copy_deadline) is returned as it is, with no schedule.
TrialOutcome synthesize_reduction(const Topology& topology, const Topology& transposed,
                                  const Collective& reduction, const TrialContext& context,
                                  std::uint64_t seed, const ProgressCallback& progress) {
  const Collective copy = copy_counterpart(reduction);
  TrialOutcome forward = run_copy(transposed, copy, context, seed, true, progress);
  if (forward.abandoned) return forward;
  Algorithm reversed =
      detail::reverse_into_reduction(detail::prune_to_trees(*forward.algorithm), reduction);
  detail::compact(reversed, topology, context.model);
  return outcome_of(std::move(reversed), seed, /*keep=*/true);
}

// All-Reduce over the chunk pieces in `pieces` (indexes 0..K-1 of each member's share): a
// Reduce-Scatter then an All-Gather of those chunks, laid one after the other from time 0,
// chunk ids in the All-Reduce's numbering.
// `abandon_after_reduction` (if set) sees the wave's Reduce-Scatter (in the wave's chunk
// numbering) before the All-Gather is planned; true: the wave is abandoned (nothing).
// `bound_phase` (if set) gives each phase's context its whole_deadline before it is planned
// (gather: false for the Reduce-Scatter); a phase abandoned by it abandons the wave, its load
// in `abandoned_load`.
using ReductionCheck = std::function<bool(const Algorithm& reduced)>;
using PhaseBound = std::function<void(TrialContext& phase, bool gather)>;

std::optional<Algorithm> all_reduce_wave(const Topology& topology, const Topology& transposed,
                                         const Collective& all_reduce,
                                         const std::vector<int>& pieces,
                                         const TrialContext& context, std::uint64_t seed,
                                         const ProgressCallback& progress,
                                         const ReductionCheck& abandon_after_reduction,
                                         const PhaseBound& bound_phase, Time& abandoned_load) {
  const int k = all_reduce.chunks_per_npu();
  const int wave_k = static_cast<int>(pieces.size());
  const int n = all_reduce.num_members();
  // Sized so that the wave's chunk is exactly the All-Reduce's chunk.
  const Bytes wave_size = all_reduce.chunk_bytes() * n * wave_k;
  const Collective reduce_scatter =
      Collective::make(CollectiveKind::kReduceScatter, all_reduce.topology_npus(), wave_size,
                       wave_k, all_reduce.members());
  const Collective all_gather = copy_counterpart(reduce_scatter);
  std::vector<ChunkId> map(static_cast<std::size_t>(n) * wave_k);
  for (int member = 0; member < n; ++member)
    for (int q = 0; q < wave_k; ++q) map[member * wave_k + q] = member * k + pieces[q];
  auto half = [&progress](double from) -> ProgressCallback {
    if (!progress) return {};
    return [&progress, from](double f) { progress(from + f / 2); };
  };
  TrialContext phase = context;
  if (bound_phase) bound_phase(phase, /*gather=*/false);
  TrialOutcome reduction =
      synthesize_reduction(topology, transposed, reduce_scatter, phase, seed, half(0.0));
  if (reduction.abandoned) {
    abandoned_load = std::max(abandoned_load, reduction.time);
    return std::nullopt;
  }
  const Algorithm reduced = std::move(*reduction.algorithm);
  if (abandon_after_reduction && abandon_after_reduction(reduced)) return std::nullopt;
  phase = context;
  if (bound_phase) bound_phase(phase, /*gather=*/true);
  TrialOutcome gathered = run_copy(topology, all_gather, phase, seed, true, half(0.5));
  if (gathered.abandoned) {
    abandoned_load = std::max(abandoned_load, gathered.time);
    return std::nullopt;
  }
  // A member's pieces are interchangeable: the All-Gather sends first the piece whose
  // reduction completes first, so that, re-timed as early as possible, it can start while the
  // member's last reductions still arrive.
  std::vector<ChunkId> gather_map(map.size());
  {
    constexpr Time kNever = std::numeric_limits<Time>::max();
    std::vector<Time> done(map.size(), 0), first_send(map.size(), kNever);
    for (const Transfer& t : reduced.transfers())
      for (ChunkId c : reduced.chunks(t)) done[c] = std::max(done[c], t.end);
    for (const Transfer& t : gathered.algorithm->transfers())
      for (ChunkId c : gathered.algorithm->chunks(t))
        first_send[c] = std::min(first_send[c], t.start);
    std::vector<ChunkId> by_done(wave_k), by_send(wave_k);
    for (int member = 0; member < n; ++member) {
      for (int q = 0; q < wave_k; ++q) by_done[q] = by_send[q] = member * wave_k + q;
      std::stable_sort(by_done.begin(), by_done.end(),
                       [&](ChunkId a, ChunkId b) { return done[a] < done[b]; });
      std::stable_sort(by_send.begin(), by_send.end(),
                       [&](ChunkId a, ChunkId b) { return first_send[a] < first_send[b]; });
      for (int q = 0; q < wave_k; ++q) gather_map[by_send[q]] = map[by_done[q]];
    }
  }
  Algorithm wave = detail::remap_chunks(reduced, all_reduce, map, 0);
  detail::append(wave, detail::remap_chunks(*gathered.algorithm, all_reduce, gather_map,
                                            reduced.collective_time));
  return wave;
}

// Sequential: one Reduce-Scatter of every chunk, then one All-Gather. Pipelined: the chunk
// pieces go in waves (1, 2 or K of them). Either way every transfer is then started as early as
// its data and its link allow, so a wave's All-Gather starts once its own reductions are done and
// overlaps the next wave's Reduce-Scatter. The fastest wave count is kept; one wave is the
// sequential schedule, so pipelined is never slower.
// The least each link must carry for a wave of `pieces` chunk pieces per member, phase by
// phase, whatever the plan: in the Reduce-Scatter every member's own partial sums of the other
// members' pieces leave it, and in the All-Gather every piece of the others reaches it, at least
// once each: (members - 1) x pieces chunks out and in. Only a member with a single out-link (in-
// link) has a link known to carry them. In general that is at least one message of all those
// bytes (serializations round up, so splitting them never takes less). Where the phase can
// only be the greedy's plan, one message per chunk: through switches (no coalescing, no
// batching; justification and pruning keep each first delivery's message) when the domain
// relay, the one other plan there, does not apply to the phase.
struct PhaseMinimum {
  std::vector<Time> reduce, gather;  // per link id
};

PhaseMinimum phase_minimum(const Topology& topology, const Topology& transposed,
                           const Collective& all_reduce, int pieces, const TrialContext& context) {
  const LinkModel model = context.model;
  PhaseMinimum least{std::vector<Time>(static_cast<std::size_t>(topology.num_links()), 0),
                     std::vector<Time>(static_cast<std::size_t>(topology.num_links()), 0)};
  const int n = all_reduce.num_members();
  const Bytes chunk = all_reduce.chunk_bytes();
  const std::int64_t chunks = static_cast<std::int64_t>(n - 1) * pieces;
  if (chunks <= 0 || chunk <= 0) return least;
  // Each phase copies the wave's All-Gather (on the transposed topology for the reduction), as
  // all_reduce_wave and synthesize_reduction make it.
  const Collective all_gather =
      copy_counterpart(Collective::make(CollectiveKind::kReduceScatter, all_reduce.topology_npus(),
                                        chunk * n * pieces, pieces, all_reduce.members()));
  auto greedy_only = [&](const Topology& on) {
    if (on.switches() == 0 || !context.relays) return false;
    return !context.relays->get(on, all_gather, model).has_value();
  };
  auto busy = [&](LinkId l, bool per_chunk) {
    const Link& link = topology.link(l);
    if (per_chunk)
      return chunks *
             link_busy_time(model, link.latency_ps, serialization_time(chunk, link.bandwidth_gbps));
    return link_busy_time(model, link.latency_ps,
                          serialization_time(chunk * chunks, link.bandwidth_gbps));
  };
  const bool reduce_per_chunk = greedy_only(transposed);
  const bool gather_per_chunk = greedy_only(topology);
  for (const NpuId member : all_reduce.members()) {
    if (topology.out_links(member).size() == 1) {
      const LinkId l = topology.out_links(member)[0];
      least.reduce[l] += busy(l, reduce_per_chunk);
    }
    if (topology.in_links(member).size() == 1) {
      const LinkId l = topology.in_links(member)[0];
      least.gather[l] += busy(l, gather_per_chunk);
    }
  }
  return least;
}

// One wave count of an All-Reduce (synthesize_all_reduce): its waves planned, then joined at
// each offset; the fastest joined schedule, or nothing (with `abandoned_load` raised to the
// busiest link's load) once no joining of them can finish before `to_beat`.
std::optional<Algorithm> plan_waves(const Topology& topology, const Topology& transposed,
                                    const Collective& all_reduce, const TrialContext& context,
                                    AllReduceMode mode, std::uint64_t seed, int waves, Time to_beat,
                                    const ProgressCallback& progress, Time& abandoned_load) {
  const LinkModel model = context.model;
  const int k = all_reduce.chunks_per_npu();
  std::optional<Algorithm> best;
  // Waves are laid out one after the other, or (overlapped) each wave's Reduce-Scatter right
  // after the previous wave's, beside that wave's All-Gather: a link then takes them in that
  // interleaved order, so an NPU's egress reduces the next wave while its ingress gathers
  // the last (a mesh corner's two links carry the whole buffer each way either way).
  std::vector<Algorithm> planned;
  std::vector<Time> reduced_at;
  // Branch and bound: whichever offsets join the waves, the joined schedule holds every
  // wave's transfers and is timed by the simulator, so it ends no earlier than the busiest
  // link's total load. Once the waves planned so far load a link until the time to beat (the
  // deadline, or the best wave count so far: only a strictly faster one replaces it), the
  // remaining waves are not planned.
  // Phases not planned yet count with the least they must carry (phase_minimum), so that a
  // plan is dropped before its costly phases where their minimum already settles it.
  const bool bounded = to_beat != kNoDeadline;
  std::vector<Time> load(bounded ? static_cast<std::size_t>(topology.num_links()) : 0, 0);
  std::vector<Time> to_come(load.size(), 0);  // the phases' minimums not planned yet
  std::vector<PhaseMinimum> least;
  auto wave_pieces = [&](int w) { return (w + 1) * k / waves - w * k / waves; };
  if (bounded)
    for (int w = 0; w < waves; ++w) {
      least.push_back(phase_minimum(topology, transposed, all_reduce, wave_pieces(w), context));
      for (std::size_t l = 0; l < load.size(); ++l)
        to_come[l] += least.back().reduce[l] + least.back().gather[l];
    }
  Time busiest = 0;
  auto reaches = [&] {
    for (std::size_t l = 0; l < load.size(); ++l) busiest = std::max(busiest, load[l] + to_come[l]);
    return busiest >= to_beat;
  };
  std::vector<Time> reduced_load;  // the last wave's Reduce-Scatter
  auto add = [&](const std::vector<Time>& part_load, const std::vector<Time>* minus) {
    for (std::size_t l = 0; l < load.size(); ++l)
      load[l] += part_load[l] - (minus ? (*minus)[l] : 0);
  };
  bool abandoned = bounded && reaches();
  for (int w = 0; w < waves && !abandoned; ++w) {
    std::vector<int> pieces;
    for (int p = w * k / waves; p < (w + 1) * k / waves; ++p) pieces.push_back(p);
    ProgressCallback part;
    if (progress) part = [&progress, w, waves](double f) { progress((w + f) / waves); };
    ReductionCheck check;
    PhaseBound bound_phase;
    std::vector<Time> base;
    if (bounded) {
      bound_phase = [&, w](TrialContext& phase, bool gather) {
        const std::vector<Time>& own = gather ? least[w].gather : least[w].reduce;
        base.resize(load.size());
        for (std::size_t l = 0; l < load.size(); ++l) base[l] = load[l] + to_come[l] - own[l];
        phase.whole_deadline = to_beat;
        phase.whole_base = &base;
      };
      check = [&, w](const Algorithm& reduced) {
        reduced_load = detail::link_loads(reduced, topology, model);
        add(reduced_load, nullptr);
        for (std::size_t l = 0; l < load.size(); ++l) to_come[l] -= least[w].reduce[l];
        return reaches();
      };
    }
    std::optional<Algorithm> wave =
        all_reduce_wave(topology, transposed, all_reduce, pieces, context,
                        seed + static_cast<std::uint64_t>(w), part, check, bound_phase, busiest);
    if (!wave) {
      abandoned = true;
      break;
    }
    planned.push_back(std::move(*wave));
    Time rs_end = 0;
    for (const Transfer& t : planned.back().transfers())
      if (t.reduce) rs_end = std::max(rs_end, t.end);
    reduced_at.push_back(rs_end);
    if (!bounded) continue;
    // The wave's All-Gather: the whole wave's load less its Reduce-Scatter's.
    add(detail::link_loads(planned.back(), topology, model), &reduced_load);
    for (std::size_t l = 0; l < load.size(); ++l) to_come[l] -= least[w].gather[l];
    abandoned = reaches();
  }
  if (abandoned) {
    abandoned_load = std::max(abandoned_load, busiest);
    return std::nullopt;
  }
  // Offsets of the next wave's Reduce-Scatter: after this wave's All-Gather (sequential), or
  // after 1, 3/4 or 1/2 of this wave's Reduce-Scatter (overlapped).
  for (int overlap : {0, 4, 3, 2}) {
    if (overlap > 0 && (waves == 1 || mode != AllReduceMode::kPipelined)) continue;
    Algorithm joined(all_reduce);
    Time offset = 0;
    for (int w = 0; w < waves; ++w) {
      detail::append(joined, planned[w], offset);
      offset += overlap > 0 ? reduced_at[w] * overlap / 4 : planned[w].collective_time;
      check_schedule_time(offset, "synthesis");  // waves add up: keep the sum in range
    }
    joined.synthesizer = "tacos";
    joined.link_model = model;
    // Sequential too: its All-Gather was planned as if it started when the whole
    // Reduce-Scatter ends, but nothing in the schedule waits for that instant (no file can
    // express a barrier across ranks: JSON, Chakra and MSCCL replay by dependencies), so
    // its time is the time it takes started as early as its data and links allow.
    detail::compact(joined, topology, model);
    if (!best || joined.collective_time < best->collective_time) best = std::move(joined);
  }
  return best;
}

// Abandoned (nothing, `abandoned_load` set to the busiest link's load) when every wave count's
// transfers keep some link busy until context.deadline or later.
std::optional<Algorithm> synthesize_all_reduce(const Topology& topology, const Topology& transposed,
                                               const Collective& all_reduce,
                                               const TrialContext& context, AllReduceMode mode,
                                               std::uint64_t seed, const ProgressCallback& progress,
                                               Time& abandoned_load) {
  const LinkModel model = context.model;
  const int k = all_reduce.chunks_per_npu();
  std::vector<int> wave_counts{1};
  // Through switches from kOneWaveChunks chunks per member on, one wave only: its schedule,
  // started as early as data and links allow, already pipelines chunk by chunk, and more waves
  // never won there (docs/quality.md, "Measured choices").
  constexpr int kOneWaveChunks = 32;
  const bool one_wave = topology.switches() > 0 && k >= kOneWaveChunks;
  if (mode == AllReduceMode::kPipelined && !one_wave) {
    if (k % 2 == 0 && k > 2) wave_counts.push_back(2);
    if (k > 1) wave_counts.push_back(k);
  }
  const std::size_t options = wave_counts.size();
  std::vector<std::optional<Algorithm>> planned(options);
  std::vector<Time> loads(options, 0);  // each abandoned wave count's busiest link
  // The earliest of the fastest plans so far (only a strictly faster one replaces it).
  auto fastest = [&] {
    std::optional<Algorithm>* kept = nullptr;
    for (std::optional<Algorithm>& plan : planned)
      if (plan && (!kept || plan->collective_time < (*kept)->collective_time)) kept = &plan;
    return kept;
  };
  // A trial with cores to spare plans its wave counts side by side, each bounded by the
  // deadline alone; one after the other, each is also bounded by the best before it. Either
  // way the earliest of the fastest is kept, so the schedule is the same.
  if (context.matcher_threads > 1 && !context.plain && options > 1) {
    TrialContext one_core = context;
    one_core.matcher_threads = 1;
    detail::run_tasks(options, context.matcher_threads, [&](std::size_t option) {
      // Progress from the first wave count only: the callback is not shared between threads.
      const ProgressCallback quiet;
      planned[option] =
          plan_waves(topology, transposed, all_reduce, one_core, mode, seed, wave_counts[option],
                     context.deadline, option == 0 ? progress : quiet, loads[option]);
    });
  } else {
    for (std::size_t option = 0; option < options; ++option) {
      ProgressCallback part;
      if (progress)
        part = [&progress, option, options](double f) { progress((option + f) / options); };
      const auto* best = fastest();
      const Time to_beat =
          std::min(context.deadline, best ? (*best)->collective_time : kNoDeadline);
      planned[option] = plan_waves(topology, transposed, all_reduce, context, mode, seed,
                                   wave_counts[option], to_beat, part, loads[option]);
      // Only the fastest is held.
      const auto* kept = fastest();
      for (std::optional<Algorithm>& plan : planned)
        if (&plan != kept) plan.reset();
    }
  }
  for (const Time load : loads) abandoned_load = std::max(abandoned_load, load);
  std::optional<Algorithm> best;
  if (auto* kept = fastest()) best = std::move(*kept);
  // Reduce-Scatter + All-Gather loads an NPU by its share, not its links: a mesh corner relays
  // as much as its centre. Spanning trees packed over the links, each reducing and broadcasting
  // its chunks, load every link alike (tree_packing.h); kept when faster.
  if (mode == AllReduceMode::kPipelined) {
    std::optional<Algorithm> trees =
        detail::best_tree_packing_all_reduce(topology, all_reduce, model, seed);
    if (trees && (!best || trees->collective_time < best->collective_time))
      best = std::move(*trees);
  }
  return best;
}

TrialOutcome outcome_of(Algorithm algorithm, std::uint64_t seed, bool keep) {
  TrialOutcome outcome;
  outcome.seed = seed;
  outcome.time = algorithm.collective_time;
  outcome.transfers = static_cast<std::int64_t>(algorithm.transfers().size());
  algorithm.seed = seed;
  if (keep) outcome.algorithm = std::move(algorithm);
  return outcome;
}

// Reductions are built from a kept copy schedule (reversed, then retimed). Without kept transfers
// and beyond this many of them (n^2 K), --time-only reports the phases' synthesized times instead:
// the reversed schedule's time (its retiming can only make it earlier, and on the tori it does not:
// docs/quality.md, "Measured choices") and, for All-Reduce, the sum of both phases.
constexpr double kRetimedTransferLimit = 4e6;

bool phases_only(const Collective& collective, bool keep) {
  const double n = collective.num_members();
  return !keep && n * n * collective.chunks_per_npu() > kRetimedTransferLimit;
}

// All-Reduce as Reduce-Scatter (All-Gather on the transposed topology) plus All-Gather, the two
// synthesized at the same time on two threads.
TrialOutcome all_reduce_phases(const Topology& topology, const Topology& transposed,
                               const Collective& all_reduce, const TrialContext& context,
                               std::uint64_t seed, const ProgressCallback& progress) {
  const Collective reduce_scatter =
      Collective::make(CollectiveKind::kReduceScatter, all_reduce.topology_npus(),
                       all_reduce.size(), all_reduce.chunks_per_npu(), all_reduce.members());
  const Collective all_gather = copy_counterpart(reduce_scatter);
  // The two phases take the trial's cores: one matcher thread each.
  TrialContext phase = context;
  phase.matcher_threads = 1;
  // Each phase is timed alone, so batched messages need only make that phase faster.
  phase.batch = context.batch_all_reduce;
  TrialOutcome first;
  std::exception_ptr failure;
  auto first_phase = [&] {
    try {
      first = run_copy(transposed, all_gather, phase, seed, false, {});
    } catch (...) {
      failure = std::current_exception();
    }
  };
  std::thread worker;
  try {
    worker = std::thread(first_phase);
  } catch (const std::system_error&) {
    first_phase();  // under a process or thread limit: one phase after the other
  }
  TrialOutcome second;
  try {
    second = run_copy(topology, all_gather, phase, seed, false, progress);
  } catch (...) {
    if (worker.joinable()) worker.join();
    throw;
  }
  if (worker.joinable()) worker.join();
  if (failure) std::rethrow_exception(failure);
  second.time += first.time;
  second.transfers += first.transfers;
  second.wasted += first.wasted;
  return second;
}

using Trial = std::function<TrialOutcome(std::uint64_t seed, const TrialContext& context,
                                         const ProgressCallback& progress)>;

Trial make_trial(const Topology& topology, const Collective& collective,
                 const SynthesisOptions& options) {
  switch (collective.kind()) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kBroadcast:
      return [&topology, &collective](std::uint64_t seed, const TrialContext& context,
                                      const ProgressCallback& progress) {
        return run_copy(topology, collective, context, seed, context.keep, progress);
      };
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
    case CollectiveKind::kAllToAll:
      // Every chunk goes to one NPU: the flows routed against each other's load are kept when
      // faster than the greedy's hop-by-hop routes (routed_unicast.h); both are coalesced.
      return [&topology, &collective](std::uint64_t seed, const TrialContext& context,
                                      const ProgressCallback& progress) {
        const LinkModel model = context.model;
        TrialOutcome greedy = run_copy(topology, collective, context, seed, context.keep, progress);
        std::optional<Algorithm> flows = detail::routed_unicast(topology, collective, model, seed);
        if (flows && context.coalesce)
          if (std::optional<Algorithm> merged = detail::coalesce_messages(*flows, topology, model))
            flows = std::move(merged);
        if (flows && flows->collective_time < greedy.time)
          return outcome_of(std::move(*flows), seed, context.keep);
        return greedy;
      };
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduce: {
      auto transposed = std::make_shared<Topology>(detail::transpose(topology));
      if (phases_only(collective, options.keep_transfers))
        return [transposed, &collective](std::uint64_t seed, const TrialContext& context,
                                         const ProgressCallback& progress) {
          return run_copy(*transposed, copy_counterpart(collective), context, seed, false,
                          progress);
        };
      return [&topology, transposed, &collective](std::uint64_t seed, const TrialContext& context,
                                                  const ProgressCallback& progress) {
        TrialOutcome outcome =
            synthesize_reduction(topology, *transposed, collective, context, seed, progress);
        if (!context.keep) outcome.algorithm.reset();
        return outcome;
      };
    }
    case CollectiveKind::kAllReduce: {
      auto transposed = std::make_shared<Topology>(detail::transpose(topology));
      const AllReduceMode mode = options.all_reduce_mode;
      if (phases_only(collective, options.keep_transfers))
        return [&topology, transposed, &collective](std::uint64_t seed, const TrialContext& context,
                                                    const ProgressCallback& progress) {
          return all_reduce_phases(topology, *transposed, collective, context, seed, progress);
        };
      return [&topology, transposed, &collective, mode](std::uint64_t seed,
                                                        const TrialContext& context,
                                                        const ProgressCallback& progress) {
        PlainCopies copies;
        TrialContext plain_context = context;
        if (context.batch_all_reduce) plain_context.plain = &copies;
        Time abandoned_load = 0;
        std::optional<Algorithm> plain_plan = synthesize_all_reduce(
            topology, *transposed, collective, plain_context, mode, seed, progress, abandoned_load);
        std::optional<TrialOutcome> plain;
        if (plain_plan) plain = outcome_of(std::move(*plain_plan), seed, context.keep);
        if (context.batch_all_reduce) {
          // Batched phases judged by the whole: a faster phase alone can make it slower. Kept
          // only if faster than the plain plan, so that is its time to beat.
          TrialContext batched_context = plain_context;
          batched_context.batch = true;
          if (plain) batched_context.deadline = std::min(context.deadline, plain->time);
          std::optional<Algorithm> batched_plan =
              synthesize_all_reduce(topology, *transposed, collective, batched_context, mode, seed,
                                    ProgressCallback(), abandoned_load);
          if (batched_plan && (!plain || batched_plan->collective_time < plain->time))
            return outcome_of(std::move(*batched_plan), seed, context.keep);
        }
        if (plain) return std::move(*plain);
        TrialOutcome abandoned;
        abandoned.seed = seed;
        abandoned.abandoned = true;
        abandoned.time = abandoned_load;
        return abandoned;
      };
    }
  }
  throw Error("synthesize: unknown collective");
}

double seconds_since(std::chrono::steady_clock::time_point started) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

// Whether `plan` is faster than the lower bound of `topology` with no switch reducing, which
// every plan of the greedy (unicast, multicast copies where declared) respects.
bool beats_every_unicast_plan(const Algorithm& plan, const Topology& topology,
                              const Collective& collective) {
  Topology unreducing = topology;
  for (DeviceId s = topology.npus(); s < topology.devices(); ++s) unreducing.set_reducing(s, false);
  const double bound_us = compute_lower_bound(unreducing, collective).lower_bound_us;
  // Whole picoseconds below the bound, rounded down: the comparison stays in integer time.
  return plan.collective_time < static_cast<Time>(bound_us * 1e6);
}

// The result that reports the in-switch plan (its seed: the request's).
SynthesisResult in_switch_result(Algorithm plan, const Collective& collective,
                                 const SynthesisOptions& options,
                                 std::chrono::steady_clock::time_point started) {
  SynthesisResult result;
  result.collective_time = plan.collective_time;
  result.transfers = static_cast<std::int64_t>(plan.transfers().size());
  result.wasted_transfers = 0;
  result.seed = options.seed;
  if (options.keep_transfers) {
    result.algorithm = std::move(plan);
  } else {
    result.algorithm = Algorithm(collective);
    result.algorithm.link_model = options.link_model;
    result.algorithm.collective_time = result.collective_time;
  }
  result.algorithm.seed = options.seed;
  result.seconds = seconds_since(started);
  return result;
}

}  // namespace

AllReduceMode parse_all_reduce_mode(std::string_view text) {
  if (text == "sequential") return AllReduceMode::kSequential;
  if (text == "pipelined") return AllReduceMode::kPipelined;
  throw Error("--all-reduce-mode: expected 'sequential' or 'pipelined', got '" + std::string(text) +
              "'");
}

std::string to_string(AllReduceMode mode) {
  return mode == AllReduceMode::kSequential ? "sequential" : "pipelined";
}

SynthesisResult synthesize_tacos(const Topology& topology, const Collective& collective,
                                 const SynthesisOptions& options) {
  if (options.trials < 1) throw Error("--trials: must be at least 1");
  if (collective.topology_npus() != topology.npus())
    throw Error("synthesize: the collective was made for " +
                std::to_string(collective.topology_npus()) + " NPUs but the topology has " +
                std::to_string(topology.npus()));
  require_reachable(topology, collective);
  const auto started = std::chrono::steady_clock::now();
  // A switch that reduces (NVLS, SHARP) joined to every member, or NVLink domains joined by
  // rails: contributions go up once and sums come straight down (in_switch.h); kept where
  // faster than the greedy's unicast plan. The greedy never reduces in a switch, so where the
  // in-switch plan beats the lower bound of the same fabric without reducing switches, the
  // greedy cannot win and is not run (on two GB200 NVL72 racks it took most of the time).
  std::optional<Algorithm> in_switch =
      detail::in_switch_plan(topology, collective, options.link_model);
  if (in_switch && beats_every_unicast_plan(*in_switch, topology, collective)) {
    if (options.progress) options.progress(1.0);
    return in_switch_result(std::move(*in_switch), collective, options, started);
  }
  const Trial trial = make_trial(topology, collective, options);

  unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads)
                                         : std::max(1U, std::thread::hardware_concurrency());
  const unsigned cores = threads;
  threads = std::min<unsigned>(threads, static_cast<unsigned>(options.trials));
  const int per_trial = static_cast<int>(std::max(1U, cores / threads));

  std::mutex mutex;
  std::optional<TrialOutcome> best;
  std::exception_ptr failure;
  std::atomic<int> next_trial{0};
  std::atomic<int> finished_trials{0};
  ProgressCallback trial_progress;
  if (options.progress) {
    // Progress of the whole run: finished trials plus the first worker's current trial.
    trial_progress = [&](double fraction) {
      options.progress((finished_trials.load() + fraction) / options.trials);
    };
  }

  RelayCache relays;
  TrialContext context;
  context.model = options.link_model;
  context.keep = options.keep_transfers;
  context.coalesce = options.coalesce && options.keep_transfers;
  // Inside All-Reduce only as a whole second run: a faster phase alone can make the pipelined
  // whole slower (docs/quality.md, "Measured choices").
  // With the transfers kept, batched runs go with coalescing (a batched winner is coalesced
  // too); without them they run alone: they need no transfer list to be timed.
  const bool batch = options.batch && (options.coalesce || !options.keep_transfers);
  context.batch = batch && collective.kind() != CollectiveKind::kAllReduce;
  // Twice the work: only where chunks are small next to the latency, batching's domain.
  context.batch_all_reduce = batch && collective.kind() == CollectiveKind::kAllReduce &&
                             small_chunks(topology, collective, options.link_model);
  context.justify = options.justify && options.keep_transfers;
  context.matcher_threads = per_trial;
  context.relays = &relays;
  // Not beside an in-switch plan: where it wins, the result carries the best trial's seed.
  if (options.deadline > 0 && !in_switch) context.deadline = options.deadline;
  const CollectiveKind kind = collective.kind();
  if (kind == CollectiveKind::kAllGather || kind == CollectiveKind::kBroadcast ||
      kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kReduce)
    context.copy_deadline = context.deadline;
  std::optional<Time> abandoned_load;  // the least load that abandoned a trial
  auto worker = [&](bool reports_progress) {
    static const ProgressCallback kNoProgress;
    while (true) {
      const int index = next_trial.fetch_add(1);
      if (index >= options.trials) return;
      try {
        TrialOutcome outcome = trial(options.seed + static_cast<std::uint64_t>(index), context,
                                     reports_progress ? trial_progress : kNoProgress);
        std::lock_guard lock(mutex);
        ++finished_trials;
        if (outcome.abandoned)
          abandoned_load = std::min(abandoned_load.value_or(outcome.time), outcome.time);
        else if (!best || better(outcome, *best))
          best = std::move(outcome);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
        next_trial = options.trials;
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    // Under a process or thread limit, run the trials on the threads there are.
    try {
      pool.emplace_back(worker, false);
    } catch (const std::system_error&) {
      break;
    }
  }
  worker(true);
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);

  if (!best) {
    // Every trial was abandoned: each would have ended at the deadline or later.
    SynthesisResult result;
    result.collective_time = context.deadline;
    result.seed = options.seed;
    result.algorithm = Algorithm(collective);
    result.algorithm.link_model = options.link_model;
    result.algorithm.collective_time = context.deadline;
    result.abandoned = "abandoned at " + format_micros(*abandoned_load) +
                       " us >= " + options.deadline_name + " " + format_micros(context.deadline) +
                       " us (a link is busy that long)";
    result.seconds = seconds_since(started);
    return result;
  }
  SynthesisResult result;
  result.collective_time = best->time;
  result.seed = best->seed;
  result.transfers = best->transfers;
  result.wasted_transfers = best->wasted;
  if (best->algorithm) {
    result.algorithm = std::move(*best->algorithm);
  } else {
    result.algorithm = Algorithm(collective);
    result.algorithm.link_model = options.link_model;
    result.algorithm.collective_time = best->time;
  }
  result.algorithm.seed = best->seed;
  if (in_switch && in_switch->collective_time < result.collective_time) {
    result = in_switch_result(std::move(*in_switch), collective, options, started);
    result.seed = best->seed;
    result.algorithm.seed = best->seed;
  }
  result.seconds = seconds_since(started);
  return result;
}

}  // namespace tacos
