#pragma once
// Synthesizers turn (topology, collective) into an Algorithm; they never write files.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "tacos/algorithm/algorithm.h"
#include "tacos/collective/collective.h"
#include "tacos/common/link_model.h"
#include "tacos/topology/topology.h"

namespace tacos {

// Called now and then with the fraction done in [0, 1].
using ProgressCallback = std::function<void(double fraction)>;

// All-Reduce = Reduce-Scatter then All-Gather. Sequential: one All-Gather of every chunk planned
// after the whole Reduce-Scatter; its transfers then start as soon as their chunk and link allow
// (no rank waits for the others' reductions: the files written replay that way). Pipelined: the
// chunks in waves that overlap, or packed trees, whichever is fastest; never slower.
enum class AllReduceMode { kSequential, kPipelined };
AllReduceMode parse_all_reduce_mode(std::string_view text);  // else Error
std::string to_string(AllReduceMode mode);

struct SynthesisOptions {
  std::uint64_t seed = 1;
  int trials = 1;   // seeds seed, seed+1, ...; the fastest is kept (ties: lowest seed)
  int threads = 0;  // 0: every hardware thread
  LinkModel link_model = LinkModel::kTacos;
  bool keep_transfers = true;  // false: time and statistics only (--time-only)
  AllReduceMode all_reduce_mode = AllReduceMode::kPipelined;
  // Copy schedules on direct links under the tacos link model: merge a link's next message into
  // the one before it where that delays nothing, so the link pays its latency once
  // (src/synthesis/message_coalescing.h); kept where faster. Off is the pure greedy (with
  // keep_transfers false, batch off too); it is off whenever keep_transfers is false (the CLI
  // ties it to --portfolio).
  bool coalesce = true;
  // The same schedules: also run the greedy with batched messages (a free link sends several
  // chunks in one message, src/synthesis/greedy_matcher.h) at three message sizes; kept where
  // faster. Off with coalesce when keep_transfers is true; with keep_transfers false it runs
  // alone (a batched run is timed without a transfer list). The CLI ties it to --portfolio.
  bool batch = true;
  // The greedy's copy schedules through switches: reorder each port's messages by how late they
  // may start, a few forward-backward rounds re-timed by the simulator
  // (src/synthesis/justification.h); kept where faster. It needs the transfers: off whenever
  // keep_transfers is false (so --time-only reports the greedy without it). The domain relay
  // and the packed-tree All-Reduce always justify their own plans.
  bool justify = true;
  // Branch and bound (the `auto` K search passes the best time found so far, or the portfolio's
  // fastest baseline where that is faster): an All-Reduce plan (a wave count), or the greedy's
  // plan of an All-Gather, Broadcast or their reductions through switches, whose transfers
  // keep some link busy for `deadline` or longer, so that no timing of them finishes sooner,
  // is abandoned unfinished; the result is then SynthesisResult::abandoned. Plans that finish
  // before it are exactly those made without it. 0: none.
  Time deadline = 0;
  // Whose time `deadline` is, for SynthesisResult::abandoned: "best" (the K search's own best)
  // or e.g. "node-direct's".
  std::string deadline_name = "best";
  ProgressCallback progress;
};

struct SynthesisResult {
  Algorithm algorithm;       // empty transfer list when !keep_transfers
  Time collective_time = 0;  // last useful arrival
  std::uint64_t seed = 0;    // the winning trial's seed
  std::int64_t transfers = 0;
  std::int64_t wasted_transfers = 0;  // deliveries beaten by a faster path
  double seconds = 0;                 // wall time of synthesis alone (all trials)
  // Set when SynthesisOptions::deadline cut every trial short ("abandoned at X us >= best Y us
  // (a link is busy that long)", or ">= node-direct's Y us" after deadline_name); there is
  // then no schedule (collective_time is the deadline).
  std::string abandoned;
};

// The TACOS greedy time-expanded-network matching (docs/design.md, "The TACOS synthesizer:
// reference behaviour") for every collective kind. On
// fabrics without switch devices two more constructions compete and the fastest is kept: for
// All-Reduce (pipelined mode), packed spanning trees that reduce up and broadcast down; for
// Gather, Scatter and All-to-All, every chunk routed as a flow against the others' load, then
// list-scheduled (src/synthesis/tree_packing.h, routed_unicast.h).
// Switch devices are planned through natively (SwitchRoutes: a message holds each port of its
// route in turn, store-and-forward, and is only sent when every port is free in time); there the
// domain relay competes for All-Gather and Broadcast (and, reversed, their reductions): each chunk
// relayed once into each domain, messages sized per port (src/synthesis/domain_relay.h), and
// the ports' message orders are justified (src/synthesis/justification.h);
// Topology::unwind_switches gives the TACOS paper's model instead. Throws Error
// naming a source and a destination that cannot reach each other.
SynthesisResult synthesize_tacos(const Topology& topology, const Collective& collective,
                                 const SynthesisOptions& options);

}  // namespace tacos
