// The store-and-forward bound of All-Gather and Reduce-Scatter on networks of NPUs alone
// (src/bounds/link_fill_bound.cpp): values worked by hand (and a schedule that meets one), the
// per-link capacity against its closed form, where it does not apply, and no schedule tacos or a
// baseline writes beats it.
#include "../src/bounds/link_fill_bound.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "generated_topology.h"
#include "tacos/algorithm/algorithm.h"
#include "tacos/algorithm/verify.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/synthesis/synthesizer.h"
#include "test_printers.h"

namespace tacos {
namespace {

LowerBound bound(const Topology& t, CollectiveKind kind, Bytes size, int k = 1) {
  return compute_lower_bound(t, Collective::make(kind, t.npus(), size, k));
}

// One link of latency 1 whose sender holds 1 + 3 t by time t (its own bytes and three links in,
// their latency left out), values in seconds of the link's bytes. The grid's values are upper
// bounds at most a few steps above the best schedules worked out by hand.
TEST(LinkFillBound, CapacityOfOneLinkByHand) {
  const double step = 1e-3;
  const int points = 20001;  // up to t = 20
  const auto cap =
      bounds_detail::link_fill_capacity(1.0, step, points, [](double t) { return 1 + 3 * t; });
  auto at = [&](double t) { return cap[static_cast<std::size_t>(t / step + 0.5)]; };
  // Before the first latency has passed nothing arrives.
  EXPECT_EQ(at(0.5), 0);
  EXPECT_EQ(at(1.0), 0);
  // One message started at s carries min(t - 1 - s, 1 + 3 s): best at s = (t - 2) / 4, so by
  // t = 2 it carries 1 (the own bytes at s = 0) and by t = 6: 1 + 3 = 4.
  EXPECT_NEAR(at(2.0), 1.0, 4 * step);
  EXPECT_GE(at(2.0), 1.0);
  // Two messages: the first ends at e = 1 + b1 (b1 <= 1, started at 0), the second starts at s
  // >= e with 1 + 3 s in all: by t it delivers min(b1 + t - 1 - s, 1 + 3 s); with b1 = 1, s = 2,
  // t = 9: min(1 + 6, 7) = 7, against one message's 1 + 3 x 1.75 = 6.25.
  EXPECT_NEAR(at(9.0), 7.0, 8 * step);
  EXPECT_GE(at(9.0), 7.0);
  // Never more than the link's time less a latency, nor more than the sender held a latency
  // before.
  for (std::size_t i = 0; i < cap.size(); i += 97) {
    const double t = static_cast<double>(i) * step;
    EXPECT_LE(cap[i], std::max(0.0, t - 1) + 4 * step) << t;
    EXPECT_LE(cap[i], 1 + 3 * std::max(0.0, t - 1) + 4 * step) << t;
  }
  // Zero latency: the sender's holdings or the time, whichever is less.
  const auto free = bounds_detail::link_fill_capacity(0.0, 0.5, 5, [](double t) { return 1 + t; });
  EXPECT_EQ(free, (std::vector<double>{0, 0.5, 1, 1.5, 2}));
}

// fc:8, 64 MiB at 50 GB/s and 0.5 us: each NPU takes 7 chunks of 8 MiB over 7 links, each
// carrying its sender's own chunk in one message: 0.5 + 156.25 us. Every link starts at once,
// so tacos meets it exactly.
TEST(LinkFillBound, FullyConnectedIsOneMessagePerLink) {
  const Topology t = generated_from_param("fc:8");
  const LowerBound b = bound(t, CollectiveKind::kAllGather, Bytes{64} << 20);
  EXPECT_NEAR(b.lower_bound_us, 156.25, 1e-9);
  EXPECT_NEAR(b.store_and_forward_bound_us, 156.75, 0.005);
  EXPECT_LE(b.store_and_forward_bound_us, 156.75);
  SynthesisOptions options;
  options.trials = 1;
  options.threads = 1;
  const Collective c = Collective::make(CollectiveKind::kAllGather, 8, Bytes{64} << 20, 1);
  EXPECT_NEAR(to_micros(synthesize_tacos(t, c, options).collective_time), 156.75, 1e-6);
}

// ring:4, 64 MiB: each NPU lacks 3 x 16 MiB over two links, 1.5 x 312.5 us of bytes each. A
// link's first message can carry only its sender's own 16 MiB; one message with all 24 MiB
// would wait for the sender to gather (until 0.5 + 156.25 us, then 0.5 + 468.75 more), so at
// least two messages: 2 x 0.5 + 468.75 = 469.75 us, one latency above the cut bound's 468.75.
// The schedule that meets it, K = 2: every NPU sends both its chunks each way (313 us), then
// one of the two it received from each side on to the other side, one each (156.75 us).
TEST(LinkFillBound, RingOfFourByHandAndASchedule) {
  const Topology t = generated_from_param("ring:4");
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    const LowerBound b = bound(t, kind, Bytes{64} << 20, 2);
    EXPECT_NEAR(b.lower_bound_us, 468.75, 1e-9) << to_string(kind);
    EXPECT_NEAR(b.store_and_forward_bound_us, 469.75, 0.005) << to_string(kind);
    EXPECT_LE(b.store_and_forward_bound_us, 469.75) << to_string(kind);
  }
  const Collective c = Collective::make(CollectiveKind::kAllGather, 4, Bytes{64} << 20, 2);
  // The two chunks of each NPU.
  std::vector<std::vector<ChunkId>> own(4);
  for (ChunkId k = 0; k < c.num_chunks(); ++k) own[c.sources(k)[0]].push_back(k);
  ASSERT_EQ(own[0].size(), 2u);
  Algorithm a(c);
  const Time first = 313'000'000, second = first + 156'750'000;
  for (NpuId i = 0; i < 4; ++i) {
    const NpuId right = (i + 1) % 4, left = (i + 3) % 4;
    a.add_transfer(i, right, 0, first, own[i]);
    a.add_transfer(i, left, 0, first, own[i]);
    // On to the right the first chunk of the left neighbour; to the left the second of the
    // right one: the NPU two away gets one of each.
    a.add_transfer(i, right, first, second, own[left][0]);
    a.add_transfer(i, left, first, second, own[right][1]);
  }
  a.collective_time = second;
  const VerifyResult verified = verify_algorithm(a, t, LinkModel::kTacos);
  ASSERT_TRUE(verified.ok) << verified.error;
  EXPECT_EQ(simulate(a, t, LinkModel::kTacos).collective_time, second);
}

// torus2d:64x64 All-Gather, 64 MiB: 312.42 us of bytes per link in, six messages at least:
// 315.73 us. `bucket` at K = 2 takes 32 steps of one 8 KiB chunk (0.5 + 0.152588 us) along the
// first dimension's ring, then 31 blocks of 64 chunks (0.5 + 9.765625 us) and the antipode's
// half (0.5 + 4.882813 us) along the second's: 344.5 us, 1.091 x this bound (1.103 x the cut
// bound): the 1.10.
TEST(LinkFillBound, LargeTorusAllGather) {
  const LowerBound b =
      bound(generated_from_param("torus2d:64x64"), CollectiveKind::kAllGather, Bytes{64} << 20);
  EXPECT_NEAR(b.lower_bound_us, 312.423706, 1e-6);
  EXPECT_NEAR(b.store_and_forward_bound_us, 315.7346, 1e-3);
  const double bucket_us = 32 * (0.5 + 0.152588) + 31 * (0.5 + 9.765625) + (0.5 + 4.882813);
  EXPECT_NEAR(bucket_us, 344.5, 1e-3);
  EXPECT_LE(bucket_us / b.store_and_forward_bound_us, 1.10);
  EXPECT_GT(bucket_us / b.lower_bound_us, 1.10);
}

TEST(LinkFillBound, NotWhereItDoesNotHold) {
  // Other collectives (All-Reduce has the gossip bound and the two-member relay bound of
  // rooted_relay_bound_test; All-to-All, Gather, Scatter none).
  for (CollectiveKind kind :
       {CollectiveKind::kAllToAll, CollectiveKind::kGather, CollectiveKind::kScatter})
    EXPECT_EQ(
        bound(generated_from_param("torus2d:4x4"), kind, Bytes{1} << 20).store_and_forward_bound_us,
        0)
        << to_string(kind);
  EXPECT_EQ(bounds_detail::link_fill_bound_seconds(
                generated_from_param("torus2d:4x4"),
                Collective::make(CollectiveKind::kAllReduce, 16, Bytes{1} << 20, 1)),
            0);
  // Through switches: the switch-by-switch argument (store_and_forward_bound.cpp) instead.
  const Topology sw = generated_from_param("switch:8");
  EXPECT_EQ(bounds_detail::link_fill_bound_seconds(
                sw, Collective::make(CollectiveKind::kAllGather, 8, Bytes{1} << 20, 1)),
            0);
}

// Links one way only, of mixed speeds: Reduce-Scatter reads each NPU's links out (the
// All-Gather on the reversed links), All-Gather its links in; tacos beats neither.
TEST(LinkFillBound, OneWayLinksOfMixedSpeeds) {
  // A ring 0 -> 1 -> 2 -> 3 -> 0 at 50 GB/s, a slow chord 0 -> 2 and a way back 2 -> 1.
  std::vector<Link> links{{0, 1, 50, 500000}, {1, 2, 50, 500000}, {2, 3, 50, 500000},
                          {3, 0, 50, 500000}, {0, 2, 10, 500000}, {2, 1, 50, 500000}};
  const Topology t(4, 0, links, "one-way");
  SynthesisOptions options;
  options.trials = 2;
  options.threads = 1;
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter})
    for (int k : {1, 4}) {
      const Collective c = Collective::make(kind, 4, Bytes{8} << 20, k);
      const LowerBound b = compute_lower_bound(t, c);
      EXPECT_GT(b.store_and_forward_bound_us, b.bandwidth_bound_us) << to_string(kind);
      EXPECT_GE(to_micros(synthesize_tacos(t, c, options).collective_time),
                b.store_and_forward_bound_us)
          << to_string(kind) << " K=" << k;
    }
}

// Every schedule tacos writes, and every baseline's, takes at least the bound, which is above
// the cut bound everywhere here.
class LinkFillSchedules : public ::testing::TestWithParam<std::string> {};

TEST_P(LinkFillSchedules, NoScheduleBeatsTheBound) {
  const Topology t = generated_from_param(GetParam());
  int checked = 0;
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter})
    for (Bytes size : {Bytes{1} << 20, Bytes{64} << 20})
      for (int k : {1, 4}) {
        const Collective c = Collective::make(kind, t.npus(), size, k);
        const LowerBound b = compute_lower_bound(t, c);
        EXPECT_GT(b.store_and_forward_bound_us, b.bandwidth_bound_us) << to_string(kind);
        const double floor_us = b.store_and_forward_bound_us;
        SynthesisOptions options;
        options.trials = 2;
        options.threads = 1;
        EXPECT_GE(to_micros(synthesize_tacos(t, c, options).collective_time), floor_us)
            << to_string(kind) << " K=" << k;
        for (Baseline baseline : {Baseline::kRing, Baseline::kDirect, Baseline::kRhd,
                                  Baseline::kBiring, Baseline::kBucket, Baseline::kHierarchical}) {
          if (baseline_inapplicable(baseline, t, c)) continue;
          const Algorithm a = synthesize_baseline(baseline, t, c, LinkModel::kTacos);
          EXPECT_GE(to_micros(a.collective_time), floor_us)
              << to_string(baseline) << " " << to_string(kind) << " K=" << k;
          ++checked;
        }
      }
  // ring, direct and bucket at least, both collectives, sizes and K.
  EXPECT_GE(checked, 3 * 2 * 2 * 2);
}

INSTANTIATE_TEST_SUITE_P(Networks, LinkFillSchedules,
                         ::testing::Values("ring:4", "ring:8", "fc:8", "torus2d:4x4", "mesh2d:4x4",
                                           "mesh2d:3x5|50,75", "hypercube:16", "torus3d:3x3x3",
                                           "torus2d:4x4|10|5us", "dgx1", "ring:4,ring:4"),
                         [](const auto& info) { return tacos_test::test_name(info.param); });

}  // namespace
}  // namespace tacos
