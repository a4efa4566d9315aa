#include "algorithm_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <string_view>

#include "tacos/algorithm/verify.h"
#include "tacos/common/error.h"
#include "tacos/synthesis/baselines.h"

namespace tacos::cli {

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> names{"tacos", "ring",         "direct", "rhd",
                                              "dbt",   "hierarchical", "biring"};
  return names;
}

AlgorithmRun run_algorithm(const std::string& name, const Topology& network,
                           const Collective& collective, const SynthesisOptions& options,
                           const std::string& topology_spec) {
  AlgorithmRun run;
  run.name = name;
  if (name == "tacos") {
    run.result = synthesize_tacos(network, collective, options);
  } else {
    const Baseline baseline = parse_baseline(name);
    if (!options.keep_transfers) throw Error("--time-only applies to --algorithm tacos only");
    run.skipped_reason = baseline_inapplicable(baseline, network, collective, topology_spec);
    if (run.skipped_reason) return run;
    const auto started = std::chrono::steady_clock::now();
    run.result.algorithm =
        synthesize_baseline(baseline, network, collective, options.link_model, topology_spec);
    run.result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    run.result.collective_time = run.result.algorithm.collective_time;
    run.result.transfers = static_cast<std::int64_t>(run.result.algorithm.transfers().size());
    run.result.seed = options.seed;
  }
  if (options.keep_transfers) {
    const VerifyResult check = verify_algorithm(run.result.algorithm, network, options.link_model);
    if (!check.ok || check.collective_time != run.result.collective_time)
      throw Error(
          name + ": internal check failed, the algorithm does not verify: " +
          (check.ok ? std::string("replayed time differs from the reported time") : check.error));
    run.verified = true;
  }
  return run;
}

namespace {

AlgorithmRun search_chunks(const std::string& name, const Topology& network,
                           const std::function<Collective(int)>& collective_for, bool auto_chunks,
                           int fixed_k, const SynthesisOptions& options,
                           const std::string& topology_spec) {
  if (!auto_chunks)
    return run_algorithm(name, network, collective_for(fixed_k), options, topology_spec);
  constexpr double kTransferBudget = 2e6;
  // A doubling must win at least this much to count as a gain.
  constexpr double kMinGain = 0.005;
  std::optional<AlgorithmRun> best;
  double seconds = 0;
  int without_gain = 0;
  const Collective probe = collective_for(1);
  const bool rooted =
      probe.kind() == CollectiveKind::kBroadcast || probe.kind() == CollectiveKind::kReduce;
  for (int k = 1; k <= (1 << 20); k *= 2) {
    const double pieces = rooted ? k : static_cast<double>(probe.num_members()) * k;
    if (k > 1 && static_cast<double>(probe.size()) / pieces < 1) break;
    // Transfers grow with members x chunks (every member needs nearly every chunk).
    const double estimate = static_cast<double>(probe.num_members()) * pieces;
    if (k > 1 && estimate > kTransferBudget) break;
    AlgorithmRun run = run_algorithm(name, network, collective_for(k), options, topology_spec);
    seconds += run.result.seconds;
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
  best->result.seconds = seconds;
  return std::move(*best);
}

double mean_member_hops(const Topology& network, const Collective& collective) {
  // 0-1 BFS from each member: entering an NPU is a hop (a relay), crossing a switch is not (the
  // baselines send NPU to NPU through switches as one message).
  const int n = collective.num_members();
  if (n < 2) return 1;
  std::vector<int> distance(network.devices());
  std::deque<DeviceId> queue;
  double total = 0;
  for (const NpuId from : collective.members()) {
    std::fill(distance.begin(), distance.end(), -1);
    std::vector<char> done(network.devices(), 0);
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

}  // namespace

std::optional<std::string> portfolio_skip_reason(const Topology& network,
                                                 const Collective& collective,
                                                 const SynthesisOptions& options) {
  if (!options.keep_transfers) return std::string("--time-only (baselines need transfer lists)");
  const double n = collective.num_members();
  const bool rooted = collective.kind() == CollectiveKind::kBroadcast ||
                      collective.kind() == CollectiveKind::kReduce;
  const double messages = (rooted ? n : n * n) * collective.chunks_per_npu();
  // Hops are at least 1: no need to measure them when the messages alone are over the budget.
  const double hops = messages > kPortfolioBudget ? 1 : mean_member_hops(network, collective);
  const double estimate = messages * hops;
  if (estimate > kPortfolioBudget) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "%s x hops = %.0f estimated baseline transfers > %.0f, the portfolio's budget",
                  rooted ? "N x K" : "N x N x K", estimate, kPortfolioBudget);
    return std::string(text);
  }
  return std::nullopt;
}

AlgorithmRun run_algorithm_searching_chunks(const std::string& name, const Topology& network,
                                            const std::function<Collective(int)>& collective_for,
                                            bool auto_chunks, int fixed_k,
                                            const SynthesisOptions& options,
                                            const std::string& topology_spec,
                                            const Portfolio& portfolio) {
  AlgorithmRun greedy =
      search_chunks(name, network, collective_for, auto_chunks, fixed_k, options, topology_spec);
  if (name != "tacos") return greedy;
  greedy.greedy_time = greedy.result.collective_time;
  if (!portfolio.enabled) {
    greedy.portfolio_skipped = "--portfolio off";
    return greedy;
  }
  if (const auto reason =
          portfolio_skip_reason(network, collective_for(auto_chunks ? 1 : fixed_k), options)) {
    greedy.portfolio_skipped = *reason;
    return greedy;
  }
  // Candidates in algorithm_names() order; strictly faster wins, so ties keep the earlier one.
  std::optional<AlgorithmRun> built;  // the fastest baseline built here
  const AlgorithmRun* best = &greedy;
  std::string winner = "tacos";
  double seconds = greedy.result.seconds;
  for (const std::string& candidate : algorithm_names()) {
    if (candidate == "tacos") continue;
    const AlgorithmRun* run = nullptr;
    AlgorithmRun own;
    if (portfolio.known) {
      const auto it = portfolio.known->find(candidate);
      if (it != portfolio.known->end()) run = it->second;
    }
    if (!run) {
      const auto started = std::chrono::steady_clock::now();
      try {
        own = search_chunks(candidate, network, collective_for, auto_chunks, fixed_k, options,
                            topology_spec);
      } catch (const Error& error) {
        // A baseline that cannot be built here (e.g. NPUs it cannot route between) is simply no
        // candidate; the greedy's own result stands. One that fails its own verification is a
        // bug and is reported, never hidden behind the greedy.
        if (std::string_view(error.what()).find("internal check failed") != std::string_view::npos)
          throw;
        seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        continue;
      }
      seconds += own.result.seconds;
      run = &own;
    }
    if (run->skipped_reason || run->result.collective_time >= best->result.collective_time)
      continue;
    winner = candidate;
    if (run == &own) {
      built = std::move(own);
      best = &*built;
    } else {
      best = run;
    }
  }
  if (winner == "tacos") {
    greedy.portfolio_winner = winner;
    greedy.result.seconds = seconds;
    return greedy;
  }
  // The winner is either the baseline built here last or a known run (copied).
  AlgorithmRun kept = built && best == &*built ? std::move(*built) : *best;
  kept.name = "tacos";
  kept.portfolio_winner = winner;
  kept.greedy_time = greedy.greedy_time;
  kept.result.algorithm.synthesizer = "tacos/" + winner;
  kept.result.seconds = seconds;
  return kept;
}

}  // namespace tacos::cli
