#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "greedy_matcher.h"
#include "tacos/common/error.h"
#include "tacos/synthesis/synthesizer.h"

namespace tacos {
namespace {

struct TrialOutcome {
  std::uint64_t seed = 0;
  Time time = 0;
  std::int64_t transfers = 0;
  std::int64_t wasted = 0;
  std::optional<Algorithm> algorithm;
};

bool better(const TrialOutcome& a, const TrialOutcome& b) {
  return a.time != b.time ? a.time < b.time : a.seed < b.seed;
}

void require_supported(const Collective& collective) {
  const auto kind = collective.kind();
  const bool copy_to_all =
      kind == CollectiveKind::kAllGather || kind == CollectiveKind::kBroadcast;
  if (!copy_to_all)
    throw Error("synthesize: TACOS synthesis of " + to_string(kind) + " is not implemented yet");
  if (collective.num_members() != collective.topology_npus())
    throw Error("synthesize: --npus subsets are not implemented yet");
}

}  // namespace

SynthesisResult synthesize_tacos(const Topology& topology, const Collective& collective,
                                 const SynthesisOptions& options) {
  require_supported(collective);
  if (options.trials < 1) throw Error("--trials: must be at least 1");
  if (collective.topology_npus() != topology.npus())
    throw Error("synthesize: the collective was made for " +
                std::to_string(collective.topology_npus()) + " NPUs but the topology has " +
                std::to_string(topology.npus()));
  topology.require_strongly_connected();
  const auto started = std::chrono::steady_clock::now();

  unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads)
                                         : std::max(1U, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(options.trials));

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

  auto worker = [&](bool reports_progress) {
    static const ProgressCallback kNoProgress;
    while (true) {
      const int trial = next_trial.fetch_add(1);
      if (trial >= options.trials) return;
      try {
        TrialOutcome outcome;
        outcome.seed = options.seed + static_cast<std::uint64_t>(trial);
        detail::GreedyMatcher matcher(topology, collective, options.link_model, outcome.seed,
                                      options.keep_transfers,
                                      reports_progress ? trial_progress : kNoProgress);
        matcher.run();
        outcome.time = matcher.collective_time();
        outcome.transfers = matcher.transfers();
        outcome.wasted = matcher.wasted_transfers();
        std::lock_guard lock(mutex);
        ++finished_trials;
        if (!best || better(outcome, *best)) {
          if (options.keep_transfers) outcome.algorithm = matcher.take_algorithm();
          best = std::move(outcome);
        }
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
        next_trial = options.trials;
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker, false);
  worker(true);
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);

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
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace tacos
