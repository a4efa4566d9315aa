// All-Gather and Broadcast on switch fabrics as a two-level relay with messages sized per port
// (src/synthesis/domain_relay.h).
#include "../src/synthesis/domain_relay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "generated_topology.h"
#include "tacos/algorithm/verify.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/units.h"
#include "tacos/simulation/simulator.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"

namespace tacos {
namespace {

Collective make(CollectiveKind kind, const Topology& topology, Bytes size, int k) {
  return Collective::make(kind, topology.npus(), size, k, {}, 0);
}

Topology dgx(const std::string& spec) { return generate_topology(spec, LinkParams{}); }

// switch:2 at 1 GB/s (2^30 B/s) with 500 us per port, All-Gather of 2 MiB in K = 4 chunks of
// 256 KiB: a chunk serializes in 2^18 / 2^30 s = 244.140625 us. One chunk per message, under the
// tacos model each port is busy 744.140625 us per message and the second port trails the first
// by one message: 5 x 744.140625 = 3720.703125 us. All four in one message: 2 x (500 +
// 976.5625) = 2953.125 us, which the relay sends (its serialization, 976 us, is within 16 x
// the route's 1000 us of latency). Under the astra model latency holds no port, so one chunk per
// message pipelines: 5 x 244.140625 + 2 x 500 = 2220.703125 us.
TEST(DomainRelay, MessagesCarryWhatTheLatencyPaysForHandWorked) {
  LinkParams params;
  params.bandwidth_gbps = {1};
  params.latency_ps = {500'000'000};
  const Topology sw = generate_topology("switch:2", params);
  const Collective all_gather = make(CollectiveKind::kAllGather, sw, 2 << 20, 4);
  const auto tacos = detail::domain_relay(sw, all_gather, LinkModel::kTacos);
  ASSERT_TRUE(tacos.has_value());
  EXPECT_EQ(tacos->collective_time, 2'953'125'000);
  ASSERT_EQ(tacos->transfers().size(), 2u);
  for (const Transfer& t : tacos->transfers()) EXPECT_EQ(t.num_chunks, 4);
  const auto astra = detail::domain_relay(sw, all_gather, LinkModel::kAstra);
  ASSERT_TRUE(astra.has_value());
  EXPECT_EQ(astra->collective_time, 2'220'703'125);
  EXPECT_EQ(astra->transfers().size(), 8u);
  // synthesize keeps it where it beats the greedy (one chunk per message: 3720.703125 us).
  SynthesisOptions options;
  EXPECT_EQ(synthesize_tacos(sw, all_gather, options).collective_time, 2'953'125'000);
  options.link_model = LinkModel::kAstra;
  EXPECT_EQ(synthesize_tacos(sw, all_gather, options).collective_time, 2'220'703'125);
}

TEST(DomainRelay, OnlyCopyCollectivesOverEveryNpuOnSwitches) {
  const Topology mesh = generated("mesh2d:2x2");
  EXPECT_FALSE(detail::domain_relay(mesh, make(CollectiveKind::kAllGather, mesh, 1 << 20, 1),
                                    LinkModel::kTacos));
  const Topology sw = generated("switch:4");
  EXPECT_FALSE(
      detail::domain_relay(sw, make(CollectiveKind::kAllToAll, sw, 1 << 20, 1), LinkModel::kTacos));
  EXPECT_FALSE(detail::domain_relay(
      sw, Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1, {0, 1, 2}, 0),
      LinkModel::kTacos));
  EXPECT_TRUE(detail::domain_relay(sw, make(CollectiveKind::kBroadcast, sw, 1 << 20, 4),
                                   LinkModel::kTacos));
}

// The plan on a DGX pair: every chunk crosses the rail fabric into the other node once, at the
// GPU of its source's position, and that GPU alone sends it on inside its node.
TEST(DomainRelay, EachChunkEntersEachNodeOnceOverItsOwnRail) {
  const Topology pair = dgx("dgx-a100:2");
  const Collective all_gather = make(CollectiveKind::kAllGather, pair, 64 << 20, 8);
  const auto relay = detail::domain_relay(pair, all_gather, LinkModel::kTacos);
  ASSERT_TRUE(relay.has_value());
  std::map<ChunkId, int> crossings;
  std::map<std::pair<ChunkId, NpuId>, int> received;
  for (const Transfer& t : relay->transfers())
    for (ChunkId c : relay->chunks(t)) {
      ++received[{c, t.dst}];
      if (t.src / 8 != t.dst / 8) {
        ++crossings[c];
        EXPECT_EQ(t.src, all_gather.sources(c)[0]);
        EXPECT_EQ(t.src % 8, t.dst % 8);  // rail g to GPU g
      }
    }
  EXPECT_EQ(crossings.size(), static_cast<std::size_t>(all_gather.num_chunks()));
  for (const auto& [chunk, count] : crossings) EXPECT_EQ(count, 1) << chunk;
  for (const auto& [key, count] : received) EXPECT_EQ(count, 1);  // nobody gets a chunk twice
  EXPECT_EQ(received.size(), static_cast<std::size_t>(all_gather.num_chunks()) * 15);
}

// Every relay schedule implements its collective and replays to its time, both link models.
TEST(DomainRelay, VerifiesAndReplays) {
  for (const char* spec :
       {"dgx-a100:2", "dgx-h100:4", "switch:8", "fattree:4x4x2", "dgx-h100:2:multicast"})
    for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kBroadcast})
      for (LinkModel model : {LinkModel::kTacos, LinkModel::kAstra})
        for (int k : {1, 4}) {
          const Topology topology = dgx(spec);
          const Collective collective = make(kind, topology, 16 << 20, k);
          const auto relay = detail::domain_relay(topology, collective, model);
          ASSERT_TRUE(relay.has_value()) << spec;
          const VerifyResult check = verify_algorithm(*relay, topology, model);
          EXPECT_TRUE(check.ok) << spec << " " << to_string(kind) << ": " << check.error;
          EXPECT_EQ(simulate(*relay, topology, model).collective_time, relay->collective_time)
              << spec << " " << to_string(kind) << " K=" << k;
        }
}

// dgx-h100:4 Broadcast, 64 MiB, K = 256, tacos model. With one chunk per message the root's
// NVSwitch port, which carries every chunk once, takes 256 x 0.79 us = 203 us and the last
// chunks leave it late: 244.82294 us in all. The by-position plan exports chunk c from the GPU
// at position c mod 8 of the root's node (the root itself included) and sends the root's
// messages two chunks at a time after single-chunk first ones: 237.1 us; its ports' orders
// justified (justification.h), 229.3 us: 1.468 x the bound of 156.25 us, under the issue's 1.5.
TEST(DomainRelay, BroadcastExportsByPositionOnFourH100Nodes) {
  const Topology topology = dgx("dgx-h100:4");
  const Collective broadcast = make(CollectiveKind::kBroadcast, topology, 64 << 20, 256);
  const auto relay = detail::domain_relay(topology, broadcast, LinkModel::kTacos);
  ASSERT_TRUE(relay.has_value());
  EXPECT_TRUE(verify_algorithm(*relay, topology, LinkModel::kTacos).ok);
  const double bound = compute_lower_bound(topology, broadcast).lower_bound_us;
  EXPECT_DOUBLE_EQ(bound, 156.25);
  EXPECT_LE(to_micros(relay->collective_time), 1.5 * bound);
  EXPECT_GE(to_micros(relay->collective_time), bound);
  EXPECT_EQ(simulate(*relay, topology, LinkModel::kTacos).collective_time, relay->collective_time);
  std::set<ChunkId> exported;
  for (const Transfer& t : relay->transfers())
    if (t.src < 8 && t.dst >= 8)
      for (ChunkId c : relay->chunks(t)) {
        EXPECT_EQ(t.src, c % 8) << "chunk " << c;
        exported.insert(c);
      }
  EXPECT_EQ(exported.size(), 256u);
  // The root's port: its first message to each GPU carries one chunk, later ones up to two.
  std::map<NpuId, int> sent;
  for (const Transfer& t : relay->transfers())
    if (t.src == 0 && t.dst < 8) {
      EXPECT_LE(t.num_chunks, sent[t.dst] == 0 ? 1 : 2);
      ++sent[t.dst];
    }
  EXPECT_EQ(sent.size(), 7u);
}

// dgx-h100:8 Broadcast, 64 MiB, K = 128 chunks of 512 KiB, astra model. Each of the 7 other
// nodes takes 128 / 7 = 18.3 chunks in from the root's node and sends each on to the 6 others:
// 128 x 6 = 768 sends over the NICs of 56 GPUs, 13.7 each, and every GPU's NIC takes in its
// rail's 128 / 8 = 16 chunks. When the entry (the GPU a chunk arrives at) sends it on itself and
// the entries turn with the chunks the way the nodes do, one GPU per node made all 16 x 6 = 96
// sends: 989.2 us. With any GPU of the node sending, each within one chunk of the mean: 244.2 us,
// 1.56 x the bound of 156.25 us (8 MiB per NIC at 50 GB/s). synthesize keeps it.
TEST(DomainRelay, BroadcastForwardedByEveryNicOfEightH100Nodes) {
  const Topology topology = dgx("dgx-h100:8");
  const Collective broadcast = make(CollectiveKind::kBroadcast, topology, 64 << 20, 128);
  const auto relay = detail::domain_relay(topology, broadcast, LinkModel::kAstra);
  ASSERT_TRUE(relay.has_value());
  EXPECT_TRUE(verify_algorithm(*relay, topology, LinkModel::kAstra).ok);
  EXPECT_EQ(simulate(*relay, topology, LinkModel::kAstra).collective_time, relay->collective_time);
  std::vector<int> sends(topology.npus(), 0), receives(topology.npus(), 0);
  std::map<NpuId, std::vector<std::pair<Time, int>>> nic_messages;  // (start, chunks) per sender
  for (const Transfer& t : relay->transfers())
    if (t.src / 8 != t.dst / 8) {
      sends[t.src] += t.num_chunks;
      receives[t.dst] += t.num_chunks;
      nic_messages[t.src].emplace_back(t.start, t.num_chunks);
    }
  // No NIC sends two messages at once: each holds it for its bytes, 9.765625 us a chunk.
  for (auto& [npu, messages] : nic_messages) {
    std::sort(messages.begin(), messages.end());
    for (std::size_t i = 1; i < messages.size(); ++i)
      EXPECT_GE(messages[i].first, messages[i - 1].first + messages[i - 1].second * Time{9'765'625})
          << "NIC of GPU " << npu;
  }
  for (NpuId u = 8; u < topology.npus(); ++u) {
    EXPECT_GE(sends[u], 12) << u;
    EXPECT_LE(sends[u], 15) << u;
    EXPECT_GE(receives[u], 15) << u;
    EXPECT_LE(receives[u], 17) << u;
  }
  const double bound = compute_lower_bound(topology, broadcast).lower_bound_us;
  EXPECT_DOUBLE_EQ(bound, 156.25);
  EXPECT_LE(to_micros(relay->collective_time), 1.6 * bound);
  SynthesisOptions options;
  options.link_model = LinkModel::kAstra;
  EXPECT_LE(synthesize_tacos(topology, broadcast, options).collective_time, relay->collective_time);
}

// "Switch fabrics", 64 MiB, tacos link model: on a DGX pair the greedy's one-chunk messages
// paid the NVSwitch port's 0.25 us per message (dgx-a100:2 All-Gather 1.198 x the bound at its
// best K, h100 1.218); the relay's messages sized per port reach the issue's targets at K = 8:
// All-Gather and Reduce-Scatter <= 1.15, All-Reduce <= 1.25, and synthesis keeps them.
TEST(DomainRelay, DgxPairsMeetTheIssueTargetsUnderTheTacosModel) {
  for (const char* spec : {"dgx-a100:2", "dgx-h100:2"})
    for (CollectiveKind kind :
         {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kAllReduce}) {
      const Topology topology = dgx(spec);
      const Collective collective = make(kind, topology, 64 << 20, 8);
      SynthesisOptions options;
      const SynthesisResult result = synthesize_tacos(topology, collective, options);
      const double ratio = to_micros(result.collective_time) /
                           compute_lower_bound(topology, collective).lower_bound_us;
      EXPECT_LE(ratio, kind == CollectiveKind::kAllReduce ? 1.25 : 1.15)
          << spec << " " << to_string(kind);
      EXPECT_GE(ratio, 1.0);
      EXPECT_TRUE(verify_algorithm(result.algorithm, topology, LinkModel::kTacos).ok);
    }
}

}  // namespace
}  // namespace tacos
