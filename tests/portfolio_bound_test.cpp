// The portfolio builds the baselines before the greedy, and the greedy's `auto` K search
// abandons a larger K once it provably cannot beat the fastest of them (request.h,
// SynthesisRun::greedy_cut_by) where that cannot change where the search goes: the schedule
// kept is the one kept without that bound.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tacos/common/units.h"
#include "tacos/synthesis/request.h"
#include "tacos/topology/generators.h"

namespace tacos {
namespace {

SynthesisRequest auto_request(const std::string& algorithm, CollectiveKind kind, Bytes size,
                              bool portfolio, std::vector<NpuId> members = {}) {
  SynthesisRequest request;
  request.algorithm = algorithm;
  request.collective = kind;
  request.size = size;
  request.members = std::move(members);
  request.auto_chunks = true;
  request.portfolio = portfolio;
  return request;
}

// fattree:8x4x2 with 50 GB/s to the hosts and 200 GB/s above, All-Gather of `size` bytes among
// hosts 0-15 (a process group: no domain relay): rhd alone, the greedy alone, the portfolio.
struct HostRuns {
  SynthesisRun rhd, alone, kept;
};
HostRuns all_gather_among_hosts(Bytes size) {
  const Topology fabric = generate_topology("fattree:8x4x2", parse_link_params("50,200", "0.5us"));
  const CollectiveKind kind = CollectiveKind::kAllGather;
  std::vector<NpuId> group;
  for (NpuId v = 0; v < 16; ++v) group.push_back(v);
  return {synthesize(fabric, auto_request("rhd", kind, size, false, group)),
          synthesize(fabric, auto_request("tacos", kind, size, false, group)),
          synthesize(fabric, auto_request("tacos", kind, size, true, group))};
}

TEST(PortfolioBound, TheFastestBaselineCutsTheGreedysLastKWithoutChangingWhatIsKept) {
  // 32 B among the hosts: K = 2 is the search's last K (one-byte chunks). rhd reaches 7.501352
  // us, the greedy 10.00076 us at K = 1; its K = 2 plan keeps a link busy past rhd's time.
  const auto [rhd, alone, kept] = all_gather_among_hosts(32);

  EXPECT_EQ(format_micros(rhd.result.collective_time), "7.501352");
  EXPECT_EQ(format_micros(alone.result.collective_time), "10.00076");
  EXPECT_TRUE(alone.greedy_cut_by.empty());
  EXPECT_NE(alone.abandoned.find("K = 2 abandoned at"), std::string::npos) << alone.abandoned;
  EXPECT_NE(alone.abandoned.find(">= best 10.00076 us"), std::string::npos) << alone.abandoned;

  EXPECT_EQ(kept.portfolio_winner, "rhd");
  EXPECT_EQ(kept.result.collective_time, rhd.result.collective_time);
  EXPECT_EQ(kept.greedy_cut_by, "rhd");
  EXPECT_NE(kept.abandoned.find(">= rhd's 7.501352 us"), std::string::npos) << kept.abandoned;
  EXPECT_EQ(kept.greedy_time, alone.result.collective_time);
}

TEST(PortfolioBound, WhereKOneIsTheOnlyKTheFastestBaselineCutsItAndTheGreedyHasNoTime) {
  // 16 B among the hosts: one-byte chunks at K = 1, so K = 2 is past the search's end. rhd
  // reaches 7.500679 us and the greedy alone 10.00038 us; in the portfolio the greedy's one plan
  // stops once a link is busy past rhd's time, and rhd's schedule is kept as before.
  const auto [rhd, alone, kept] = all_gather_among_hosts(16);
  EXPECT_EQ(format_micros(rhd.result.collective_time), "7.500679");
  EXPECT_EQ(format_micros(alone.result.collective_time), "10.00038");
  EXPECT_EQ(alone.result.algorithm.collective().chunks_per_npu(), 1);
  EXPECT_EQ(alone.greedy_time, alone.result.collective_time);

  EXPECT_EQ(kept.portfolio_winner, "rhd");
  EXPECT_EQ(kept.result.collective_time, rhd.result.collective_time);
  EXPECT_EQ(kept.result.algorithm.collective().chunks_per_npu(), 1);
  EXPECT_EQ(kept.greedy_cut_by, "rhd");
  EXPECT_FALSE(kept.greedy_time);
  EXPECT_NE(kept.abandoned.find("K = 1 abandoned at"), std::string::npos) << kept.abandoned;
  EXPECT_NE(kept.abandoned.find(">= rhd's 7.500679 us"), std::string::npos) << kept.abandoned;
}

TEST(PortfolioBound, ABaselineDoesNotEndTheGreedysSearchBeforeItsLastK) {
  // switch:8 Broadcast of 64 MiB: dbt reaches 1416.65625 us (K = 128). The greedy is far
  // behind it at small K and only passes it at K = 512; a K that cannot beat dbt must not count
  // as the end of its search there. relay (1375.59375 us at K = 128, faster than both) is left
  // out so that dbt is the fastest baseline.
  const Topology star = generate_topology("switch:8", LinkParams{});
  const CollectiveKind kind = CollectiveKind::kBroadcast;
  const SynthesisRun dbt = synthesize(star, auto_request("dbt", kind, 64LL << 20, false));
  SynthesisRun left_out;
  left_out.skipped_reason = "left out";
  const KnownRuns known{{"relay", &left_out}};
  const SynthesisRun kept = synthesize(star, auto_request("tacos", kind, 64LL << 20, true), &known);
  const SynthesisRun with_relay = synthesize(star, auto_request("tacos", kind, 64LL << 20, true));
  EXPECT_EQ(with_relay.portfolio_winner, "relay");
  EXPECT_EQ(format_micros(with_relay.result.collective_time), "1375.59375");
  EXPECT_EQ(format_micros(dbt.result.collective_time), "1416.65625");
  EXPECT_EQ(kept.portfolio_winner, "tacos");
  EXPECT_TRUE(kept.greedy_cut_by.empty());
  EXPECT_EQ(kept.result.algorithm.collective().chunks_per_npu(), 512);
  EXPECT_EQ(format_micros(kept.result.collective_time), "1401.566412");
}

}  // namespace
}  // namespace tacos
