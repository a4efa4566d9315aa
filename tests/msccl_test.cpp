// MSCCL-IR XML: MSCCLang's sample files read, executed and verified; tacos algorithms written,
// checked against the executor's structural rules and read back with the same times; one-line
// errors for bad files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <pugixml.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/algorithm/verify.h"
#include "tacos/collective/collective.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/msccl_xml.h"
#include "tacos/simulation/simulator.h"
#include "tacos/synthesis/baselines.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"
#include "test_printers.h"
#include "test_temp_dir.h"

namespace tacos {
namespace {

namespace fs = std::filesystem;

Topology make(const std::string& spec) {
  return generate_topology(spec, LinkParams{}).unwind_switches();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string sample(const std::string& name) {
  return std::string(TACOS_SHARED_DATA_DIR) + "/msccl/" + name;
}

#define REQUIRE_SAMPLE(path)                                                          \
  if (!fs::exists(path))                                                              \
  GTEST_SKIP() << "sample " << (path)                                                 \
               << " is absent (the shared data folder ../shared/data is not next to " \
                  "this checkout)"

std::string temp_path(const std::string& name) {
  return (tacos_test::TestTempDir::path() / ("tacos_msccl_test_" + name)).string();
}

// Replaces the first occurrence of `from` (which must occur) with `to`.
std::string replace_first(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string error_of(const std::string& text, const Topology& topology,
                     std::optional<Bytes> size = Bytes{3} << 20) {
  try {
    algorithm_from_msccl_xml(text, "bad.xml", topology, LinkModel::kTacos, size);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// ---- the samples --------------------------------------------------------------------------

// MSCCLang's ring All-Reduce on 3 GPUs, in place, nchunksperloop 3, cnt 1: each GPU's single
// thread block runs s, rrs, rrcs, rcs, r, i.e. a chain of 2(N-1) = 4 dependent hops of one chunk
// (size / N) each, and every link carries one chunk per hop. So the time is
//   2 (N - 1) x (latency + (size / N) / bandwidth).
TEST(MscclSamples, AllReduceRing3GpusVerifiesAndTakesTheRingTime) {
  const std::string path = sample("allreduce_ring_3gpus.xml");
  REQUIRE_SAMPLE(path);
  const Topology topology = make("ring:3");
  const Bytes size = Bytes{3} << 20;  // 3 MiB: 1 MiB chunks
  const Algorithm algorithm = read_msccl_xml(path, topology, LinkModel::kTacos, size);
  EXPECT_EQ(algorithm.collective().kind(), CollectiveKind::kAllReduce);
  EXPECT_EQ(algorithm.collective().chunk_bytes(), Bytes{1} << 20);
  EXPECT_EQ(algorithm.transfers().size(), 12u);  // 3 GPUs x 4 sends
  const int n = 3;
  const Time hop = topology.transfer_time(topology.find_link(0, 1), size / n);
  EXPECT_EQ(hop, 500'000 + serialization_time(Bytes{1} << 20, 50.0));
  const Time expected = 2 * (n - 1) * hop;
  EXPECT_EQ(algorithm.collective_time, expected);

  const VerifyResult verdict = verify_algorithm(algorithm, topology, LinkModel::kTacos);
  EXPECT_TRUE(verdict.ok) << verdict.error;
  EXPECT_EQ(simulate(algorithm, topology, LinkModel::kTacos).collective_time, expected);
}

// MSCCLang's ring All-Gather on 4 GPUs, out of place, one channel per chunk: each chunk travels
// N - 1 hops and every link carries one chunk per hop, so the time is
//   (N - 1) x (latency + (size / N) / bandwidth).
TEST(MscclSamples, AllGatherRing4GpusVerifiesAndTakesTheRingTime) {
  const std::string path = sample("allgather_ring_4gpus.xml");
  REQUIRE_SAMPLE(path);
  const Topology topology = make("ring:4");
  const Bytes size = Bytes{4} << 20;  // output buffer 4 MiB: 1 MiB chunks
  const Algorithm algorithm = read_msccl_xml(path, topology, LinkModel::kTacos, size);
  EXPECT_EQ(algorithm.collective().kind(), CollectiveKind::kAllGather);
  EXPECT_EQ(algorithm.transfers().size(), 12u);  // 4 chunks x 3 hops
  const int n = 4;
  const Time expected = (n - 1) * topology.transfer_time(topology.find_link(0, 1), size / n);
  EXPECT_EQ(algorithm.collective_time, expected);
  const VerifyResult verdict = verify_algorithm(algorithm, topology, LinkModel::kTacos);
  EXPECT_TRUE(verdict.ok) << verdict.error;
  EXPECT_EQ(simulate(algorithm, topology, LinkModel::kTacos).collective_time, expected);
  // The astra model: links are busy for size / bandwidth only; the dependency chain is the same.
  const Algorithm astra = read_msccl_xml(path, topology, LinkModel::kAstra, size);
  EXPECT_EQ(astra.collective_time, expected);
}

// GPU 0's rrcs (receive chunk 1's partial of GPUs 1 and 2, add its own, store, send on) becomes
// rcs: GPU 0's contribution to chunk 1 goes missing everywhere.
TEST(MscclSamples, AllReduceWithAContributionMissingIsRejectedByVerify) {
  const std::string path = sample("allreduce_ring_3gpus.xml");
  REQUIRE_SAMPLE(path);
  const Topology topology = make("ring:3");
  const std::string altered = replace_first(read_text(path), "type=\"rrcs\"", "type=\"rcs\"");
  const Algorithm algorithm =
      algorithm_from_msccl_xml(altered, "altered.xml", topology, LinkModel::kTacos, 3 << 20);
  const VerifyResult verdict = verify_algorithm(algorithm, topology, LinkModel::kTacos);
  EXPECT_FALSE(verdict.ok);
  EXPECT_NE(verdict.error.find("chunk 1"), std::string::npos) << verdict.error;
  EXPECT_NE(verdict.error.find("lacks the contribution of NPU 0"), std::string::npos)
      << verdict.error;
}

TEST(MscclSamples, SizeComesFromTheCallerWhenTheFileHasNone) {
  const std::string path = sample("allreduce_ring_3gpus.xml");
  REQUIRE_SAMPLE(path);
  try {
    read_msccl_xml(path, make("ring:3"), LinkModel::kTacos, std::nullopt);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":1: the file carries no sizes"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("give --size"), std::string::npos) << e.what();
  }
}

// ---- structure of written files -------------------------------------------------------------

// Checks a written file against the executor's rules (msccl-executor-nccl's parser, built with
// MSCCL_MAX_NUM_STEPS = max_steps); returns the number of steps.
int check_structure(const std::string& text, int ngpus, int max_steps = 64,
                    const char* proto = "Simple") {
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_string(text.c_str());
  EXPECT_TRUE(parsed) << parsed.description();
  const pugi::xml_node algo = doc.child("algo");
  EXPECT_TRUE(algo);
  for (const char* name :
       {"name", "proto", "nchannels", "nchunksperloop", "ngpus", "coll", "inplace", "outofplace",
        "minBytes", "maxBytes", "tacos_size_bytes", "tacos_chunk_bytes"})
    EXPECT_TRUE(algo.attribute(name)) << "root attribute " << name << " is missing";
  EXPECT_STREQ(algo.attribute("proto").value(), proto);
  // All-Reduce and Reduce serve in-place calls too (unless their dependencies would name too
  // many thread blocks); every file serves out-of-place calls.
  const std::string coll = algo.attribute("coll").value();
  if (coll != "allreduce" && coll != "reduce") {
    EXPECT_EQ(algo.attribute("inplace").as_int(), 0) << coll;
  }
  EXPECT_EQ(algo.attribute("outofplace").as_int(), 1) << coll;
  EXPECT_STREQ(algo.attribute("minBytes").value(), "0");
  EXPECT_STREQ(algo.attribute("maxBytes").value(), "0");
  EXPECT_EQ(algo.attribute("ngpus").as_int(), ngpus);
  const int nchannels = algo.attribute("nchannels").as_int();
  EXPECT_LE(nchannels, 32);
  int steps_total = 0;
  // (src, dst, chan) -> sends, receives
  std::map<std::tuple<int, int, int>, std::pair<int, int>> messages;
  int gpus = 0;
  for (const pugi::xml_node gpu : algo.children("gpu")) {
    const int id = gpu.attribute("id").as_int();
    EXPECT_EQ(id, gpus++);
    for (const char* name : {"i_chunks", "o_chunks", "s_chunks"})
      EXPECT_TRUE(gpu.attribute(name)) << name;
    std::vector<pugi::xml_node> tbs;
    for (const pugi::xml_node tb : gpu.children("tb")) tbs.push_back(tb);
    EXPECT_LE(tbs.size(), 216u);
    std::map<int, int> per_channel;
    std::set<std::tuple<int, int, int>> owners;  // (direction, peer, chan)
    for (std::size_t t = 0; t < tbs.size(); ++t) {
      const pugi::xml_node tb = tbs[t];
      EXPECT_EQ(tb.attribute("id").as_int(), static_cast<int>(t)) << "tb ids must be dense";
      const int send = tb.attribute("send").as_int(), recv = tb.attribute("recv").as_int();
      const int chan = tb.attribute("chan").as_int();
      EXPECT_NE(send, id);
      EXPECT_NE(recv, id);
      EXPECT_TRUE(send == -1 || recv == -1) << "one direction per thread block";
      EXPECT_LT(chan, nchannels);
      EXPECT_LE(++per_channel[chan], 32) << "gpu " << id << " channel " << chan;
      if (send >= 0) {
        EXPECT_TRUE(owners.insert({0, send, chan}).second);
      }
      if (recv >= 0) {
        EXPECT_TRUE(owners.insert({1, recv, chan}).second);
      }
      int s = 0;
      for (const pugi::xml_node step : tb.children("step")) {
        EXPECT_EQ(step.attribute("s").as_int(), s);
        const std::string type = step.attribute("type").value();
        const int cnt = step.attribute("cnt").as_int();
        EXPECT_LT(cnt, 72);
        if (type != "nop") {
          EXPECT_GE(cnt, 1);
        }
        for (const char* name :
             {"srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep"})
          EXPECT_TRUE(step.attribute(name)) << name;
        const int depid = step.attribute("depid").as_int();
        const int deps = step.attribute("deps").as_int();
        if (depid >= 0) {
          EXPECT_LE(depid, 127) << "the executor keeps depid in an int8";
          EXPECT_NE(depid, static_cast<int>(t)) << "a dependency inside the thread block";
          EXPECT_LT(depid, static_cast<int>(tbs.size()));
          if (depid < static_cast<int>(tbs.size())) {
            pugi::xml_node producer;
            int k = 0;
            for (const pugi::xml_node p : tbs[depid].children("step"))
              if (k++ == deps) producer = p;
            EXPECT_TRUE(producer) << "gpu " << id << " depends on a missing step";
            if (producer) {
              EXPECT_STREQ(producer.attribute("hasdep").value(), "1");
              EXPECT_STRNE(producer.attribute("type").value(), "nop");
            }
          }
        } else {
          EXPECT_NE(type, "nop") << "a nop carries a dependency";
        }
        if (type == "nop") {
          // A nop's dependency is for the next real step, which must carry one too.
          const pugi::xml_node next = step.next_sibling("step");
          EXPECT_TRUE(next);
          if (next) {
            EXPECT_GE(next.attribute("depid").as_int(), 0);
          }
        }
        if (type == "s" || type == "rcs" || type == "rrs" || type == "rrcs")
          ++messages[{id, send, chan}].first;
        if (type == "r" || type == "rcs" || type == "rrs" || type == "rrc" || type == "rrcs")
          ++messages[{recv, id, chan}].second;
        ++s;
      }
      EXPECT_LE(s, max_steps) << "gpu " << id << " tb " << t;
      steps_total += s;
    }
  }
  EXPECT_EQ(gpus, ngpus);
  for (const auto& [key, counts] : messages)
    EXPECT_EQ(counts.first, counts.second)
        << std::get<0>(key) << " -> " << std::get<1>(key) << " chan " << std::get<2>(key);
  return steps_total;
}

// ---- round trips ----------------------------------------------------------------------------

struct RoundTripCase {
  std::string topology;
  CollectiveKind kind;
  int chunks_per_npu;
};
void PrintTo(const RoundTripCase& c, std::ostream* os) {
  *os << c.topology << " " << to_string(c.kind) << " K=" << c.chunks_per_npu;
}

class MscclRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(MscclRoundTrip, WriteReadVerifySameTime) {
  const RoundTripCase& c = GetParam();
  const Topology topology = make(c.topology);
  const Bytes size = Bytes{4} << 20;
  const Collective collective =
      Collective::make(c.kind, topology.npus(), size, c.chunks_per_npu, {}, 1 % topology.npus());
  SynthesisOptions options;
  options.threads = 1;
  options.seed = 3;
  const SynthesisResult synthesized = synthesize_tacos(topology, collective, options);
  ASSERT_TRUE(verify_algorithm(synthesized.algorithm, topology, LinkModel::kTacos).ok);

  const std::string path = temp_path(to_string(c.kind) + "_" + c.topology + ".xml");
  write_msccl_xml(synthesized.algorithm, path, "tacos_roundtrip");
  const std::string text = read_text(path);
  EXPECT_EQ(text, algorithm_to_msccl_xml(synthesized.algorithm, "tacos_roundtrip"));
  EXPECT_GT(check_structure(text, topology.npus()), 0);
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  // tacos_size_bytes makes --size unnecessary; a given size does not override the file's.
  const Algorithm read = read_msccl_xml(path, topology, LinkModel::kTacos, std::nullopt);
  fs::remove(path);
  EXPECT_EQ(read.collective().kind(), c.kind);
  EXPECT_EQ(read.collective().size(), size);
  EXPECT_EQ(read.collective().chunks_per_npu(), c.chunks_per_npu);
  EXPECT_EQ(read.collective().root(), collective.root());
  EXPECT_EQ(read.synthesizer, synthesized.algorithm.synthesizer);
  EXPECT_EQ(read.seed, synthesized.algorithm.seed);
  EXPECT_EQ(read.transfers().size(), synthesized.algorithm.transfers().size());
  const VerifyResult verdict = verify_algorithm(read, topology, LinkModel::kTacos);
  EXPECT_TRUE(verdict.ok) << verdict.error;
  EXPECT_EQ(read.collective_time, synthesized.collective_time);
  EXPECT_EQ(simulate(read, topology, LinkModel::kTacos).collective_time,
            synthesized.collective_time);
  // The same transfers at the same times.
  Algorithm original = synthesized.algorithm;
  original.sort_by_start();
  for (std::size_t i = 0; i < read.transfers().size() && i < original.transfers().size(); ++i) {
    const Transfer& a = read.transfers()[i];
    const Transfer& b = original.transfers()[i];
    ASSERT_EQ(std::tie(a.src, a.dst, a.start, a.end, a.reduce),
              std::tie(b.src, b.dst, b.start, b.end, b.reduce))
        << "transfer " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    MscclCollectives, MscclRoundTrip,
    ::testing::Values(RoundTripCase{"torus2d:4x4", CollectiveKind::kAllGather, 2},
                      RoundTripCase{"fc:20", CollectiveKind::kAllGather, 1},
                      RoundTripCase{"torus2d:4x4", CollectiveKind::kReduceScatter, 2},
                      RoundTripCase{"torus2d:4x4", CollectiveKind::kAllReduce, 2},
                      RoundTripCase{"torus2d:4x4", CollectiveKind::kAllToAll, 2},
                      RoundTripCase{"ring:4", CollectiveKind::kAllGather, 2},
                      RoundTripCase{"ring:4", CollectiveKind::kReduceScatter, 2},
                      RoundTripCase{"ring:4", CollectiveKind::kAllReduce, 2},
                      RoundTripCase{"ring:4", CollectiveKind::kAllToAll, 2},
                      RoundTripCase{"ring:4", CollectiveKind::kBroadcast, 3},
                      RoundTripCase{"ring:4", CollectiveKind::kReduce, 3},
                      RoundTripCase{"mesh2d:3x3", CollectiveKind::kGather, 2},
                      RoundTripCase{"mesh2d:3x3", CollectiveKind::kScatter, 2}),
    [](const ::testing::TestParamInfo<RoundTripCase>& info) {
      std::string name = info.param.topology + "_" + to_string(info.param.kind);
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

// Baselines send multi-chunk messages and relay through NPUs that are not a chunk's destination
// (scratch on the relay): the round trip keeps verify's verdict and the simulated time.
TEST(MscclWriter, BaselinesRoundTrip) {
  struct Case {
    std::string spec, baseline;
    CollectiveKind kind;
    int k;
  };
  const std::vector<Case> cases = {
      {"torus2d:4x4", "ring", CollectiveKind::kAllToAll, 3},
      {"torus2d:4x4", "direct", CollectiveKind::kReduceScatter, 1},
      {"ring:8", "dbt", CollectiveKind::kAllReduce, 3},
      {"hypercube:8", "rhd", CollectiveKind::kAllReduce, 1},
      {"ring:4,fc:2", "hierarchical", CollectiveKind::kAllReduce, 2},
      {"mesh2d:3x3", "ring", CollectiveKind::kGather, 3},
      {"mesh2d:3x3", "direct", CollectiveKind::kScatter, 1},
  };
  for (const Case& c : cases) {
    const Topology topology = make(c.spec);
    const Collective collective =
        Collective::make(c.kind, topology.npus(), Bytes{1} << 24, c.k, {}, 1);
    const Algorithm a =
        synthesize_baseline(parse_baseline(c.baseline), topology, collective, LinkModel::kTacos);
    const std::string text = algorithm_to_msccl_xml(a, c.baseline);
    check_structure(text, topology.npus());
    const Algorithm read =
        algorithm_from_msccl_xml(text, "b.xml", topology, LinkModel::kTacos, std::nullopt);
    const VerifyResult verdict = verify_algorithm(read, topology, LinkModel::kTacos);
    EXPECT_TRUE(verdict.ok) << c.spec << " " << c.baseline << ": " << verdict.error;
    EXPECT_EQ(read.collective_time, simulate(a, topology, LinkModel::kTacos).collective_time)
        << c.spec << " " << c.baseline;
    EXPECT_EQ(read.transfers().size(), a.transfers().size()) << c.spec << " " << c.baseline;
  }
}

// A hand-made schedule with multi-chunk messages whose slots are not contiguous (gathered with
// cpy on the sender; reduced with re and copied out on the receiver) and a wasted duplicate.
TEST(MscclWriter, MultiChunkMessagesAndDuplicates) {
  const Topology topology = make("ring:3");
  // All-Reduce, 3 NPUs, K=1: chunks 0, 1, 2; reduce chunks 0 and 2 at NPU 1 in one message.
  Algorithm a(Collective::make(CollectiveKind::kAllReduce, 3, 3 << 20, 1));
  const Time hop1 = topology.transfer_time(topology.find_link(0, 1), 1 << 20);
  const Time hop2 = topology.transfer_time(topology.find_link(0, 1), 2 << 20);
  const std::vector<ChunkId> c02 = {0, 2}, c1 = {1};
  // Reduce-scatter part: 0 -> 1 (chunks 0, 2), 2 -> 1 (chunks 0, 2): NPU 1 holds 0 and 2 reduced.
  a.add_transfer(0, 1, 0, hop2, c02, true);
  a.add_transfer(2, 1, 0, hop2, c02, true);
  // Chunk 1: 1 -> 0 and 1 -> 2 partials reduced at 0 and 2, then 0 sends it to 2?  Keep it simple:
  // 1 -> 0 (chunk 1), 2 -> 0 (chunk 1): NPU 0 holds chunk 1 reduced.
  a.add_transfer(1, 0, 0, hop1, c1, true);
  a.add_transfer(2, 0, 0, hop1, c1, true);
  // All-gather part: NPU 1 sends chunks 0, 2 to 0 and 2; NPU 0 sends chunk 1 to 1 and 2.
  a.add_transfer(1, 0, hop2, hop2 + hop2, c02);
  a.add_transfer(1, 2, hop2, hop2 + hop2, c02);
  a.add_transfer(0, 1, hop2, hop2 + hop1, c1);
  a.add_transfer(0, 2, hop2, hop2 + hop1, c1);
  // A wasted duplicate of chunk 1 to NPU 2 (it already gets it from 0).
  a.add_transfer(1, 2, hop2 + hop2, hop2 + hop2 + hop1, c1);
  const VerifyResult before = verify_algorithm(a, topology, LinkModel::kTacos);
  ASSERT_TRUE(before.ok) << before.error;
  const std::string text = algorithm_to_msccl_xml(a, "multi");
  check_structure(text, 3);
  EXPECT_NE(text.find("type=\"re\""), std::string::npos) << text;
  const Algorithm read =
      algorithm_from_msccl_xml(text, "multi.xml", topology, LinkModel::kTacos, std::nullopt);
  const VerifyResult verdict = verify_algorithm(read, topology, LinkModel::kTacos);
  EXPECT_TRUE(verdict.ok) << verdict.error << "\n" << text;
  EXPECT_EQ(read.transfers().size(), a.transfers().size());
  EXPECT_EQ(read.collective_time, simulate(a, topology, LinkModel::kTacos).collective_time);
}

TEST(MscclWriter, RefusesRelaysAndSwitches) {
  const Topology topology = make("ring:4");
  // A collective over NPUs 0..2 of a 4-NPU topology.
  Algorithm subset(Collective::make(CollectiveKind::kAllGather, 4, 3 << 20, 1, {0, 1, 2}));
  try {
    algorithm_to_msccl_xml(subset, "x");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no relay ranks"), std::string::npos) << e.what();
  }
  Algorithm through_switch(Collective::make(CollectiveKind::kAllGather, 4, 4 << 20, 1));
  through_switch.add_transfer(0, 4, 0, 10, 0);
  try {
    write_msccl_xml(through_switch, temp_path("switch.xml"), "x");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("switch.xml: MSCCL-IR XML: transfer 0 (0 -> 4)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(temp_path("switch.xml")));
}

// A long ring All-Gather with many chunks needs several channels per link.
TEST(MscclWriter, SpreadsLongLinksOverChannels) {
  const Topology topology = make("uniring:4");
  const Collective collective =
      Collective::make(CollectiveKind::kAllGather, 4, Bytes{4} << 20, 200);
  SynthesisOptions options;
  options.threads = 1;
  options.batch = false;  // one chunk per message: 600 messages per link
  const SynthesisResult synthesized = synthesize_tacos(topology, collective, options);
  const std::string text = algorithm_to_msccl_xml(synthesized.algorithm, "long");
  check_structure(text, 4);
  pugi::xml_document doc;
  doc.load_string(text.c_str());
  EXPECT_GE(doc.child("algo").attribute("nchannels").as_int(), 3);  // 600 messages per link
  const Algorithm read =
      algorithm_from_msccl_xml(text, "long.xml", topology, LinkModel::kTacos, std::nullopt);
  const VerifyResult verdict = verify_algorithm(read, topology, LinkModel::kTacos);
  EXPECT_TRUE(verdict.ok) << verdict.error;
  EXPECT_EQ(read.collective_time, synthesized.collective_time);
}

// ---- bad files ----------------------------------------------------------------------------

// gpu 1's send, without its depid/deps/hasdep (the tests add some).
constexpr const char* kGpu1Send =
    "type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"1\" cnt=\"1\"";

constexpr const char* kTiny =
    R"(<algo name="tiny" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allgather" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="2" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="2" send="-1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="1" o_chunks="2" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1"/>
      <step s="1" type="r" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";

TEST(MscclReader, TinyFileIsFine) {
  const Topology topology = make("ring:2");
  const Algorithm a =
      algorithm_from_msccl_xml(kTiny, "tiny.xml", topology, LinkModel::kTacos, Bytes{2} << 20);
  EXPECT_EQ(a.transfers().size(), 2u);
  const VerifyResult verdict = verify_algorithm(a, topology, LinkModel::kTacos);
  EXPECT_TRUE(verdict.ok) << verdict.error;
}

TEST(MscclReader, BadFilesGiveOneLineErrorsNamingFileAndPlace) {
  const Topology topology = make("ring:2");
  struct Case {
    std::string from, to, expected;
  };
  const std::vector<Case> cases = {
      {" ngpus=\"2\"", "", "bad.xml:1: <algo> lacks the required attribute 'ngpus'"},
      {"coll=\"allgather\"", "coll=\"allgatherz\"", "bad.xml:1: unknown coll \"allgatherz\""},
      {"ngpus=\"2\"", "ngpus=\"3\"", "bad.xml:1: ngpus=\"3\" but the topology has 2 NPUs"},
      {" i_chunks=\"1\"", "", "bad.xml:2: <gpu> lacks the required attribute 'i_chunks'"},
      {" chan=\"0\"", "", "bad.xml:3: <tb> lacks the required attribute 'chan'"},
      {"type=\"s\"", "type=\"sx\"", "bad.xml:4: gpu 0 tb 0 step 0: unknown step type 'sx'"},
      {"<tb id=\"2\"", "<tb id=\"3\"", "bad.xml:2: gpu 0: threadblock ids must be dense from 0"},
      // gpu 1's first send waits for a thread block gpu 1 does not have.
      {kGpu1Send, std::string(kGpu1Send) + " depid=\"4\" deps=\"0\"",
       "bad.xml:15: gpu 1 tb 0 step 0 (s): depends on threadblock 4, which gpu 1 does not have"},
      {kGpu1Send, std::string(kGpu1Send) + " depid=\"0\" deps=\"7\"",
       "bad.xml:15: gpu 1 tb 0 step 0 (s): depends on step 7 of threadblock 0, which has 3 "
       "step(s)"},
      // gpu 0's send waits for gpu 0's receive (tb 1 step 0, hasdep="1"): fine; for tb 2's cpy,
      // which does not signal: a deadlock found before running.
      {"dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n    </tb>\n    <tb "
       "id=\"1\"",
       "dstoff=\"0\" cnt=\"1\" depid=\"2\" deps=\"0\" hasdep=\"0\"/>\n    </tb>\n    <tb id=\"1\"",
       "bad.xml:4: gpu 0 tb 0 step 0 (s): depends on step 0 of threadblock 2, but neither that "
       "step nor a later one of that threadblock has hasdep=\"1\""},
      // gpu 1 no longer sends: gpu 0's receive has no matching send.
      {"<step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"1\"",
       "<step s=\"0\" type=\"nop\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"1\"",
       "bad.xml:7: gpu 0 tb 1 step 0 (r): receives from gpu 1 on channel 0, but gpu 1 sends only "
       "0 message(s) to gpu 0 there: a receive without a matching send (deadlock)"},
      {"srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n "
       "   "
       "</tb>\n    <tb id=\"1\"",
       "srcoff=\"5\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n "
       "   "
       "</tb>\n    <tb id=\"1\"",
       "bad.xml:4: gpu 0 tb 0 step 0: source i[5] is past the end of buffer i (1 chunks)"},
      {"<gpu id=\"1\"", "<gpux id=\"1\"", "bad.xml:"},  // malformed: the closing tag mismatches
      {"type=\"cpy\"", "type=\"rrc\"",
       "bad.xml:10: gpu 0 tb 2 step 0: type 'rrc' reduces, but "
       "allgather is not a reduction"},
  };
  for (const Case& c : cases) {
    const std::string text = replace_first(kTiny, c.from, c.to);
    const std::string error = error_of(text, topology, Bytes{2} << 20);
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "expected: " << c.expected << "\ngot: " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  // A missing gpu's receives and sends: gpu 1 gone entirely.
  const std::string no_gpu1 =
      std::string(kTiny).substr(0, std::string(kTiny).find("  <gpu id=\"1\"")) + "</algo>\n";
  EXPECT_NE(error_of(no_gpu1, topology, Bytes{2} << 20).find("never received"), std::string::npos)
      << error_of(no_gpu1, topology, Bytes{2} << 20);
}

// gpu 0 sends only after receiving from gpu 1 (a dependency), gpu 1 receives before it sends.
TEST(MscclReader, DeadlockIsReported) {
  const Topology topology = make("ring:2");
  std::string text = replace_first(
      kTiny,
      "dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n    </tb>\n    <tb id=\"1\"",
      "dstoff=\"0\" cnt=\"1\" depid=\"1\" deps=\"0\" hasdep=\"0\"/>\n    </tb>\n    <tb id=\"1\"");
  const std::string send = std::string("<step s=\"0\" ") + kGpu1Send + "/>";
  const std::string receive =
      "<step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" "
      "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>";
  text = replace_first(text, send + "\n      " + receive,
                       replace_first(receive, "s=\"1\"", "s=\"0\"") + "\n      " +
                           replace_first(send, "s=\"0\"", "s=\"1\""));
  const std::string error = error_of(text, topology, Bytes{2} << 20);
  EXPECT_NE(error.find("bad.xml:4: gpu 0 tb 0 step 0 (s): waits for step 0 of threadblock 1 "
                       "(depid/deps), which never completes (deadlock)"),
            std::string::npos)
      << error;
}

TEST(MscclReader, ReadsSpellingsOfOlderTools) {
  const Topology topology = make("ring:2");
  // SCCL/TACCL: reduce_scatter spelling, no minBytes/maxBytes/outofplace, newer buf/off, no cnt,
  // depid, deps, hasdep when default, unknown attributes and elements.
  const std::string text =
      R"(<algo name="rs" nchunksperloop="2" nchannels="1" proto="Simple" ngpus="2" coll="reduce_scatter" inplace="0" extra="x">
  <info something="1"/>
  <gpu id="0" i_chunks="2" o_chunks="1" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" buf="i" off="1"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="1" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" buf="i" off="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="1" dstbuf="o" dstoff="0"/>
    </tb>
  </gpu>
</algo>
)";
  const Algorithm a =
      algorithm_from_msccl_xml(text, "rs.xml", topology, LinkModel::kTacos, Bytes{2} << 20);
  EXPECT_EQ(a.collective().kind(), CollectiveKind::kReduceScatter);
  const VerifyResult verdict = verify_algorithm(a, topology, LinkModel::kTacos);
  EXPECT_TRUE(verdict.ok) << verdict.error;
}

// MSCCLang's all-pairs All-Reduce style: every rank sends its partial of chunk p to rank p's
// scratch (plain receives), rank p reduces them locally with `re` and sends the sum back. The
// staged partials count as reduce transfers.
TEST(MscclReader, AllPairsAllReduceWithStagedPartials) {
  const int n = 3;
  const Topology topology = make("fc:3");
  std::ostringstream x;
  x << "<algo name=\"allpairs\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"3\" ngpus=\"3\" "
       "coll=\"allreduce\" inplace=\"1\" outofplace=\"0\" minBytes=\"0\" maxBytes=\"0\">\n";
  for (int r = 0; r < n; ++r) {
    x << "  <gpu id=\"" << r << "\" i_chunks=\"3\" o_chunks=\"0\" s_chunks=\"2\">\n";
    std::vector<int> peers;
    for (int p = 0; p < n; ++p)
      if (p != r) peers.push_back(p);
    // Thread block k talks to peers[k]; thread block 2 reduces.
    for (int k = 0; k < 2; ++k) {
      const int p = peers[k];
      x << "    <tb id=\"" << k << "\" send=\"" << p << "\" recv=\"" << p << "\" chan=\"0\">\n"
        << "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"" << p
        << "\" dstbuf=\"s\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
        << "      <step s=\"1\" type=\"r\" srcbuf=\"i\" srcoff=\"" << r
        << "\" dstbuf=\"s\" dstoff=\"" << k
        << "\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>\n"
        << "      <step s=\"2\" type=\"s\" srcbuf=\"i\" srcoff=\"" << r
        << "\" dstbuf=\"i\" dstoff=\"" << r
        << "\" cnt=\"1\" depid=\"2\" deps=\"1\" hasdep=\"0\"/>\n"
        << "      <step s=\"3\" type=\"r\" srcbuf=\"i\" srcoff=\"" << p
        << "\" dstbuf=\"i\" dstoff=\"" << p
        << "\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
        << "    </tb>\n";
    }
    x << "    <tb id=\"2\" send=\"-1\" recv=\"-1\" chan=\"0\">\n";
    for (int k = 0; k < 2; ++k)
      x << "      <step s=\"" << k << "\" type=\"re\" srcbuf=\"s\" srcoff=\"" << k
        << "\" dstbuf=\"i\" dstoff=\"" << r << "\" cnt=\"1\" depid=\"" << k
        << "\" deps=\"1\" hasdep=\"" << k << "\"/>\n";
    x << "    </tb>\n  </gpu>\n";
  }
  x << "</algo>\n";
  const Bytes size = Bytes{3} << 20;
  const Algorithm a =
      algorithm_from_msccl_xml(x.str(), "allpairs.xml", topology, LinkModel::kTacos, size);
  EXPECT_EQ(a.transfers().size(), 12u);
  int reduces = 0;
  for (const Transfer& t : a.transfers()) reduces += t.reduce;
  EXPECT_EQ(reduces, 6);
  const VerifyResult verdict = verify_algorithm(a, topology, LinkModel::kTacos);
  EXPECT_TRUE(verdict.ok) << verdict.error;
  // Two rounds of one chunk per link.
  EXPECT_EQ(a.collective_time, 2 * topology.transfer_time(topology.find_link(0, 1), size / n));
}

// A schedule that keeps two different partials of one chunk on one GPU is refused by the
// reader (verify could not judge it).
TEST(MscclReader, RefusesWhatTacosCannotExpress) {
  const Topology topology = make("ring:3");
  // Reduce-scatter on 3 GPUs, chunk 2 reduced at GPU 2: GPU 1 relays GPU 0's partial through
  // scratch without adding its own and sends its own separately (two partials on GPU 1).
  const std::string text =
      R"(<algo name="relay" nchunksperloop="3" ngpus="3" coll="reducescatter" inplace="0" outofplace="1">
  <gpu id="0" i_chunks="3" o_chunks="1" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="2" dstbuf="s" dstoff="0" cnt="1"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="3" o_chunks="1" s_chunks="1">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="2" dstbuf="s" dstoff="0" cnt="1" hasdep="1"/>
    </tb>
    <tb id="1" send="2" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="s" srcoff="0" dstbuf="s" dstoff="0" cnt="1" depid="0" deps="0"/>
      <step s="1" type="s" srcbuf="i" srcoff="2" dstbuf="s" dstoff="0" cnt="1"/>
    </tb>
  </gpu>
  <gpu id="2" i_chunks="3" o_chunks="1" s_chunks="0">
    <tb id="0" send="-1" recv="1" chan="0">
      <step s="0" type="rrc" srcbuf="i" srcoff="2" dstbuf="i" dstoff="2" cnt="1"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="2" dstbuf="o" dstoff="0" cnt="1"/>
    </tb>
  </gpu>
</algo>
)";
  const std::string error = error_of(text, topology);
  EXPECT_NE(error.find("bad.xml:12: gpu 1 tb 1 step 0 (s): sends chunk 2 with the "
                       "contributions of rank 0"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("cannot express"), std::string::npos) << error;
}

}  // namespace
}  // namespace tacos

namespace tacos {
namespace {

// Largest step count of any thread block and largest depid in a written file.
std::pair<int, int> most_steps_and_depid(const std::string& text) {
  pugi::xml_document doc;
  doc.load_string(text.c_str());
  int steps = 0, depid = -1;
  for (const pugi::xml_node gpu : doc.child("algo").children("gpu"))
    for (const pugi::xml_node tb : gpu.children("tb")) {
      int s = 0;
      for (const pugi::xml_node step : tb.children("step")) {
        ++s;
        depid = std::max(depid, step.attribute("depid").as_int());
      }
      steps = std::max(steps, s);
    }
  return {steps, depid};
}

// msccl-executor-nccl is built with 64 steps per thread block: torus2d:8x8 All-Gather K=8 (127
// steps on main) and All-Reduce K=4 (132) are split over channels to fit, read back to the same
// schedule and time; --msccl-max-steps 256 (the older runtime) keeps fewer channels.
TEST(MscclWriter, FitsSixtyFourStepsPerThreadBlock) {
  const Topology topology = make("torus2d:8x8");
  for (const auto& [kind, k] :
       {std::pair{CollectiveKind::kAllGather, 8}, std::pair{CollectiveKind::kAllReduce, 4}}) {
    const Collective collective = Collective::make(kind, 64, Bytes{64} << 20, k);
    SynthesisOptions options;
    options.threads = 1;
    const SynthesisResult synthesized = synthesize_tacos(topology, collective, options);
    const std::string text = algorithm_to_msccl_xml(synthesized.algorithm, "t");
    check_structure(text, 64);
    EXPECT_LE(most_steps_and_depid(text).first, 64) << to_string(kind);
    const std::string wide =
        algorithm_to_msccl_xml(synthesized.algorithm, "t", MscclWriteOptions{256});
    check_structure(wide, 64, 256);
    EXPECT_GT(most_steps_and_depid(wide).first, 64) << to_string(kind) << ": the case needs it";
    pugi::xml_document a, b;
    a.load_string(text.c_str());
    b.load_string(wide.c_str());
    EXPECT_GT(a.child("algo").attribute("nchannels").as_int(),
              b.child("algo").attribute("nchannels").as_int());
    const Algorithm read =
        algorithm_from_msccl_xml(text, "t.xml", topology, LinkModel::kTacos, std::nullopt);
    const VerifyResult verdict = verify_algorithm(read, topology, LinkModel::kTacos);
    EXPECT_TRUE(verdict.ok) << verdict.error;
    EXPECT_EQ(read.transfers().size(), synthesized.algorithm.transfers().size());
    EXPECT_EQ(read.collective_time, synthesized.collective_time);
  }
  EXPECT_THROW(
      algorithm_to_msccl_xml(
          synthesize_tacos(topology, Collective::make(CollectiveKind::kAllGather, 64, 1 << 20, 1),
                           SynthesisOptions{})
              .algorithm,
          "t", MscclWriteOptions{1}),
      Error);
}

// The protocol is written as given; the reader reads every protocol.
TEST(MscclWriter, WritesTheProtocol) {
  const Topology topology = make("ring:4");
  const SynthesisResult s = synthesize_tacos(
      topology, Collective::make(CollectiveKind::kAllGather, 4, 1 << 20, 1), SynthesisOptions{});
  for (MscclProtocol p : {MscclProtocol::kSimple, MscclProtocol::kLL, MscclProtocol::kLL128}) {
    const std::string text = algorithm_to_msccl_xml(s.algorithm, "p", MscclWriteOptions{64, p});
    check_structure(text, 4, 64, to_string(p).c_str());
    EXPECT_NO_THROW(
        algorithm_from_msccl_xml(text, "p.xml", topology, LinkModel::kTacos, std::nullopt));
  }
  EXPECT_EQ(parse_msccl_protocol("LL128"), MscclProtocol::kLL128);
  EXPECT_THROW(parse_msccl_protocol("LL64"), Error);
}

// Dependencies name thread blocks through an int8: All-Reduce on 72 fully connected GPUs needs
// 142 thread blocks per GPU and main named ids up to 141 (the issue's dgx-a100:9 case, whose
// GPUs reach all 71 peers through the switches). Thread blocks that a dependency names now come
// first; written for both calls all 142 are named (the in-place call's write-after-read waits
// name the senders), so the file is written for out-of-place calls only, where 71 are named.
// Beyond 108 peers a GPU needs more thread blocks than the executor runs: a one-line error.
TEST(MscclWriter, DependenciesNameThreadBlocksBelow128) {
  const Topology topology = make("fc:72");
  SynthesisOptions options;
  options.threads = 1;
  const SynthesisResult s = synthesize_tacos(
      topology, Collective::make(CollectiveKind::kAllReduce, 72, Bytes{64} << 20, 1), options);
  const std::string text = algorithm_to_msccl_xml(s.algorithm, "fc72");
  check_structure(text, 72);
  EXPECT_NE(text.find(R"(inplace="0" outofplace="1")"), std::string::npos);
  EXPECT_LE(most_steps_and_depid(text).second, 127);
  const Algorithm read =
      algorithm_from_msccl_xml(text, "dgx.xml", topology, LinkModel::kTacos, std::nullopt);
  const VerifyResult verdict = verify_algorithm(read, topology, LinkModel::kTacos);
  EXPECT_TRUE(verdict.ok) << verdict.error;
  EXPECT_EQ(read.collective_time, s.collective_time);

  const Topology wide = make("fc:130");
  const SynthesisResult w = synthesize_tacos(
      wide, Collective::make(CollectiveKind::kAllReduce, 130, Bytes{130} << 16, 1), options);
  try {
    algorithm_to_msccl_xml(w.algorithm, "fc130");
    FAIL() << "expected the int8 limit";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("NPU 0 needs 258 thread blocks, more than the 216"), std::string::npos)
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

// A 2-GPU All-Reduce that is right out of place but wrong in place: each GPU stages the peer's
// contribution, copies it to o[own] and then adds i[own]; in place o[own] is i[own], so the copy
// destroys the GPU's own contribution first. Marked for out-of-place calls only it reads and
// verifies; marked for both, the reader runs the in-place call too and refuses it.
std::string staged_all_reduce(const char* flags) {
  std::string text =
      std::string(
          R"(<algo name="staged" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" )") +
      flags + R"( minBytes="0" maxBytes="0">
)";
  for (int g = 0; g < 2; ++g) {
    const int peer = 1 - g;
    auto step = [](int s, const char* type, const char* src, int srcoff, const char* dst,
                   int dstoff, int depid, int deps, int hasdep) {
      return "      <step s=\"" + std::to_string(s) + "\" type=\"" + type + "\" srcbuf=\"" + src +
             "\" srcoff=\"" + std::to_string(srcoff) + "\" dstbuf=\"" + dst + "\" dstoff=\"" +
             std::to_string(dstoff) + "\" cnt=\"1\" depid=\"" + std::to_string(depid) +
             "\" deps=\"" + std::to_string(deps) + "\" hasdep=\"" + std::to_string(hasdep) +
             "\"/>\n";
    };
    text +=
        "  <gpu id=\"" + std::to_string(g) + "\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"1\">\n";
    text += "    <tb id=\"0\" send=\"" + std::to_string(peer) + "\" recv=\"-1\" chan=\"0\">\n";
    text += step(0, "s", "i", peer, "s", 0, -1, -1, 0);
    text += step(1, "s", "o", g, "o", g, 2, 1, 0);
    text += "    </tb>\n    <tb id=\"1\" send=\"-1\" recv=\"" + std::to_string(peer) +
            "\" chan=\"0\">\n";
    text += step(0, "r", "i", 0, "s", 0, -1, -1, 1);
    text += step(1, "r", "i", 0, "o", peer, -1, -1, 0);
    text += "    </tb>\n    <tb id=\"2\" send=\"-1\" recv=\"-1\" chan=\"0\">\n";
    text += step(0, "cpy", "s", 0, "o", g, 1, 0, 0);
    text += step(1, "re", "i", g, "o", g, -1, -1, 1);
    text += "    </tb>\n  </gpu>\n";
  }
  return text + "</algo>\n";
}

TEST(MscclReader, BothCallsMeansTheInPlaceCallIsCheckedToo) {
  const Topology topology = make("ring:2");
  const Algorithm out_of_place =
      algorithm_from_msccl_xml(staged_all_reduce(R"(inplace="0" outofplace="1")"), "staged.xml",
                               topology, LinkModel::kTacos, Bytes{2} << 20);
  const VerifyResult verdict = verify_algorithm(out_of_place, topology, LinkModel::kTacos);
  EXPECT_TRUE(verdict.ok) << verdict.error;
  try {
    algorithm_from_msccl_xml(staged_all_reduce(R"(inplace="1" outofplace="1")"), "staged.xml",
                             topology, LinkModel::kTacos, Bytes{2} << 20);
    FAIL() << "the in-place call double-counts and must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("staged.xml: as an in-place call"), std::string::npos)
        << e.what();
  }
}

// tacos's All-Reduce and Reduce files are written for both calls and pass the in-place check
// (the round trips above read them); a write-after-read dependency protects each input.
TEST(MscclWriter, AllReduceServesInPlaceAndOutOfPlaceCalls) {
  const Topology topology = make("torus2d:4x4");
  const SynthesisResult s = synthesize_tacos(
      topology, Collective::make(CollectiveKind::kAllReduce, 16, Bytes{4} << 20, 2),
      SynthesisOptions{});
  const std::string text = algorithm_to_msccl_xml(s.algorithm, "ar");
  EXPECT_NE(text.find(R"(inplace="1" outofplace="1")"), std::string::npos);
  EXPECT_NE(text.find(R"(o_chunks="32")"), std::string::npos);  // results go to the output
  const Algorithm read =
      algorithm_from_msccl_xml(text, "ar.xml", topology, LinkModel::kTacos, std::nullopt);
  EXPECT_TRUE(verify_algorithm(read, topology, LinkModel::kTacos).ok);
  EXPECT_EQ(read.collective_time, s.collective_time);
}

TEST(MscclNames, CollectiveNamesAreTacosNamesWithoutHyphensAndReadBack) {
  EXPECT_EQ(msccl_collective_name(CollectiveKind::kAllGather), "allgather");
  EXPECT_EQ(msccl_collective_name(CollectiveKind::kReduceScatter), "reducescatter");
  EXPECT_EQ(msccl_collective_name(CollectiveKind::kAllToAll), "alltoall");
  EXPECT_EQ(msccl_collective_name(CollectiveKind::kBroadcast), "broadcast");
  for (CollectiveKind kind : kCollectiveKinds) {
    EXPECT_EQ(parse_msccl_collective_name(msccl_collective_name(kind)), kind);
    std::string underscored = to_string(kind);
    std::replace(underscored.begin(), underscored.end(), '-', '_');
    EXPECT_EQ(parse_msccl_collective_name(underscored), kind) << underscored;
  }
  EXPECT_EQ(parse_msccl_collective_name("all_gath_er"), std::nullopt);
  EXPECT_EQ(parse_msccl_collective_name("all-gather"), std::nullopt);
  EXPECT_EQ(parse_msccl_collective_name(""), std::nullopt);
}

}  // namespace
}  // namespace tacos
