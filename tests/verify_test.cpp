// verify_algorithm: hand-worked schedules on small topologies, each violation detected.
#include "tacos/algorithm/verify.h"

#include <gtest/gtest.h>

#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/collective/collective.h"
#include "tacos/common/units.h"
#include "tacos/topology/topology.h"

namespace tacos {
namespace {

// uniring:4 (links i -> i+1 mod 4) at 50 GB/s and 0.5 us; All-Gather of 1 MiB with K = 1 gives
// chunks of 262144 B: serialization 262144 / (50 * 2^30) s = 4882812.5 ps, rounded up.
constexpr Time kLat = 500000;
constexpr Time kSer = 4882813;
constexpr Time kLink = kLat + kSer;  // 5382813 ps

Topology uniring(int n, double gbps = 50, Time latency = kLat) {
  std::vector<Link> links;
  for (int i = 0; i < n; ++i) links.push_back(Link{i, (i + 1) % n, gbps, latency});
  return Topology(n, 0, links);
}

// Step s: NPU i sends chunk (i - s) mod 4 to i + 1 during [s * kLink, (s + 1) * kLink).
// Transfer index = 4 * s + i.
Algorithm ring_all_gather(int steps = 3) {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  for (int s = 0; s < steps; ++s)
    for (int i = 0; i < 4; ++i)
      a.add_transfer(i, (i + 1) % 4, s * kLink, (s + 1) * kLink, (i - s + 4) % 4);
  return a;
}

TEST(Verify, RingExampleUnits) {
  EXPECT_EQ(serialization_time(262144, 50), kSer);
  const Topology t = uniring(4);
  EXPECT_EQ(t.transfer_time(t.find_link(0, 1), 262144), kLink);
  EXPECT_EQ(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1).chunk_bytes(), 262144);
}

TEST(Verify, RingAllGatherIsValid) {
  for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra}) {
    const VerifyResult r = verify_algorithm(ring_all_gather(), uniring(4), model);
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.collective_time, 3 * kLink);
  }
}

TEST(Verify, ChunkNotYetAtSource) {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  for (int s = 0; s < 3; ++s)
    for (int i = 0; i < 4; ++i) {
      const Time shift = (s == 1 && i == 1) ? -1 : 0;  // transfer 5 starts 1 ps early
      a.add_transfer(i, (i + 1) % 4, s * kLink + shift, (s + 1) * kLink + shift, (i - s + 4) % 4);
    }
  const VerifyResult r = verify_algorithm(a, uniring(4), LinkModel::kTacos);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            "transfer 5 (1 -> 2, chunk 0) starts at 5.382812 us but chunk 0 reaches NPU 1 only at "
            "5.382813 us");
}

TEST(Verify, ChunkNeverAtSource) {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  a.add_transfer(1, 2, 0, kLink, 0);
  const VerifyResult r = verify_algorithm(a, uniring(4), LinkModel::kTacos);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "transfer 0 (1 -> 2, chunk 0) starts at 0 us but chunk 0 never reaches NPU 1");
  EXPECT_EQ(r.collective_time, kLink);
}

TEST(Verify, LinkOverlapDependsOnModel) {
  // An extra (useless) copy of chunk 0 on link 0 -> 1 right after step 2's transfer 8 has been
  // serialized: fine when the link is busy for serialization only (astra), a conflict when it
  // is busy until the arrival (tacos).
  Algorithm a = ring_all_gather();
  a.add_transfer(0, 1, 3 * kLink - kLat, 4 * kLink - kLat, 0);
  const VerifyResult tacos = verify_algorithm(a, uniring(4), LinkModel::kTacos);
  EXPECT_FALSE(tacos.ok);
  EXPECT_EQ(tacos.error,
            "link 0 -> 1 carries two transfers at once: transfer 12 (0 -> 1, chunk 0) starts at "
            "15.648439 us while transfer 8 (0 -> 1, chunk 2) keeps it busy until 16.148439 us");
  const VerifyResult astra = verify_algorithm(a, uniring(4), LinkModel::kAstra);
  EXPECT_TRUE(astra.ok) << astra.error;
  EXPECT_EQ(astra.collective_time, 4 * kLink - kLat);

  Algorithm b = ring_all_gather();
  b.add_transfer(0, 1, 3 * kLink - kLat - 1, 4 * kLink - kLat - 1, 0);
  const VerifyResult astra_b = verify_algorithm(b, uniring(4), LinkModel::kAstra);
  EXPECT_FALSE(astra_b.ok);
  EXPECT_EQ(astra_b.error,
            "link 0 -> 1 carries two transfers at once: transfer 12 (0 -> 1, chunk 0) starts at "
            "15.648438 us while transfer 8 (0 -> 1, chunk 2) keeps it busy until 15.648439 us");
}

TEST(Verify, MissingLink) {
  Algorithm a = ring_all_gather();
  a.add_transfer(0, 2, 0, kLink, 0);
  const VerifyResult r = verify_algorithm(a, uniring(4), LinkModel::kTacos);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            "transfer 12 (0 -> 2, chunk 0): the topology has no link 0 -> 2 and no path through "
            "switches");
}

TEST(Verify, DeviceOutsideTopology) {
  Algorithm a = ring_all_gather();
  a.add_transfer(3, 7, 0, kLink, 0);
  const VerifyResult r = verify_algorithm(a, uniring(4), LinkModel::kTacos);
  EXPECT_EQ(r.error,
            "transfer 12 (3 -> 7, chunk 0): device 7 is not in the topology (devices 0..3)");
}

TEST(Verify, MissingPostcondition) {
  const VerifyResult r = verify_algorithm(ring_all_gather(2), uniring(4), LinkModel::kTacos);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "chunk 0 never reaches NPU 3, one of its destinations");
  EXPECT_EQ(r.collective_time, 2 * kLink);
}

TEST(Verify, TooShortTransfer) {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  a.add_transfer(0, 1, 0, kLink - 1, 0);
  for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra}) {
    const VerifyResult r = verify_algorithm(a, uniring(4), model);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error,
              "transfer 0 (0 -> 1, chunk 0) lasts 5.382812 us (5382812 ps) but link 0 -> 1 needs "
              "5.382813 us (5382813 ps) for 262144 bytes");
  }
}

TEST(Verify, BadChunks) {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  a.add_transfer(0, 1, 0, kLink, 4);
  EXPECT_EQ(verify_algorithm(a, uniring(4), LinkModel::kTacos).error,
            "transfer 0 (0 -> 1, chunk 4): chunk 4 is not one of the collective's chunks 0..3");
  Algorithm b(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  const std::vector<ChunkId> twice = {0, 0};
  b.add_transfer(0, 1, 0, 3 * kLink, twice);
  EXPECT_EQ(verify_algorithm(b, uniring(4), LinkModel::kTacos).error,
            "transfer 0 (0 -> 1, chunks 0, 0) carries chunk 0 twice");
  Algorithm c(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1));
  c.add_transfer(0, 1, 0, kLink, std::vector<ChunkId>{});
  EXPECT_EQ(verify_algorithm(c, uniring(4), LinkModel::kTacos).error,
            "transfer 0 (0 -> 1, no chunks) carries no chunks");
}

TEST(Verify, EmptyReductionNamesTheMissingContribution) {
  Algorithm a(Collective::make(CollectiveKind::kReduceScatter, 4, 1 << 20, 1));
  const VerifyResult r = verify_algorithm(a, uniring(4), LinkModel::kTacos);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "chunk 0 at NPU 0 lacks the contribution of NPU 1");
}

TEST(Verify, TopologyMismatch) {
  const VerifyResult r = verify_algorithm(ring_all_gather(), uniring(5), LinkModel::kTacos);
  EXPECT_EQ(r.error,
            "the algorithm's collective is for a topology of 4 NPUs but the topology has 5");
}

// K = 2 on the ring: each link sends its own two pieces, then the two it received, and so on.
// Chunks of 131072 B: serialization 2441406.25 -> 2441407 ps. Message m (0..5) on link
// i -> i+1 carries piece m % 2 of NPU i - m / 2. Under tacos, message m runs
// [m * L, (m + 1) * L); under astra the link frees after serialization, so m starts at m * S
// (S > latency: the piece has arrived by then).
constexpr Time kSer2 = 2441407;
constexpr Time kLink2 = kLat + kSer2;

Algorithm ring_k2(LinkModel model) {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 2));
  a.link_model = model;
  for (int m = 0; m < 6; ++m)
    for (int i = 0; i < 4; ++i) {
      const ChunkId chunk = ((i - m / 2 + 4) % 4) * 2 + m % 2;
      const Time start = model == LinkModel::kTacos ? m * kLink2 : m * kSer2;
      a.add_transfer(i, (i + 1) % 4, start, start + kLink2, chunk);
    }
  return a;
}

TEST(Verify, PipelinedRingPerModel) {
  EXPECT_EQ(serialization_time(131072, 50), kSer2);
  const VerifyResult tacos =
      verify_algorithm(ring_k2(LinkModel::kTacos), uniring(4), LinkModel::kTacos);
  EXPECT_TRUE(tacos.ok) << tacos.error;
  EXPECT_EQ(tacos.collective_time, 6 * kLink2);
  const VerifyResult astra =
      verify_algorithm(ring_k2(LinkModel::kAstra), uniring(4), LinkModel::kAstra);
  EXPECT_TRUE(astra.ok) << astra.error;
  EXPECT_EQ(astra.collective_time, 6 * kSer2 + kLat);
  // The astra schedule overlaps messages on a link under the tacos model.
  const VerifyResult mixed =
      verify_algorithm(ring_k2(LinkModel::kAstra), uniring(4), LinkModel::kTacos);
  EXPECT_FALSE(mixed.ok);
  EXPECT_NE(mixed.error.find("carries two transfers at once"), std::string::npos) << mixed.error;
}

TEST(Verify, MultiChunkMessagesAndRelays) {
  // Scatter from NPU 0 on the ring: one message with chunks 1, 2, 3, NPU 1 relays 2 and 3,
  // NPU 2 relays 3. Latency is paid once per message.
  Algorithm a(Collective::make(CollectiveKind::kScatter, 4, 1 << 20, 1, {}, 0));
  const std::vector<ChunkId> three = {1, 2, 3}, two = {2, 3};
  const Time t3 = kLat + serialization_time(3 * 262144, 50);
  const Time t2 = kLat + serialization_time(2 * 262144, 50);
  EXPECT_EQ(t2, 500000 + 9765625);
  EXPECT_EQ(t3, 500000 + 14648438);
  a.add_transfer(0, 1, 0, t3, three);
  a.add_transfer(1, 2, t3, t3 + t2, two);
  a.add_transfer(2, 3, t3 + t2, t3 + t2 + kLink, 3);
  const VerifyResult r = verify_algorithm(a, uniring(4), LinkModel::kTacos);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.collective_time, t3 + t2 + kLink);

  Algorithm b(Collective::make(CollectiveKind::kScatter, 4, 1 << 20, 1, {}, 0));
  b.add_transfer(0, 1, 0, t3 - 1, three);
  EXPECT_EQ(verify_algorithm(b, uniring(4), LinkModel::kTacos).error,
            "transfer 0 (0 -> 1, chunks 1, 2, 3) lasts 15.148437 us (15148437 ps) but link 0 -> 1 "
            "needs 15.148438 us (15148438 ps) for 786432 bytes");
}

TEST(Verify, SubsetWithNonMemberRelays) {
  // All-Gather among NPUs 0 and 2 of the 4-ring: NPUs 1 and 3 relay.
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1, {0, 2}));
  EXPECT_EQ(a.collective().chunk_bytes(), 524288);
  const Time t = kLat + 9765625;
  a.add_transfer(0, 1, 0, t, 0);
  a.add_transfer(1, 2, t, 2 * t, 0);
  a.add_transfer(2, 3, 0, t, 1);
  a.add_transfer(3, 0, t, 2 * t, 1);
  const VerifyResult r = verify_algorithm(a, uniring(4), LinkModel::kTacos);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.collective_time, 2 * t);
}

TEST(Verify, MessagesCrossSwitches) {
  // NPUs 0 and 1 attached to switch 2: a message goes up one port and down the other,
  // store-and-forward, so it takes two hops' time; a switch never holds a chunk.
  const Topology topo(
      2, 1,
      {Link{0, 2, 50, kLat}, Link{2, 0, 50, kLat}, Link{1, 2, 50, kLat}, Link{2, 1, 50, kLat}});
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 2, 1 << 20, 1));
  const Time t = kLat + serialization_time(524288, 50);
  a.add_transfer(0, 1, 0, 2 * t, 0);
  a.add_transfer(1, 0, 0, 2 * t, 1);
  const VerifyResult r = verify_algorithm(a, topo, LinkModel::kTacos);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.collective_time, 2 * t);

  Algorithm too_fast(Collective::make(CollectiveKind::kAllGather, 2, 1 << 20, 1));
  too_fast.add_transfer(0, 1, 0, t, 0);
  too_fast.add_transfer(1, 0, 0, 2 * t, 1);
  EXPECT_FALSE(verify_algorithm(too_fast, topo, LinkModel::kTacos).ok);

  Algorithm b(Collective::make(CollectiveKind::kAllGather, 2, 1 << 20, 1));
  b.add_transfer(2, 1, 0, t, 0);
  EXPECT_EQ(
      verify_algorithm(b, topo, LinkModel::kTacos).error,
      "transfer 0 (2 -> 1, chunk 0): messages go between NPUs; switch 2 does not reduce, so it "
      "only forwards them (only a reducing switch holds data)");
}

TEST(Verify, LargeRingIsFast) {
  // 512-NPU ring All-Gather: 261632 transfers, 512 chunks.
  const int n = 512;
  const Topology topo = uniring(n);
  Algorithm a(Collective::make(CollectiveKind::kAllGather, n, Bytes{1} << 30, 1));
  const Time t = topo.transfer_time(0, a.collective().chunk_bytes());
  a.reserve(static_cast<std::size_t>(n) * (n - 1));
  for (int s = 0; s < n - 1; ++s)
    for (int i = 0; i < n; ++i) a.add_transfer(i, (i + 1) % n, s * t, (s + 1) * t, (i - s + n) % n);
  const VerifyResult r = verify_algorithm(a, topo, LinkModel::kTacos);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.collective_time, (n - 1) * t);
}

TEST(Verify, DescribeTransfer) {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 8, 1 << 20, 1));
  const std::vector<ChunkId> many = {0, 1, 2, 3, 4, 5};
  a.add_transfer(0, 1, 0, 10, many);
  EXPECT_EQ(describe_transfer(a, 0), "transfer 0 (0 -> 1, chunks 0, 1, 2, 3, ... (6 chunks))");
}

}  // namespace
}  // namespace tacos
