// verify_algorithm on reduction collectives (partial sums): hand-built ring schedules, each
// violation named, then every synthesized reduction on a set of topologies.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/algorithm/verify.h"
#include "tacos/collective/collective.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"
#include "tacos/topology/topology.h"
#include "test_scale.h"

namespace tacos {
namespace {

// 50 GB/s, 0.5 us; chunks of 262144 B take kLink on a link.
constexpr Time kLat = 500000;
constexpr Time kSer = 4882813;
constexpr Time kLink = kLat + kSer;  // 5382813 ps

Topology uniring(int n) {
  std::vector<Link> links;
  for (int i = 0; i < n; ++i) links.push_back(Link{i, (i + 1) % n, 50, kLat});
  return Topology(n, 0, links);
}

Topology biring(int n) {
  std::vector<Link> links;
  for (int i = 0; i < n; ++i) {
    links.push_back(Link{i, (i + 1) % n, 50, kLat});
    links.push_back(Link{(i + 1) % n, i, 50, kLat});
  }
  return Topology(n, 0, links);
}

// Ring reduce-scatter on uniring:4 (K = 1, chunk c ends at NPU c): step s = 0..2, NPU i adds its
// partial of chunk (i - s - 1) mod 4 into NPU i + 1. Transfer index = 4 * s + i.
void add_ring_reduce_scatter(Algorithm& a, int skip = -1) {
  for (int s = 0; s < 3; ++s)
    for (int i = 0; i < 4; ++i)
      if (4 * s + i != skip)
        a.add_transfer(i, (i + 1) % 4, s * kLink, (s + 1) * kLink, (i - s - 1 + 8) % 4, true);
}

// Then the ring all-gather: step s = 3..5, NPU i copies chunk (i - s + 3) mod 4 to NPU i + 1.
void add_ring_all_gather(Algorithm& a) {
  for (int s = 3; s < 6; ++s)
    for (int i = 0; i < 4; ++i)
      a.add_transfer(i, (i + 1) % 4, s * kLink, (s + 1) * kLink, (i - s + 3 + 8) % 4);
}

Collective make(CollectiveKind kind, int npus, Bytes size, int k = 1,
                std::vector<NpuId> members = {}, NpuId root = 0) {
  return Collective::make(kind, npus, size, k, std::move(members), root);
}

TEST(VerifyReduction, RingReduceScatter) {
  Algorithm a(make(CollectiveKind::kReduceScatter, 4, 1 << 20));
  ASSERT_EQ(a.collective().chunk_bytes(), 262144);
  add_ring_reduce_scatter(a);
  for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra}) {
    const VerifyResult r = verify_algorithm(a, uniring(4), model);
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.collective_time, 3 * kLink);
  }
}

TEST(VerifyReduction, RingAllReduce) {
  Algorithm a(make(CollectiveKind::kAllReduce, 4, 1 << 20));
  add_ring_reduce_scatter(a);
  add_ring_all_gather(a);
  const VerifyResult r = verify_algorithm(a, uniring(4), LinkModel::kTacos);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.collective_time, 6 * kLink);
  // Without the all-gather the chunks are reduced at one NPU only.
  Algorithm b(make(CollectiveKind::kAllReduce, 4, 1 << 20));
  add_ring_reduce_scatter(b);
  EXPECT_EQ(verify_algorithm(b, uniring(4), LinkModel::kTacos).error,
            "chunk 0 at NPU 1 lacks the contribution of NPU 0");
}

TEST(VerifyReduction, DoubleCountIsRejected) {
  // Reduce to NPU 0 on the bidirectional 4-ring: NPU 2's partial goes both ways round.
  Algorithm a(make(CollectiveKind::kReduce, 4, 262144, 1, {}, 0));
  a.add_transfer(2, 1, 0, kLink, 0, true);
  a.add_transfer(2, 3, 0, kLink, 0, true);
  a.add_transfer(1, 0, kLink, 2 * kLink, 0, true);
  a.add_transfer(3, 0, kLink, 2 * kLink, 0, true);
  const VerifyResult r = verify_algorithm(a, biring(4), LinkModel::kTacos);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            "chunk 0: NPU 0 receives NPU 2's contribution twice (transfer 3 (3 -> 0, chunk 0) at "
            "10.765626 us)");
  EXPECT_EQ(r.collective_time, 2 * kLink);

  // Without the second path it is a valid reduce.
  Algorithm b(make(CollectiveKind::kReduce, 4, 262144, 1, {}, 0));
  b.add_transfer(2, 1, 0, kLink, 0, true);
  b.add_transfer(1, 0, kLink, 2 * kLink, 0, true);
  b.add_transfer(3, 0, 0, kLink, 0, true);
  const VerifyResult ok = verify_algorithm(b, biring(4), LinkModel::kTacos);
  EXPECT_TRUE(ok.ok) << ok.error;

  // Sending the same partial twice on one path counts it twice as well.
  Algorithm c = b;
  c.add_transfer(3, 0, kLink, 2 * kLink, 0, true);
  EXPECT_EQ(verify_algorithm(c, biring(4), LinkModel::kTacos).error,
            "chunk 0: NPU 0 receives NPU 3's contribution twice (transfer 3 (3 -> 0, chunk 0) at "
            "10.765626 us)");
}

TEST(VerifyReduction, MissingContributionIsRejected) {
  // Drop transfer 1 (NPU 1 adds its partial of chunk 0 into NPU 2): NPU 2 still sends its own.
  Algorithm a(make(CollectiveKind::kReduceScatter, 4, 1 << 20));
  add_ring_reduce_scatter(a, /*skip=*/1);
  const VerifyResult r = verify_algorithm(a, uniring(4), LinkModel::kTacos);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "chunk 0 at NPU 0 lacks the contribution of NPU 1");

  // A send that starts 1 ps before a partial arrives carries the partial without it.
  Algorithm b(make(CollectiveKind::kReduce, 4, 262144, 1, {}, 0));
  b.add_transfer(1, 2, 0, kLink, 0, true);
  b.add_transfer(2, 3, kLink - 1, 2 * kLink - 1, 0, true);
  b.add_transfer(3, 0, 2 * kLink - 1, 3 * kLink - 1, 0, true);
  EXPECT_EQ(verify_algorithm(b, uniring(4), LinkModel::kTacos).error,
            "chunk 0 at NPU 0 lacks the contribution of NPU 1");
  // At the same time it does see it (arrivals before starts).
  Algorithm c(make(CollectiveKind::kReduce, 4, 262144, 1, {}, 0));
  c.add_transfer(1, 2, 0, kLink, 0, true);
  c.add_transfer(2, 3, kLink, 2 * kLink, 0, true);
  c.add_transfer(3, 0, 2 * kLink, 3 * kLink, 0, true);
  const VerifyResult rc = verify_algorithm(c, uniring(4), LinkModel::kTacos);
  EXPECT_TRUE(rc.ok) << rc.error;
  EXPECT_EQ(rc.collective_time, 3 * kLink);
}

TEST(VerifyReduction, CopyOfAPartialIsRejected) {
  // All-reduce on the bidirectional ring; the ring schedule runs on the links i -> i + 1. NPU 3
  // then copies its partial {1, 2, 3} of chunk 0 to NPU 2 at 5L, before the finished chunk 0
  // reaches NPU 3 (6L): NPU 2's finished copy (5L) is replaced by that partial.
  Algorithm a(make(CollectiveKind::kAllReduce, 4, 1 << 20));
  add_ring_reduce_scatter(a);
  add_ring_all_gather(a);
  ASSERT_TRUE(verify_algorithm(a, biring(4), LinkModel::kTacos).ok);
  a.add_transfer(3, 2, 5 * kLink, 6 * kLink, 0);
  const VerifyResult r = verify_algorithm(a, biring(4), LinkModel::kTacos);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "chunk 0 at NPU 2 lacks the contribution of NPU 0");

  // The same copy sent once NPU 3 holds the finished chunk is harmless.
  Algorithm b(make(CollectiveKind::kAllReduce, 4, 1 << 20));
  add_ring_reduce_scatter(b);
  add_ring_all_gather(b);
  b.add_transfer(3, 2, 6 * kLink, 7 * kLink, 0);
  const VerifyResult rb = verify_algorithm(b, biring(4), LinkModel::kTacos);
  EXPECT_TRUE(rb.ok) << rb.error;
  EXPECT_EQ(rb.collective_time, 7 * kLink);

  // A partial sent as a reduction into a finished chunk counts contributions twice.
  Algorithm c(make(CollectiveKind::kAllReduce, 4, 1 << 20));
  add_ring_reduce_scatter(c);
  add_ring_all_gather(c);
  c.add_transfer(3, 2, 6 * kLink, 7 * kLink, 0, true);
  EXPECT_EQ(verify_algorithm(c, biring(4), LinkModel::kTacos).error,
            "chunk 0: NPU 2 receives NPU 0's contribution twice (transfer 24 (3 -> 2, chunk 0) "
            "at 37.679691 us)");
}

TEST(VerifyReduction, ReduceToRootOnUniring) {
  for (NpuId root : {0, 2}) {
    // K = 2: the two pieces follow each other along root+1 -> root+2 -> root+3 -> root.
    Algorithm a(make(CollectiveKind::kReduce, 4, 524288, 2, {}, root));
    ASSERT_EQ(a.collective().chunk_bytes(), 262144);
    for (int hop = 0; hop < 3; ++hop)
      for (ChunkId piece = 0; piece < 2; ++piece) {
        const Time start = (hop + piece) * kLink;
        a.add_transfer((root + 1 + hop) % 4, (root + 2 + hop) % 4, start, start + kLink, piece,
                       true);
      }
    const VerifyResult r = verify_algorithm(a, uniring(4), LinkModel::kTacos);
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.collective_time, 4 * kLink);
  }
  // The reduction ends at NPU 0, not at the root NPU 2.
  Algorithm b(make(CollectiveKind::kReduce, 4, 262144, 1, {}, 2));
  b.add_transfer(1, 2, 0, kLink, 0, true);
  b.add_transfer(2, 3, kLink, 2 * kLink, 0, true);
  b.add_transfer(3, 0, 2 * kLink, 3 * kLink, 0, true);
  EXPECT_EQ(verify_algorithm(b, uniring(4), LinkModel::kTacos).error,
            "chunk 0 at NPU 2 lacks the contribution of NPU 0");
}

TEST(VerifyReduction, NonMemberRelays) {
  // Members {0, 2} of the 4-ring; NPUs 1 and 3 hold nothing and relay. Chunks of 524288 B.
  const Time t = kLat + 9765625;
  auto reduce_scatter = [&](Algorithm& a) {
    a.add_transfer(2, 3, 0, t, 0, true);  // chunk 0 ends at NPU 0
    a.add_transfer(3, 0, t, 2 * t, 0, true);
    a.add_transfer(0, 1, 0, t, 1, true);  // chunk 1 ends at NPU 2
    a.add_transfer(1, 2, t, 2 * t, 1, true);
  };
  Algorithm rs(make(CollectiveKind::kReduceScatter, 4, 1 << 20, 1, {0, 2}));
  ASSERT_EQ(rs.collective().chunk_bytes(), 524288);
  reduce_scatter(rs);
  const VerifyResult r = verify_algorithm(rs, uniring(4), LinkModel::kTacos);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.collective_time, 2 * t);

  Algorithm ar(make(CollectiveKind::kAllReduce, 4, 1 << 20, 1, {0, 2}));
  reduce_scatter(ar);
  ar.add_transfer(0, 1, 2 * t, 3 * t, 0);
  ar.add_transfer(1, 2, 3 * t, 4 * t, 0);
  ar.add_transfer(2, 3, 2 * t, 3 * t, 1);
  ar.add_transfer(3, 0, 3 * t, 4 * t, 1);
  const VerifyResult rar = verify_algorithm(ar, uniring(4), LinkModel::kTacos);
  EXPECT_TRUE(rar.ok) << rar.error;
  EXPECT_EQ(rar.collective_time, 4 * t);

  // A relay that forwards before anything reached it sends nothing.
  Algorithm early(make(CollectiveKind::kReduceScatter, 4, 1 << 20, 1, {0, 2}));
  early.add_transfer(2, 3, 0, t, 0, true);
  early.add_transfer(3, 0, 0, t, 0, true);
  EXPECT_EQ(verify_algorithm(early, uniring(4), LinkModel::kTacos).error,
            "transfer 1 (3 -> 0, chunk 0) starts at 0 us and sends chunk 0 from NPU 3, which holds "
            "no partial of it (the first one reaches NPU 3 at 10.265625 us)");
  Algorithm never(make(CollectiveKind::kReduceScatter, 4, 1 << 20, 1, {0, 2}));
  never.add_transfer(1, 2, t, 2 * t, 1);
  EXPECT_EQ(verify_algorithm(never, uniring(4), LinkModel::kTacos).error,
            "transfer 0 (1 -> 2, chunk 1) starts at 10.265625 us and sends chunk 1 from NPU 1, "
            "which holds no partial of it (none ever reaches NPU 1)");
}

TEST(VerifyReduction, MultiChunkMessagesThroughASwitch) {
  // NPUs 0 and 1 on switch 2; reduce-scatter with K = 2 (chunks 0, 1 end at NPU 0; 2, 3 at 1),
  // two chunks per message, each message up one port and down the other.
  const Topology topo(
      2, 1,
      {Link{0, 2, 50, kLat}, Link{2, 0, 50, kLat}, Link{1, 2, 50, kLat}, Link{2, 1, 50, kLat}});
  Algorithm a(make(CollectiveKind::kReduceScatter, 2, 1 << 20, 2));
  const Time t = kLat + serialization_time(2 * a.collective().chunk_bytes(), 50);
  const std::vector<ChunkId> to0 = {0, 1}, to1 = {2, 3};
  a.add_transfer(1, 0, 0, 2 * t, to0, true);
  a.add_transfer(0, 1, 0, 2 * t, to1, true);
  const VerifyResult r = verify_algorithm(a, topo, LinkModel::kAstra);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.collective_time, 2 * t);
  // NPU 1's partial sent twice: NPU 0 counts it twice.
  Algorithm b(make(CollectiveKind::kReduceScatter, 2, 1 << 20, 2));
  b.add_transfer(1, 0, 0, 2 * t, to0, true);
  b.add_transfer(1, 0, 2 * t, 4 * t, to0, true);
  b.add_transfer(0, 1, 0, 2 * t, to1, true);
  EXPECT_EQ(verify_algorithm(b, topo, LinkModel::kAstra).error,
            "chunk 0: NPU 0 receives NPU 1's contribution twice (transfer 1 (1 -> 0, chunks 0, 1) "
            "at " +
                format_micros(4 * t) + " us)");
}

TEST(VerifyReduction, ChecksStillAppliedToReductions) {
  Algorithm a(make(CollectiveKind::kReduceScatter, 4, 1 << 20));
  add_ring_reduce_scatter(a);
  a.add_transfer(1, 2, 2 * kLink + 1, 3 * kLink + 1, 1);  // overlaps transfer 9 on 1 -> 2
  EXPECT_EQ(verify_algorithm(a, uniring(4), LinkModel::kTacos).error,
            "link 1 -> 2 carries two transfers at once: transfer 12 (1 -> 2, chunk 1) starts at "
            "10.765627 us while transfer 9 (1 -> 2, chunk 2) keeps it busy until 16.148439 us");
  Algorithm b(make(CollectiveKind::kReduceScatter, 4, 1 << 20));
  b.add_transfer(0, 2, 0, kLink, 1, true);
  EXPECT_EQ(verify_algorithm(b, uniring(4), LinkModel::kTacos).error,
            "transfer 0 (0 -> 2, chunk 1): the topology has no link 0 -> 2 and no path through "
            "switches");
  Algorithm c(make(CollectiveKind::kReduceScatter, 4, 1 << 20));
  c.add_transfer(0, 1, 0, kLink - 1, 1, true);
  EXPECT_EQ(verify_algorithm(c, uniring(4), LinkModel::kTacos).error,
            "transfer 0 (0 -> 1, chunk 1) lasts 5.382812 us (5382812 ps) but link 0 -> 1 needs "
            "5.382813 us (5382813 ps) for 262144 bytes");
}

TEST(VerifyReduction, ReduceTransferInCopyCollective) {
  Algorithm a(make(CollectiveKind::kAllGather, 4, 1 << 20));
  a.add_transfer(0, 1, 0, kLink, 0, true);
  EXPECT_EQ(verify_algorithm(a, uniring(4), LinkModel::kTacos).error,
            "transfer 0 (0 -> 1, chunk 0) is a reduction (a partial-sum transfer) but all-gather "
            "is not a reduction collective");
}

TEST(VerifyReduction, LargeRingIsFast) {
  // Ring reduce-scatter on 1024 NPUs: 1047552 transfers, 1024-bit contributor sets; then the
  // all-reduce (twice the transfers).
  const int n = 1024;
  const Topology topo = uniring(n);
  for (CollectiveKind kind : {CollectiveKind::kReduceScatter, CollectiveKind::kAllReduce}) {
    Algorithm a(make(kind, n, Bytes{1} << 30));
    const Time t = topo.transfer_time(0, a.collective().chunk_bytes());
    const int steps = kind == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1;
    a.reserve(static_cast<std::size_t>(n) * steps);
    for (int s = 0; s < steps; ++s)
      for (int i = 0; i < n; ++i) {
        const bool reduce = s < n - 1;
        const int chunk = reduce ? (i - s - 1 + 2 * n) % n : (i - (s - n + 1) + 2 * n) % n;
        a.add_transfer(i, (i + 1) % n, s * t, (s + 1) * t, chunk, reduce);
      }
    const auto begin = std::chrono::steady_clock::now();
    const VerifyResult r = verify_algorithm(a, topo, LinkModel::kTacos);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.collective_time, steps * t);
    EXPECT_LT(seconds, 10.0 * tacos_test::kSpeedLimitFactor) << to_string(kind);
    RecordProperty(to_string(kind) + "_seconds", std::to_string(seconds));
  }
}

// Every reduction the synthesizer makes verifies.
struct SynthCase {
  std::string spec, bandwidth;
  std::vector<NpuId> members;
};

std::string name(const SynthCase& c) {
  std::string text = c.spec + " bw " + c.bandwidth;
  if (!c.members.empty()) text += " members";
  for (NpuId m : c.members) {
    text += ' ';
    text += std::to_string(m);
  }
  return text;
}

TEST(VerifyReduction, SynthesizedReductionsVerify) {
  const std::vector<SynthCase> cases = {
      {"ring:8", "50", {}},
      {"uniring:4", "50", {}},
      {"mesh2d:4x4", "50", {}},
      {"torus2d:4x4", "50", {}},
      {"switch:8", "50", {}},
      {"fc:8", "50", {}},
      {"hypercube:16", "50", {}},
      {"mesh2d:4x4", "50,25", {}},
      {"ring:4,switch:4", "50", {}},
      {"torus2d:4x4", "50", {0, 1, 2, 3}},
      {"mesh2d:4x4", "50", {0, 5, 10, 15}},
  };
  struct Kind {
    CollectiveKind kind;
    AllReduceMode mode;
  };
  const std::vector<Kind> kinds = {
      {CollectiveKind::kReduceScatter, AllReduceMode::kPipelined},
      {CollectiveKind::kAllReduce, AllReduceMode::kPipelined},
      {CollectiveKind::kAllReduce, AllReduceMode::kSequential},
      {CollectiveKind::kReduce, AllReduceMode::kPipelined},
  };
  for (const SynthCase& c : cases) {
    const Topology topology =
        generate_topology(c.spec, parse_link_params(c.bandwidth, "0.5us")).unwind_switches();
    for (const Kind& k : kinds)
      for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra})
        for (int chunks_per_npu : {1, 2})
          for (std::uint64_t seed : {1, 7}) {
            const NpuId root = c.members.empty() ? 1 : c.members.back();
            const Collective collective =
                Collective::make(k.kind, topology.npus(), 1 << 20, chunks_per_npu, c.members, root);
            SynthesisOptions options;
            options.seed = seed;
            options.threads = 1;
            options.link_model = model;
            options.all_reduce_mode = k.mode;
            const SynthesisResult result = synthesize_tacos(topology, collective, options);
            const VerifyResult r = verify_algorithm(result.algorithm, topology, model);
            const std::string what = to_string(k.kind) + " (" + to_string(k.mode) + ") on " +
                                     name(c) + ", " + to_string(model) + ", K " +
                                     std::to_string(chunks_per_npu) + ", seed " +
                                     std::to_string(seed);
            EXPECT_TRUE(r.ok) << what << ": " << r.error;
            EXPECT_EQ(r.collective_time, result.collective_time) << what;
            std::size_t reduces = 0;
            for (const Transfer& t : result.algorithm.transfers()) reduces += t.reduce ? 1 : 0;
            EXPECT_GT(reduces, 0u) << what;
          }
  }
}

// Dropping any one transfer of a synthesized reduce-scatter loses a contribution.
TEST(VerifyReduction, SynthesizedReduceScatterMinusOneTransferFails) {
  const Topology topology = generate_topology("mesh2d:3x3", parse_link_params("50", "0.5us"));
  const Collective collective =
      Collective::make(CollectiveKind::kReduceScatter, topology.npus(), 1 << 20, 1);
  SynthesisOptions options;
  options.threads = 1;
  const Algorithm full = synthesize_tacos(topology, collective, options).algorithm;
  ASSERT_TRUE(verify_algorithm(full, topology, LinkModel::kTacos).ok);
  const auto& transfers = full.transfers();
  for (std::size_t drop = 0; drop < transfers.size(); ++drop) {
    Algorithm a(collective);
    for (std::size_t i = 0; i < transfers.size(); ++i)
      if (i != drop) {
        const Transfer& t = transfers[i];
        a.add_transfer(t.src, t.dst, t.start, t.end, full.chunks(t), t.reduce);
      }
    const VerifyResult r = verify_algorithm(a, topology, LinkModel::kTacos);
    EXPECT_FALSE(r.ok) << "without " << describe_transfer(full, drop);
    EXPECT_NE(r.error.find("lacks the contribution of NPU"), std::string::npos) << r.error;
  }
}

}  // namespace
}  // namespace tacos
