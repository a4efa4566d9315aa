// check_transfer: one check of a transfer's devices, route and chunks, each problem in the
// words verify, simulate and the Chakra writer report it with.
#include "../src/algorithm/transfer_check.h"

#include <gtest/gtest.h>

#include <vector>

#include "tacos/collective/collective.h"
#include "tacos/common/error.h"
#include "tacos/io/msccl_xml.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {
namespace {

// uniring:4 (links i -> i+1 mod 4) and NPUs 0, 1 behind switch 2.
Topology uniring4() {
  std::vector<Link> links;
  for (int i = 0; i < 4; ++i) links.push_back(Link{i, (i + 1) % 4, 50, 500000});
  return Topology(4, 0, links);
}
Topology switch2() {
  return Topology(2, 1,
                  {Link{0, 2, 50, 500000}, Link{2, 0, 50, 500000}, Link{1, 2, 50, 500000},
                   Link{2, 1, 50, 500000}});
}

Algorithm all_gather(int npus) {
  return Algorithm(Collective::make(CollectiveKind::kAllGather, npus, 1 << 20, 1));
}

TEST(TransferCheck, SoundTransferGivesItsRoute) {
  const Topology ring = uniring4();
  Algorithm a = all_gather(4);
  a.add_transfer(1, 2, 0, 1, 1);
  const TransferCheck check = check_transfer(a, ring, 0);
  EXPECT_TRUE(check.ok()) << check.error;
  ASSERT_EQ(check.route.size(), 1u);
  EXPECT_EQ(check.route[0], ring.find_link(1, 2));

  const Topology star = switch2();
  Algorithm b = all_gather(2);
  b.add_transfer(0, 1, 0, 1, 0);
  const TransferCheck through = check_transfer(b, star, 0);
  EXPECT_TRUE(through.ok()) << through.error;
  EXPECT_EQ(through.route.size(), 2u);  // up to the switch, then down
}

TEST(TransferCheck, EachProblemInOneLine) {
  const Topology ring = uniring4();
  Algorithm a = all_gather(4);
  a.add_transfer(3, 7, 0, 1, 0);
  a.add_transfer(0, 2, 0, 1, 0);
  a.add_transfer(1, 1, 0, 1, 0);
  a.add_transfer(0, 1, 0, 1, 4);
  a.add_transfer(0, 1, 0, 1, std::vector<ChunkId>{});
  EXPECT_EQ(check_transfer(a, ring, 0).error,
            "transfer 0 (3 -> 7, chunk 0): device 7 is not in the topology (devices 0..3)");
  EXPECT_EQ(check_transfer(a, ring, 1).error,
            "transfer 1 (0 -> 2, chunk 0): the topology has no link 0 -> 2 and no path through "
            "switches");
  EXPECT_EQ(check_transfer(a, ring, 2).error, "transfer 2 (1 -> 1, chunk 0) sends to itself");
  EXPECT_EQ(check_transfer(a, ring, 3).error,
            "transfer 3 (0 -> 1, chunk 4): chunk 4 is not one of the collective's chunks 0..3");
  EXPECT_EQ(check_transfer(a, ring, 4).error, "transfer 4 (0 -> 1, no chunks) carries no chunks");
  EXPECT_TRUE(check_transfer(a, ring, 3).route.empty());
}

TEST(TransferCheck, SwitchesOnlyForward) {
  Algorithm a = all_gather(2);
  a.add_transfer(2, 1, 0, 1, 0);
  EXPECT_EQ(
      check_transfer(a, switch2(), 0).error,
      "transfer 0 (2 -> 1, chunk 0): messages go between NPUs; switch 2 does not reduce, so it "
      "only forwards them (only a reducing switch holds data)");
}

TEST(TransferCheck, ChunksAloneWithoutATopology) {
  Algorithm a = all_gather(4);
  a.add_transfer(0, 2, 0, 1, 1);  // no link on uniring:4, but no topology is asked here
  a.add_transfer(0, 1, 0, 1, 4);
  a.add_transfer(0, 1, 0, 1, std::vector<ChunkId>{});
  EXPECT_EQ(check_transfer_chunks(a, 0), "");
  EXPECT_EQ(check_transfer_chunks(a, 1),
            "transfer 1 (0 -> 1, chunk 4): chunk 4 is not one of the collective's chunks 0..3");
  EXPECT_EQ(check_transfer_chunks(a, 2), "transfer 2 (0 -> 1, no chunks) carries no chunks");
}

// The MSCCL writer words a transfer's problems as check_transfer does, with or without the
// topology.
TEST(TransferCheck, MscclWriterReportsInTheSameWords) {
  auto error = [](const auto& write) -> std::string {
    try {
      write();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  Algorithm a = all_gather(4);
  a.add_transfer(0, 2, 0, 1, 0);
  const std::string no_route = error([&] { algorithm_to_msccl_xml(a, uniring4(), "x"); });
  EXPECT_NE(no_route.find("transfer 0 (0 -> 2, chunk 0): the topology has no link 0 -> 2 and no "
                          "path through switches"),
            std::string::npos)
      << no_route;
  Algorithm b = all_gather(4);
  b.add_transfer(0, 1, 0, 1, 7);
  const std::string bad_chunk = error([&] { algorithm_to_msccl_xml(b, "x"); });
  EXPECT_NE(bad_chunk.find(
                "transfer 0 (0 -> 1, chunk 7): chunk 7 is not one of the collective's chunks 0..3"),
            std::string::npos)
      << bad_chunk;
}

}  // namespace
}  // namespace tacos::detail
