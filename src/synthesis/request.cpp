// The library's one synthesis request (request.h): the registry, the K search and the portfolio.
#include "tacos/synthesis/request.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <mutex>

#include "../common/parallel_tasks.h"
#include "tacos/algorithm/verify.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/synthesis/report.h"

namespace tacos {
namespace {

using Kind = CollectiveKind;

double seconds_since(std::chrono::steady_clock::time_point started) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

bool rooted(CollectiveKind kind) { return kind == Kind::kBroadcast || kind == Kind::kReduce; }

// One algorithm at one K, verified. `over_budget` (if given) tells a baseline skipped for its
// budget from one that does not apply.
SynthesisRun run_once(const AlgorithmInfo& info, const Topology& network,
                      const Collective& collective, const SynthesisOptions& options,
                      bool* over_budget = nullptr) {
  SynthesisRun run;
  run.name = info.name;
  if (info.name == "tacos") {
    run.result = synthesize_tacos(network, collective, options);
    if (!run.result.abandoned.empty()) return run;  // no schedule to verify
  } else {
    const Baseline baseline = parse_baseline(info.name);
    if (!options.keep_transfers) throw Error("--time-only applies to --algorithm tacos only");
    run.skipped_reason = baseline_inapplicable(baseline, network, collective);
    if (run.skipped_reason) return run;
    const auto started = std::chrono::steady_clock::now();
    try {
      run.result.algorithm = synthesize_baseline(baseline, network, collective, options.link_model);
    } catch (const BaselineOverBudget& over) {
      run.skipped_reason = over.what();
      if (over_budget) *over_budget = true;
      return run;
    }
    run.result.seconds = seconds_since(started);
    run.result.collective_time = run.result.algorithm.collective_time;
    run.result.transfers = static_cast<std::int64_t>(run.result.algorithm.transfers().size());
    run.result.seed = options.seed;
  }
  if (options.keep_transfers) {
    const VerifyResult check = verify_algorithm(run.result.algorithm, network, options.link_model);
    if (!check.ok || check.collective_time != run.result.collective_time)
      throw VerificationFailure(
          info.name + ": internal check failed, the algorithm does not verify: " +
          (check.ok ? std::string("replayed time differs from the reported time") : check.error));
    run.verified = true;
  }
  return run;
}

// A schedule already made for the same request (the portfolio's fastest baseline): the greedy's
// K search abandons a larger K once it provably cannot beat it.
struct TimeToBeat {
  Time time = 0;
  std::string name;
};

// The request's K, or the search over K = 1, 2, 4, ... (SynthesisRequest::auto_chunks).
// `to_beat` (auto_chunks only) bounds a K where that cannot change where the search goes
// (below). K = 1 runs in full, so that the greedy's own time is known, unless it is also the
// search's last K: then a plan that cannot beat `to_beat` is not finished, and where it was the
// only K the run has no result (SynthesisRun::greedy_time stays unset).
SynthesisRun search_chunks(const AlgorithmInfo& info, const Topology& network,
                           const SynthesisRequest& request,
                           const std::optional<TimeToBeat>& to_beat = std::nullopt) {
  if (!request.auto_chunks)
    return run_once(info, network, request.collective_at(network.npus(), request.chunks_per_npu),
                    request.options);
  // The chunk deliveries every schedule needs, against the algorithm's budget: an All-Gather on
  // 1,024 NPUs still tries K = 2 (2,095,104), where a torus first pipelines, and bucket K = 2 on
  // 4,096 NPUs.
  const double transfer_budget = info.transfer_budget;
  constexpr double kRootedTransferBudget = 2e6;
  constexpr double kMinGain = 0.005;  // a doubling must win at least this much to count
  std::optional<SynthesisRun> best;
  double seconds = 0;
  int without_gain = 0;
  const Collective probe = request.collective_at(network.npus(), 1);
  std::string stopped;
  std::string abandoned;
  std::string cut_by;
  std::optional<SynthesisRun> skipped;  // a K over the baselines' budget, below a larger own one
  // Where the search ends by its own rules: no K past this one is tried.
  auto past_end = [&](int k) {
    if (k > (1 << 20)) return true;
    const double pieces = rooted(probe.kind()) ? k : static_cast<double>(probe.num_members()) * k;
    if (static_cast<double>(probe.size()) / pieces < 1) return true;
    // Transfers grow with members x chunks: every other member needs every chunk, All-Reduce
    // moves each twice (reducing, gathering). Broadcast and Reduce keep the limit their K
    // choices were measured with, members x chunks <= 2M, unless the algorithm has a larger
    // budget of its own (torus-trees).
    const double members = static_cast<double>(probe.num_members());
    const bool over_rooted = transfer_budget > kBaselineTransferBudget
                                 ? (members - 1) * pieces > transfer_budget
                                 : members * pieces > kRootedTransferBudget;
    return rooted(probe.kind())
               ? over_rooted
               : (members - 1) * pieces * (probe.kind() == Kind::kAllReduce ? 2 : 1) >
                     transfer_budget;
  };
  for (int k = 1; k <= (1 << 20); k *= 2) {
    if (k > 1 && past_end(k)) break;
    if (k > 1 && request.auto_budget_seconds > 0 && seconds >= request.auto_budget_seconds) {
      // Checked only here, where the search would go on: a search that ended by its own rules
      // within the same K reports nothing.
      char budget[32];
      std::snprintf(budget, sizeof budget, "%g", request.auto_budget_seconds);
      stopped = info.name + ": the " + budget +
                " s budget stopped the search after K = " + std::to_string(k / 2);
      break;
    }
    // Branch and bound: a K is only kept if strictly faster than the best so far, so the
    // greedy may abandon a plan that provably cannot be (SynthesisOptions::deadline).
    SynthesisOptions options = request.options;
    if (best) options.deadline = best->result.collective_time;
    // The baseline's time is the one to beat only where stopping this K there cannot change
    // where the search goes next: it is the last K (K = 1 included: then the greedy may finish
    // none), or a K that cannot beat the baseline cannot gain on the greedy's own best either.
    // So the schedule kept is the one kept without it; only the greedy's own best may be
    // missing a K that lost to the baseline.
    const bool last = past_end(2 * k);
    const bool bounded_by_baseline =
        to_beat && (best ? to_beat->time < options.deadline &&
                               (last || static_cast<double>(to_beat->time) >=
                                            (1 - kMinGain) * static_cast<double>(options.deadline))
                         : last);
    if (bounded_by_baseline) {
      options.deadline = to_beat->time;
      options.deadline_name = to_beat->name + "'s";
    }
    bool over_budget = false;
    SynthesisRun run =
        run_once(info, network, request.collective_at(network.npus(), k), options, &over_budget);
    seconds += run.result.seconds;
    if (!run.result.abandoned.empty()) {
      // Not a result: no gain, and never the best.
      if (bounded_by_baseline) cut_by = to_beat->name;
      abandoned += (abandoned.empty() ? "" : "; ") + std::string("K = ") + std::to_string(k) + " " +
                   run.result.abandoned;
      if (!best) {
        // The only K, stopped by the baseline's time: no schedule of the greedy's to keep.
        run.result.seconds = seconds;
        run.abandoned = abandoned;
        run.greedy_cut_by = cut_by;
        return run;
      }
      if (++without_gain == 2) break;
      continue;
    }
    // Inapplicable at every K, or over the budget: past it, larger K only grow. Except where
    // an algorithm's own budget is larger than the baselines' but holds only from some K on
    // (bucket's from one piece per dimension order): below it, a larger K may still be built.
    if (run.skipped_reason && !best && over_budget &&
        info.transfer_budget > kBaselineTransferBudget) {
      skipped = std::move(run);
      continue;
    }
    if (run.skipped_reason && best) break;
    if (run.skipped_reason) return run;
    const bool gain =
        !best || static_cast<double>(run.result.collective_time) <
                     (1 - kMinGain) * static_cast<double>(best->result.collective_time);
    if (!best || run.result.collective_time < best->result.collective_time) best = std::move(run);
    if (gain)
      without_gain = 0;
    else if (++without_gain == 2)
      break;
  }
  if (!best) return std::move(*skipped);  // every K tried was over the budget
  best->result.seconds = seconds;
  best->auto_stopped = stopped;
  best->abandoned = abandoned;
  best->greedy_cut_by = cut_by;
  return std::move(*best);
}

double mean_member_hops(const Topology& network, const Collective& collective) {
  // 0-1 BFS from each member: entering an NPU is a hop (a relay), crossing a switch is not (the
  // baselines send NPU to NPU through switches as one message).
  const int n = collective.num_members();
  if (n < 2) return 1;
  std::vector<int> distance(network.devices());
  std::vector<char> done(network.devices());
  std::deque<DeviceId> queue;
  double total = 0;
  for (const NpuId from : collective.members()) {
    std::fill(distance.begin(), distance.end(), -1);
    std::fill(done.begin(), done.end(), 0);
    distance[from] = 0;
    queue.assign(1, from);
    while (!queue.empty()) {
      const DeviceId u = queue.front();
      queue.pop_front();
      if (done[u]) continue;
      done[u] = 1;
      for (const LinkId id : network.out_links(u)) {
        const DeviceId v = network.link(id).dst;
        const int step = network.is_switch(v) ? 0 : 1;
        if (distance[v] >= 0 && distance[v] <= distance[u] + step) continue;
        distance[v] = distance[u] + step;
        if (step == 0)
          queue.push_front(v);
        else
          queue.push_back(v);
      }
    }
    for (const NpuId to : collective.members())
      if (to != from && distance[to] > 0) total += distance[to];
  }
  return total / (static_cast<double>(n) * (n - 1));
}

std::vector<AlgorithmInfo> make_registry() {
  const std::vector<Kind> every{Kind::kAllGather, Kind::kReduceScatter, Kind::kAllReduce,
                                Kind::kBroadcast, Kind::kReduce,        Kind::kGather,
                                Kind::kScatter,   Kind::kAllToAll};
  const std::vector<Kind> gather_scatter{Kind::kAllGather, Kind::kReduceScatter, Kind::kAllReduce};
  return {
      {"tacos",
       "the TACOS greedy time-expanded-network matching; with the portfolio the fastest of it "
       "and every applicable baseline",
       every},
      {"ring", "NCCL-style ring (rail rings on DGX clusters), pipelined K pieces per step", every},
      {"direct", "every NPU sends to every other (routed hop by hop)", every},
      {"rhd", "recursive halving-doubling (a power-of-two NPU count)", gather_scatter},
      {"dbt",
       "NCCL's double binary tree, pipelined chunk by chunk",
       {Kind::kAllReduce, Kind::kBroadcast, Kind::kReduce}},
      {"hierarchical",
       "per dimension of a multi-dimensional topology (BlueConnect); leaf relay on fat-trees",
       gather_scatter},
      {"biring", "bidirectional ring: every piece halfway round each way", gather_scatter},
      {"bucket",
       "multi-dimensional bidirectional bucket on tori and meshes: one dimension at a time, "
       "pieces (All-to-All: chunks) spread over the dimension orders",
       {Kind::kAllGather, Kind::kReduceScatter, Kind::kAllReduce, Kind::kAllToAll},
       /*needs_reducing_switch=*/false,
       /*neighbour_messages=*/true,
       /*transfer_budget=*/kBucketTransferBudget},
      {"node-direct",
       "switch pods: each node's block to every other node in one message over one rail, "
       "gathered and handed on over the NVSwitch (All-to-All: PXN, a node's chunks for one GPU "
       "in one message)",
       {Kind::kAllGather, Kind::kReduceScatter, Kind::kAllReduce, Kind::kAllToAll},
       /*needs_reducing_switch=*/false,
       /*neighbour_messages=*/true},
      {"relay",
       "Broadcast and Reduce over switches (switch:N, fat-trees, DGX pods): every free port "
       "sends the rarest chunk it holds to an NPU lacking it (a list schedule)",
       {Kind::kBroadcast, Kind::kReduce}},
      {"torus-trees",
       "Broadcast and Reduce on 2D tori: four spanning trees from the root, one per link out of "
       "it, no link in two, each quarter of the chunks pipelined down its tree",
       {Kind::kBroadcast, Kind::kReduce},
       /*needs_reducing_switch=*/false,
       /*neighbour_messages=*/true,
       /*transfer_budget=*/kTorusTreesTransferBudget},
      {"nvls",
       "NCCL's NVLS: shards reduced by an NVLink SHARP switch (ld_reduce), stored to all "
       "through it (multicast store)",
       gather_scatter, /*needs_reducing_switch=*/true},
      {"nvls-tree",
       "NCCL's NVLSTree: NVLS inside each node, two binary trees per rail across nodes",
       {Kind::kAllReduce},
       /*needs_reducing_switch=*/true},
      {"collnet",
       "NCCL's CollNet: NVLS inside each node, InfiniBand SHARP on each rail across nodes",
       {Kind::kAllReduce},
       /*needs_reducing_switch=*/true},
  };
}

}  // namespace

bool AlgorithmInfo::applies_to(CollectiveKind kind) const {
  return std::find(collectives.begin(), collectives.end(), kind) != collectives.end();
}

const std::vector<AlgorithmInfo>& algorithm_registry() {
  static const std::vector<AlgorithmInfo> registry = make_registry();
  return registry;
}

std::string algorithm_names_text() {
  const auto& registry = algorithm_registry();
  std::string text;
  for (std::size_t i = 0; i < registry.size(); ++i) {
    if (i > 0) text += i + 1 == registry.size() ? " or " : ", ";
    text += registry[i].name;
  }
  return text;
}

std::vector<std::string> algorithms_for(const Topology& topology) {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : algorithm_registry())
    if (!info.needs_reducing_switch || topology.reducing_switches() > 0) names.push_back(info.name);
  return names;
}

const AlgorithmInfo& find_algorithm(std::string_view name) {
  for (const AlgorithmInfo& info : algorithm_registry())
    if (info.name == name) return info;
  std::string quoted = "'";
  quoted.append(name);
  quoted += "'";
  throw UnknownAlgorithm("unknown algorithm " + quoted + " (expected " + algorithm_names_text() +
                         ")");
}

Collective SynthesisRequest::collective_at(int npus, int k) const {
  return Collective::make(collective, npus, size, k, members, root);
}

std::optional<std::string> portfolio_skip_reason(const Topology& network,
                                                 const Collective& collective,
                                                 const SynthesisOptions& options) {
  if (!options.keep_transfers) return std::string("--time-only (baselines need transfer lists)");
  const double n = collective.num_members();
  const double messages = (rooted(collective.kind()) ? n : n * n) * collective.chunks_per_npu();
  // Hops are at least 1: no need to measure them when the messages alone are over the budget.
  const double hops = messages > kPortfolioBudget ? 1 : mean_member_hops(network, collective);
  const double estimate = messages * hops;
  if (estimate > kPortfolioBudget) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "%s x hops = %.0f estimated baseline transfers > %.0f, the portfolio's budget",
                  rooted(collective.kind()) ? "N x K" : "N x N x K", estimate, kPortfolioBudget);
    return std::string(text);
  }
  return std::nullopt;
}

SynthesisRun synthesize(const Topology& network, const SynthesisRequest& request,
                        const KnownRuns* known) {
  const AlgorithmInfo& info = find_algorithm(request.algorithm);
  if (info.name != "tacos") return search_chunks(info, network, request);
  auto greedy_alone = [&](std::string why) {
    SynthesisRun greedy = search_chunks(info, network, request);
    greedy.greedy_time = greedy.result.collective_time;
    greedy.portfolio_skipped = std::move(why);
    return greedy;
  };
  if (!request.portfolio) return greedy_alone("--portfolio off");
  const int first_k = request.auto_chunks ? 1 : request.chunks_per_npu;
  // Over the estimate's budget only the candidates that send between neighbours run: their
  // transfers are the least any schedule needs, and their own budget bounds them.
  const std::optional<std::string> over_budget = portfolio_skip_reason(
      network, request.collective_at(network.npus(), first_k), request.options);
  if (over_budget && !request.options.keep_transfers) return greedy_alone(*over_budget);
  // The baselines first, so that the greedy's K search stops a K that cannot beat the fastest;
  // those not already made are built side by side (SynthesisOptions::threads).
  const auto started = std::chrono::steady_clock::now();
  struct Candidate {
    const AlgorithmInfo* info;
    const SynthesisRun* known = nullptr;  // a run already made (a compare row)
    bool failed = false;                  // could not be built here: no candidate
    bool skipped = false;
    std::string auto_stopped;
  };
  std::vector<Candidate> candidates;
  for (const AlgorithmInfo& candidate : algorithm_registry()) {
    if (candidate.name == "tacos") continue;
    const SynthesisRun* run = nullptr;
    if (known) {
      const auto it = known->find(candidate.name);
      if (it != known->end()) run = it->second;
    }
    // Over the budget a run already made still counts: it costs nothing.
    if (over_budget && !candidate.neighbour_messages && !run) continue;
    candidates.push_back(Candidate{&candidate, run, false, false, {}});
  }
  // The fastest built here, ties to the earlier candidate: the same at any thread count, and
  // only it is held.
  std::mutex mutex;
  std::optional<SynthesisRun> built;
  std::size_t built_index = 0;
  detail::run_tasks(candidates.size(), request.options.threads, [&](std::size_t i) {
    Candidate& candidate = candidates[i];
    if (candidate.known) return;
    SynthesisRun own;
    try {
      own = search_chunks(*candidate.info, network, request);
    } catch (const VerificationFailure&) {
      throw;  // a bug, never hidden behind the greedy
    } catch (const Error&) {
      // A baseline that cannot be built here (e.g. NPUs it cannot route between) is simply no
      // candidate; the greedy's own result stands.
      candidate.failed = true;
      return;
    }
    candidate.skipped = own.skipped_reason.has_value();
    candidate.auto_stopped = own.auto_stopped;
    if (candidate.skipped) return;
    std::lock_guard lock(mutex);
    const bool faster =
        !built || own.result.collective_time < built->result.collective_time ||
        (own.result.collective_time == built->result.collective_time && i < built_index);
    if (faster) {
      built = std::move(own);
      built_index = i;
    }
  });
  std::vector<std::string> tried;
  const SynthesisRun* best = nullptr;
  std::string winner;
  std::string baseline_stops;  // every baseline search the budget cut short ("ring: ...")
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& candidate = candidates[i];
    if (!candidate.auto_stopped.empty())
      baseline_stops += (baseline_stops.empty() ? "" : "; ") + candidate.auto_stopped;
    const SynthesisRun* run = candidate.known;
    if (!run && built && built_index == i) run = &*built;
    if (candidate.known ? candidate.known->skipped_reason.has_value()
                        : candidate.failed || candidate.skipped)
      continue;
    tried.push_back(candidate.info->name);
    // Strictly faster wins, so ties keep the earlier one.
    if (!run || (best && run->result.collective_time >= best->result.collective_time)) continue;
    winner = candidate.info->name;
    best = run;
  }
  std::string skipped;
  if (over_budget && !tried.empty()) {
    skipped = *over_budget + "; tried only ";
    for (std::size_t i = 0; i < tried.size(); ++i) skipped += (i > 0 ? ", " : "") + tried[i];
    skipped +=
        " (the baselines sending between neighbours or over one switch route, N x (N-1) x K "
        "transfers, and runs already made)";
  }
  // The greedy's own stop, then every baseline search the budget cut short.
  auto with_baseline_stops = [&](std::string stops) {
    if (!baseline_stops.empty()) stops += (stops.empty() ? "" : "; ") + baseline_stops;
    return stops;
  };
  // The winner is either the baseline built here or a known run (copied).
  auto keep_baseline = [&](SynthesisRun&& greedy) {
    SynthesisRun kept = built && best == &*built ? std::move(*built) : *best;
    kept.name = "tacos";
    kept.portfolio_winner = winner;
    kept.portfolio_skipped = skipped;
    kept.greedy_time = greedy.greedy_time;
    kept.greedy_cut_by = greedy.greedy_cut_by;
    kept.greedy_not_run = greedy.greedy_not_run;
    kept.auto_stopped = with_baseline_stops(greedy.auto_stopped);
    kept.abandoned = greedy.abandoned;
    kept.result.algorithm.synthesizer = "tacos/" + winner;
    kept.result.seconds = seconds_since(started);
    return kept;
  };
  // Over the portfolio's estimate the greedy is the costly part (torus2d:32x32 All-to-All: 144 s
  // and 4.2 GiB for 1.430 x the bound); where a baseline is already within
  // kGreedyNeedlessRatio of the lower bound, the greedy could gain no more than that.
  if (over_budget && best && network.npus() <= kBoundNpuLimit) {
    const double bound_us =
        compute_lower_bound(network, best->result.algorithm.collective()).lower_bound_us;
    const double ratio = to_micros(best->result.collective_time) / bound_us;
    if (bound_us > 0 && ratio <= kGreedyNeedlessRatio) {
      char text[200];
      std::snprintf(text, sizeof text, "%s's schedule is %.4f x the lower bound (%.6g us)",
                    winner.c_str(), ratio, bound_us);
      SynthesisRun none;
      none.greedy_not_run = text;
      skipped += "; the TACOS greedy not run: " + none.greedy_not_run;
      return keep_baseline(std::move(none));
    }
  }
  std::optional<TimeToBeat> to_beat;
  if (best && request.auto_chunks) to_beat = TimeToBeat{best->result.collective_time, winner};
  SynthesisRun greedy = search_chunks(info, network, request, to_beat);
  // Unfinished (its only K could not beat the fastest baseline, which exists then): no time.
  const bool finished = greedy.result.abandoned.empty();
  if (finished) greedy.greedy_time = greedy.result.collective_time;
  const double seconds = seconds_since(started);  // wall time: baselines and greedy
  // Ties keep the greedy.
  if (!best || (finished && greedy.result.collective_time <= best->result.collective_time))
    winner = "tacos";
  if (over_budget && tried.empty()) {
    greedy.portfolio_skipped = *over_budget;
    greedy.result.seconds = seconds;
    return greedy;
  }
  if (winner == "tacos") {
    greedy.portfolio_skipped = skipped;
    greedy.auto_stopped = with_baseline_stops(greedy.auto_stopped);
    greedy.portfolio_winner = winner;
    greedy.result.seconds = seconds;
    return greedy;
  }
  return keep_baseline(std::move(greedy));
}

}  // namespace tacos
