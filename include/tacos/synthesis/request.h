#pragma once
// One synthesis request, decided in the library: the algorithm (from one registry), the
// collective, a fixed K or the `auto` search, the portfolio of `tacos` and the verification of
// what is returned. The command line, `import tacos` and the sweep all call synthesize(), so the
// same request gives the same schedule, time, K and portfolio winner everywhere.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tacos/collective/collective.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/topology.h"

namespace tacos {

// ---- The algorithms ------------------------------------------------------------------------

struct AlgorithmInfo {
  std::string name;
  std::string help;                         // one line, for --help texts and docstrings
  std::vector<CollectiveKind> collectives;  // the collectives it is defined for
  bool needs_reducing_switch = false;       // runs only where a switch reduces (nvls)
  // Sends between neighbours only (or NPUs one switch route apart), each chunk to each NPU once
  // per phase: N x (N - 1) x K chunk transfers (twice for All-Reduce), not the portfolio
  // estimate's N x N x K x hops, so the portfolio still tries it where that estimate is over its
  // budget (bucket, node-direct).
  bool neighbour_messages = false;
  // Chunk deliveries a schedule needs (N - 1 per chunk; twice for All-Reduce) beyond which the
  // `auto` K search tries no larger K: the baselines' budget, bucket's own for bucket.
  double transfer_budget = kBaselineTransferBudget;
  bool applies_to(CollectiveKind kind) const;
};

// "tacos" first, then the baselines in the order the portfolio tries them (ties keep the
// earlier one): ring, direct, rhd, dbt, hierarchical, biring, bucket, node-direct, relay,
// torus-trees, nvls, nvls-tree, collnet.
const std::vector<AlgorithmInfo>& algorithm_registry();
// The entry named `name`; throws UnknownAlgorithm listing the valid names.
const AlgorithmInfo& find_algorithm(std::string_view name);
// "tacos, ring, direct, rhd, dbt, hierarchical, biring, bucket, node-direct, relay, torus-trees,
// nvls, nvls-tree or collnet".
std::string algorithm_names_text();
// The registry's names, less those needing a switch capability `topology` lacks (nvls without
// a reducing switch): what `compare` runs by default.
std::vector<std::string> algorithms_for(const Topology& topology);

// ---- The request ---------------------------------------------------------------------------

struct SynthesisRequest {
  std::string algorithm = "tacos";
  CollectiveKind collective = CollectiveKind::kAllGather;
  Bytes size = 64LL << 20;
  std::vector<NpuId> members;  // empty: every NPU
  NpuId root = 0;              // Broadcast, Reduce, Gather, Scatter
  int chunks_per_npu = 1;      // K; with auto_chunks where the search starts (1)
  // Try K = 1, 2, 4, ... and keep the fastest (ties: the smaller K); stop after two doublings
  // in a row without a gain of 0.5%, when a chunk would be smaller than a byte, or when the
  // next K would pass a work budget of about 2M transfers.
  bool auto_chunks = false;
  // With auto_chunks: no larger K is started once the search has spent this many seconds of
  // synthesis (0: no limit). The K being tried is finished, so a search may take up to about
  // twice the budget; the run's auto_stopped says when the budget cut it short. Each
  // algorithm's search (the greedy's, each portfolio baseline's) has the whole budget.
  double auto_budget_seconds = 0;
  // `tacos` only: also build every applicable baseline at the same settings and keep the
  // fastest schedule (ties: the greedy, then the earlier baseline), so tacos is never slower
  // than a baseline. Skipped with keep_transfers false and beyond kPortfolioBudget.
  bool portfolio = true;
  SynthesisOptions options;

  // The collective at K chunks per NPU on a topology of `npus` NPUs.
  Collective collective_at(int npus, int k) const;
};

// Estimated baseline transfers (N x N x K x H; N x K x H for Broadcast and Reduce; H the mean
// NPU-to-NPU hops between members, switches relaying for free) above which the portfolio is not
// run: beyond 512 NPUs it never is (dgx-h100:128, torus2d:128x128), nor on a torus2d:16x16.
inline constexpr double kPortfolioBudget = 262144;

// With the portfolio over its estimate's budget (N x N x K x hops transfers), a baseline within
// this ratio of the lower bound leaves the greedy no more than 0.5% to gain: it is not run
// (SynthesisRun::greedy_not_run).
inline constexpr double kGreedyNeedlessRatio = 1.005;

struct SynthesisRun {
  std::string name;  // the algorithm, as requested
  // Set when the algorithm does not apply, or when a baseline would be over
  // kBaselineTransferBudget (baselines.h) at the first K tried; a K search stops at the first K
  // over it.
  std::optional<std::string> skipped_reason;
  SynthesisResult result;        // result.algorithm.collective() has the chosen K
  std::optional<bool> verified;  // null when no transfers were kept
  // `tacos` with the portfolio: the candidate whose schedule was kept, "tacos" (the greedy) or
  // a baseline's name (then Algorithm::synthesizer is "tacos/NAME"); empty when none ran.
  std::string portfolio_winner;
  // `tacos`: why the portfolio did not run ("--portfolio off", "--time-only", over the
  // budget; over the budget with the neighbour-message baselines still tried, it says so and
  // portfolio_winner is set); empty when it ran in full, and for baselines.
  std::string portfolio_skipped;
  // `tacos`: the TACOS greedy's own time (what --portfolio off reports, unless greedy_cut_by
  // is set: then its best over the K it finished); unset where it finished no K (its only K
  // could not beat greedy_cut_by's time, so the portfolio kept that baseline).
  std::optional<Time> greedy_time;
  // `tacos` with auto_chunks: the baseline whose time abandoned some K of the greedy's search
  // (the portfolio builds the baselines first; a K whose plan cannot beat the fastest of them
  // is not finished); empty if none.
  std::string greedy_cut_by;
  // `tacos` with the portfolio over its estimate's budget: why the TACOS greedy was not run
  // (a baseline already within kGreedyNeedlessRatio of the lower bound, the greedy's
  // transfers over the budget); greedy_time is then unset. Empty where it ran.
  std::string greedy_not_run;
  // With auto_chunks: set when the time budget stopped the K search before its own end
  // (SynthesisRequest::auto_budget_seconds), naming the last K tried; empty otherwise.
  std::string auto_stopped;
  // With auto_chunks, `tacos`: the K values whose plans were abandoned, each provably no faster
  // than the best K before it ("K = 4 abandoned at X us >= best Y us ..."); empty if none.
  std::string abandoned;
};

// Baseline runs already made for the same request (by name), e.g. the rows of a comparison:
// the portfolio takes them instead of building them again.
using KnownRuns = std::map<std::string, const SynthesisRun*>;

// Runs the request on `network` (switch devices planned through; unwind first for the TACOS
// paper's model). Every kept schedule passes verify_algorithm with exactly the reported time,
// else VerificationFailure. Throws UnknownAlgorithm, and Error when the request is invalid or
// NPUs cannot reach each other. A baseline that does not apply, or is over its budget, returns
// with skipped_reason.
SynthesisRun synthesize(const Topology& network, const SynthesisRequest& request,
                        const KnownRuns* known = nullptr);

// Why the portfolio would not run for `collective` (its K the first one tried) on `network`,
// or nullopt.
std::optional<std::string> portfolio_skip_reason(const Topology& network,
                                                 const Collective& collective,
                                                 const SynthesisOptions& options);

}  // namespace tacos
