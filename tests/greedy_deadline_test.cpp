// Branch and bound in the greedy (GreedyMatcher::set_deadline): a run given a deadline it cannot
// beat is abandoned; given one it beats, it makes the schedule it makes without a deadline.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "../src/synthesis/greedy_matcher.h"
#include "schedule_rows.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"

namespace tacos {
namespace {

using TransferRow = std::tuple<DeviceId, DeviceId, Time, Time, std::vector<ChunkId>>;

struct Outcome {
  bool abandoned = false;
  Time abandoned_at = 0;
  Time time = 0;
  std::vector<TransferRow> rows;
  Algorithm algorithm;
};

Outcome run(const Topology& topology, const Collective& collective,
            std::optional<std::pair<Time, bool>> deadline) {
  const ProgressCallback quiet;
  detail::GreedyMatcher matcher(topology, collective, LinkModel::kTacos, 3, true, quiet);
  if (deadline) matcher.set_deadline(deadline->first, deadline->second);
  matcher.run();
  Outcome outcome;
  outcome.abandoned = matcher.abandoned();
  outcome.abandoned_at = matcher.abandoned_at();
  if (outcome.abandoned) return outcome;
  outcome.time = matcher.collective_time();
  outcome.algorithm = matcher.take_algorithm();
  for (const Transfer& t : outcome.algorithm.transfers()) {
    const auto chunks = outcome.algorithm.chunks(t);
    outcome.rows.emplace_back(t.src, t.dst, t.start, t.end,
                              std::vector<ChunkId>(chunks.begin(), chunks.end()));
  }
  return outcome;
}

TEST(GreedyDeadline, TimeDeadlineAbandonsARunThatCannotBeatIt) {
  // ring:4 (both directions), All-Gather of 1 MiB, K = 1: each NPU sends its 256 KiB chunk both
  // ways at 0, and at one hop each NPU forwards a neighbour's chunk to the NPU opposite its
  // source: done after two hops of 0.5 us + 256 KiB at 50 GB/s each.
  const Topology ring = generate_topology("ring:4", LinkParams{});
  const Collective all_gather = Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1, {}, 0);
  const Time hop = 500'000 + serialization_time(256 * 1024, 50);
  const Outcome free = run(ring, all_gather, std::nullopt);
  ASSERT_FALSE(free.abandoned);
  EXPECT_EQ(free.time, 2 * hop);

  // A deadline at its time: the last deliveries come no earlier, so the run stops there.
  const Outcome at = run(ring, all_gather, std::make_pair(free.time, false));
  EXPECT_TRUE(at.abandoned);
  EXPECT_EQ(at.abandoned_at, free.time);
  const Outcome early = run(ring, all_gather, std::make_pair(hop, false));
  EXPECT_TRUE(early.abandoned);
  EXPECT_EQ(early.abandoned_at, hop);  // the first arrivals, with chunks still missing

  // Just after its time: the same schedule as without a deadline.
  const Outcome after = run(ring, all_gather, std::make_pair(free.time + 1, false));
  ASSERT_FALSE(after.abandoned);
  EXPECT_EQ(after.time, free.time);
  EXPECT_EQ(after.rows, free.rows);
}

TEST(GreedyDeadline, LoadDeadlineAbandonsARunWhoseBusiestLinkReachesIt) {
  // switch:4, All-Gather of 1 MiB, K = 1: every NPU's link down from the switch carries the
  // three chunks it lacks, one message each, so some link is busy for at least three messages
  // of 0.5 us + 256 KiB at 50 GB/s; the simulator gives the busiest link's total.
  const Topology star = generate_topology("switch:4", LinkParams{});
  const Collective all_gather = Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1, {}, 0);
  const Time message = 500'000 + serialization_time(256 * 1024, 50);
  const Outcome free = run(star, all_gather, std::nullopt);
  ASSERT_FALSE(free.abandoned);
  const SimulationResult timed = simulate(free.algorithm, star, LinkModel::kTacos);
  const Time busiest = *std::max_element(timed.link_busy_ps.begin(), timed.link_busy_ps.end());
  EXPECT_GE(busiest, 3 * message);
  // Re-timed, no order of these messages ends before the busiest link is done.
  EXPECT_GE(timed.collective_time, busiest);

  // The busiest link reaches a deadline at its total: abandoned, whatever re-timing follows.
  const Outcome at = run(star, all_gather, std::make_pair(busiest, true));
  EXPECT_TRUE(at.abandoned);
  EXPECT_EQ(at.abandoned_at, busiest);
  const Outcome two = run(star, all_gather, std::make_pair(2 * message, true));
  EXPECT_TRUE(two.abandoned);
  EXPECT_EQ(two.abandoned_at, 2 * message);  // one link's second arrival

  // One picosecond more than any link carries: the same schedule as without a deadline.
  const Outcome after = run(star, all_gather, std::make_pair(busiest + 1, true));
  ASSERT_FALSE(after.abandoned);
  EXPECT_EQ(after.time, free.time);
  EXPECT_EQ(after.rows, free.rows);
}

TEST(GreedyDeadline, WholeDeadlineAddsWhatTheRestOfTheScheduleKeepsEachLinkBusyFor) {
  // switch:4 All-Gather as above, planned as one part of a larger schedule whose other parts
  // already keep every physical link busy for `base` (an All-Reduce's other phases).
  const Topology star = generate_topology("switch:4", LinkParams{});
  const Collective all_gather = Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1, {}, 0);
  const Outcome free = run(star, all_gather, std::nullopt);
  ASSERT_FALSE(free.abandoned);
  const SimulationResult timed = simulate(free.algorithm, star, LinkModel::kTacos);
  const Time busiest = *std::max_element(timed.link_busy_ps.begin(), timed.link_busy_ps.end());
  auto whole = [&](Time deadline, Time base) {
    const ProgressCallback quiet;
    detail::GreedyMatcher matcher(star, all_gather, LinkModel::kTacos, 3, true, quiet);
    const std::vector<Time> base_load(static_cast<std::size_t>(star.num_links()), base);
    matcher.set_whole_deadline(deadline, &base_load);
    matcher.run();
    return std::make_tuple(matcher.abandoned(), matcher.abandoned_at(),
                           matcher.abandoned() ? Time{0} : matcher.collective_time());
  };
  // Nothing else on the links: the part's own busiest link against the deadline.
  EXPECT_EQ(whole(busiest + 1, 0), std::make_tuple(false, Time{0}, free.time));
  EXPECT_EQ(whole(busiest, 0), std::make_tuple(true, busiest, Time{0}));
  // 7 us already on every link: the busiest link reaches busiest + 7 us.
  const Time base = 7'000'000;
  EXPECT_EQ(whole(busiest + base + 1, base), std::make_tuple(false, Time{0}, free.time));
  EXPECT_EQ(whole(busiest + base, base), std::make_tuple(true, busiest + base, Time{0}));
}

}  // namespace
}  // namespace tacos

namespace tacos {
namespace {

using tacos_test::rows_of;

TEST(GreedyDeadline, AllReduceGivenADeadlineItCannotBeatIsAbandoned) {
  // fattree:4x2x2 All-Reduce, K = 2 (three wave counts through switches, the domain relay
  // competing in each phase).
  const Topology fabric = generate_topology("fattree:4x2x2", LinkParams{});
  const Collective all_reduce =
      Collective::make(CollectiveKind::kAllReduce, fabric.npus(), 1 << 20, 2, {}, 0);
  const SynthesisResult free = synthesize_tacos(fabric, all_reduce, SynthesisOptions{});
  ASSERT_TRUE(free.abandoned.empty());
  ASSERT_GT(free.collective_time, 0);

  // Every plan keeps some link busy for at least one message: abandoned, with no schedule.
  SynthesisOptions tight;
  tight.deadline = 1;
  const SynthesisResult cut = synthesize_tacos(fabric, all_reduce, tight);
  EXPECT_FALSE(cut.abandoned.empty());
  EXPECT_NE(cut.abandoned.find(">= best 0.000001 us"), std::string::npos) << cut.abandoned;
  EXPECT_TRUE(cut.algorithm.transfers().empty());
  EXPECT_EQ(cut.collective_time, 1);

  // One picosecond after its time: the plan that wins finishes before it, so it is made and
  // chosen exactly as without a deadline.
  SynthesisOptions loose;
  loose.deadline = free.collective_time + 1;
  const SynthesisResult kept = synthesize_tacos(fabric, all_reduce, loose);
  ASSERT_TRUE(kept.abandoned.empty());
  EXPECT_EQ(kept.collective_time, free.collective_time);
  EXPECT_EQ(kept.seed, free.seed);
  EXPECT_EQ(rows_of(kept.algorithm), rows_of(free.algorithm));
}

TEST(GreedyDeadline, CopyCollectivesThroughSwitchesGivenADeadlineTheyCannotBeatAreAbandoned) {
  // switch:8, K = 2, among NPUs 0-5: the greedy's plan through the switch, re-timed and
  // justified (a process group: no domain relay to fall back on).
  const Topology fabric = generate_topology("switch:8", LinkParams{});
  for (const CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    const Collective collective =
        Collective::make(kind, fabric.npus(), 1 << 20, 2, {0, 1, 2, 3, 4, 5}, 0);
    const SynthesisResult free = synthesize_tacos(fabric, collective, SynthesisOptions{});
    ASSERT_TRUE(free.abandoned.empty());

    // Every plan keeps some link busy for at least one message: abandoned, no schedule, and
    // the text names whose time it could not beat.
    SynthesisOptions tight;
    tight.deadline = 1;
    tight.deadline_name = "ring's";
    const SynthesisResult cut = synthesize_tacos(fabric, collective, tight);
    EXPECT_NE(cut.abandoned.find(">= ring's 0.000001 us"), std::string::npos) << cut.abandoned;
    EXPECT_TRUE(cut.algorithm.transfers().empty());
    EXPECT_EQ(cut.collective_time, 1);

    // One picosecond after its time: made and chosen exactly as without a deadline.
    SynthesisOptions loose;
    loose.deadline = free.collective_time + 1;
    const SynthesisResult kept = synthesize_tacos(fabric, collective, loose);
    ASSERT_TRUE(kept.abandoned.empty());
    EXPECT_EQ(kept.collective_time, free.collective_time);
    EXPECT_EQ(rows_of(kept.algorithm), rows_of(free.algorithm));
  }
}

}  // namespace
}  // namespace tacos
