#include "tacos/common/units.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tacos/algorithm/verify.h"
#include "tacos/collective/collective.h"
#include "tacos/common/error.h"
#include "tacos/common/link_model.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"

namespace tacos {
namespace {

TEST(Units, SizesWithDecimalAndBinarySuffixes) {
  EXPECT_EQ(parse_size("64MiB"), 64LL << 20);
  EXPECT_EQ(parse_size("1GiB"), 1LL << 30);
  EXPECT_EQ(parse_size("512KB"), 512000);
  EXPECT_EQ(parse_size("512KiB"), 512 * 1024);
  EXPECT_EQ(parse_size("1048576"), 1048576);
  EXPECT_EQ(parse_size("3B"), 3);
  EXPECT_EQ(parse_size("2GB"), 2'000'000'000);
}

TEST(Units, BadSizesThrow) {
  for (const char* bad :
       {"", "MiB", "12XB", "0", "0MiB", "-5", "1.5MiB", "99999999999999999999", "100000000TiB"})
    EXPECT_THROW(parse_size(bad), Error) << bad;
}

TEST(Units, LatencyUnits) {
  EXPECT_EQ(parse_latency("0.5us", kPicosPerMicro), 500'000);
  EXPECT_EQ(parse_latency("500ns", kPicosPerMicro), 500'000);
  EXPECT_EQ(parse_latency("1ms", kPicosPerMicro), 1'000'000'000);
  EXPECT_EQ(parse_latency("2", kPicosPerMicro), 2'000'000);  // CLI: bare = us
  EXPECT_EQ(parse_latency("50", kPicosPerNano), 50'000);     // ASTRA-sim: bare = ns
  EXPECT_EQ(parse_latency("0", kPicosPerMicro), 0);
  EXPECT_THROW(parse_latency("-1us", kPicosPerMicro), Error);
  EXPECT_THROW(parse_latency("1parsec", kPicosPerMicro), Error);
  EXPECT_THROW(parse_latency("fast", kPicosPerMicro), Error);
}

TEST(Units, BandwidthMustBePositive) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("50"), 50.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("12.5"), 12.5);
  EXPECT_THROW(parse_bandwidth("0"), Error);
  EXPECT_THROW(parse_bandwidth("-3"), Error);
  EXPECT_THROW(parse_bandwidth("x"), Error);
}

TEST(Units, SerializationTimeIsExactOrRoundedUp) {
  // 262144 B at 50 GB/s (2^30 B/s) = 4.8828125 us = 4882812.5 ps -> 4882813 ps.
  EXPECT_EQ(serialization_time(262144, 50), 4'882'813);
  // 1 GiB at 1 GB/s is exactly one second.
  EXPECT_EQ(serialization_time(1LL << 30, 1), 1'000'000'000'000);
  EXPECT_EQ(serialization_time(131072, 50), 2'441'407);
}

// The long double rule serialization_time was written as (units.cpp): a whole picosecond when
// within 10^-6 of one, else rounded up.
Time long_double_serialization(Bytes bytes, double gbps) {
  const long double exact =
      static_cast<long double>(bytes) * 1e12L / (static_cast<long double>(gbps) * kBytesPerGB);
  const long double nearest = std::nearbyint(exact);
  const Time minimum = bytes > 0 ? 1 : 0;
  if (std::fabs(exact - nearest) < 1e-6L) return std::max(minimum, static_cast<Time>(nearest));
  return std::max(minimum, static_cast<Time>(std::ceil(exact)));
}

TEST(Units, SerializationTimeIsTheLongDoubleRuleEverywhere) {
  // Its integer path (dyadic bandwidths) and its long double path give the rule's integer for
  // chunk sizes of every kind (powers of two, odd byte counts, a GiB split by 3, 7 or 1,000)
  // at datasheet bandwidths, dyadic and not.
  const double bandwidths[] = {1,   123, 12.5, 18.75, 25,      46.5625, 50,   100,       186.25,
                               300, 450, 900,  0.1,   1.0 / 3, 37.3,    1e-3, 123456.789};
  std::vector<Bytes> sizes = {1,    2,    3,     7,      47477,   48147,  96294,
                              1000, 4096, 65536, 262144, 1 << 20, 1 << 30};
  for (const Bytes whole : {Bytes{1} << 26, Bytes{1} << 30, Bytes{64'000'000}})
    for (const Bytes parts : {3, 7, 24, 1000, 1024 * 3, 4096 * 7})
      for (Bytes delta = -2; delta <= 2; ++delta) sizes.push_back(whole / parts + delta);
  // Within 10^-6 ps above a whole picosecond, which the rule keeps: 48147 B at 123 GB/s is
  // 364556.000000093 ps, 47477 B at 46.5625 GB/s is 949614.00000041 ps.
  EXPECT_EQ(serialization_time(48147, 123), 364'556);
  EXPECT_EQ(serialization_time(47477, 46.5625), 949'614);
  EXPECT_EQ(serialization_time(48147 * 2, 123), 729'112);
  int checked = 0;
  for (const double gbps : bandwidths)
    for (const Bytes bytes : sizes) {
      if (static_cast<long double>(bytes) * 1e12L / (gbps * kBytesPerGB) > 1e15L) continue;
      EXPECT_EQ(serialization_time(bytes, gbps), long_double_serialization(bytes, gbps))
          << bytes << " B at " << gbps << " GB/s";
      ++checked;
    }
  EXPECT_GT(checked, 700);
}

TEST(Units, FormatMicros) {
  EXPECT_EQ(format_micros(16'148'438), "16.148438");
  EXPECT_EQ(format_micros(2'000'000), "2");
}

TEST(Units, LinkModelNames) {
  EXPECT_EQ(parse_link_model("tacos"), LinkModel::kTacos);
  EXPECT_EQ(parse_link_model("astra"), LinkModel::kAstra);
  EXPECT_THROW(parse_link_model("ns3"), Error);
}

TEST(CollectiveModel, AllGatherChunks) {
  const Collective c = Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 2);
  EXPECT_EQ(c.num_chunks(), 8);
  EXPECT_EQ(c.chunk_bytes(), (1 << 20) / 8);
  ASSERT_EQ(c.sources(5).size(), 1u);
  EXPECT_EQ(c.sources(5)[0], 2);  // chunk 5 = NPU 2's second piece
  EXPECT_EQ(c.destinations(5).size(), 4u);
}

// Chunks are rounded up: 1,000 bytes over 8 NPUs x 64 pieces were 1-byte chunks moving 512
// bytes in all; 2-byte chunks move 1,024, never less than the buffer.
TEST(CollectiveModel, ChunksAreRoundedUpToCoverTheBuffer) {
  const Collective c = Collective::make(CollectiveKind::kAllGather, 8, 1000, 64);
  EXPECT_EQ(c.chunk_bytes(), 2);
  EXPECT_GE(c.chunk_bytes() * c.num_chunks(), c.size());
  EXPECT_EQ(Collective::make(CollectiveKind::kBroadcast, 8, 1000, 3).chunk_bytes(), 334);
  EXPECT_EQ(Collective::make(CollectiveKind::kBroadcast, 8, 999, 3).chunk_bytes(), 333);
  EXPECT_EQ(Collective::make(CollectiveKind::kAllGather, 8, 512, 64).chunk_bytes(), 1);
  EXPECT_THROW(Collective::make(CollectiveKind::kAllGather, 8, 511, 64), Error);
  // No overflow at the largest size: 2^63 - 1 over 8 rounds up without wrapping.
  EXPECT_EQ(Collective::make(CollectiveKind::kAllGather, 8, INT64_MAX, 1).chunk_bytes(),
            INT64_MAX / 8 + 1);
}

TEST(CollectiveModel, BadParameters) {
  EXPECT_THROW(Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 0), Error);
  EXPECT_THROW(Collective::make(CollectiveKind::kAllGather, 16, 10, 1), Error);
  EXPECT_THROW(Collective::make(CollectiveKind::kAllGather, 1, 1 << 20, 1), Error);
  EXPECT_THROW(parse_collective_kind("all-scatter"), Error);
  EXPECT_EQ(parse_collective_kind("all-gather"), CollectiveKind::kAllGather);
}

}  // namespace
}  // namespace tacos

namespace tacos {
namespace {

TEST(Units, BytesAlwaysTakeAPicosecond) {
  // 2 MiB at 1e20 GB/s is 2e-5 ps: still 1 ps, so a message always arrives after it was sent.
  EXPECT_EQ(serialization_time(2 << 20, 1e20), 1);
  EXPECT_EQ(serialization_time(0, 50), 0);
}

TEST(Units, TimesThatWouldOverflowAreErrors) {
  // Used to wrap around and report 1 us (--bandwidth 1e-12, --size 2^63-1).
  try {
    (void)serialization_time(16 << 20, 1e-12);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "a message of 16777216 bytes at 1e-12 GB/s takes 1.56e+10 s, more than the 1125 s "
              "one message may take (tacos times are 64-bit picoseconds): use a smaller --size "
              "or a larger --bandwidth");
  }
  EXPECT_THROW((void)serialization_time(std::numeric_limits<Bytes>::max() / 4, 50), Error);
  EXPECT_THROW((void)parse_latency("100000s", kPicosPerMicro, "--latency"), Error);
  EXPECT_EQ(parse_latency("1000s", kPicosPerMicro, "--latency"), 1'000'000'000'000'000);
}

TEST(Units, ZeroTimeLinksStillGiveVerifiedReductions) {
  // Latency 0 and 1e20 GB/s: every transfer takes 1 ps; reductions used to fail their own check.
  for (CollectiveKind kind : {CollectiveKind::kReduceScatter, CollectiveKind::kAllReduce}) {
    const Topology t = generate_topology("ring:4", parse_link_params("1e20", "0us"));
    SynthesisOptions options;
    const SynthesisResult r = synthesize_tacos(t, Collective::make(kind, 4, 64 << 20, 2), options);
    const VerifyResult v = verify_algorithm(r.algorithm, t, LinkModel::kTacos);
    EXPECT_TRUE(v.ok) << v.error;
    EXPECT_EQ(v.collective_time, r.collective_time);
    EXPECT_GT(r.collective_time, 0);
  }
}

}  // namespace
}  // namespace tacos
