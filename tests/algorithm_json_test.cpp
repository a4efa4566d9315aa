// algorithm.json: exact text, round trips (byte-identical rewrite), and one-line errors naming
// the field.
#include "tacos/io/algorithm_json.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/collective/collective.h"
#include "tacos/common/error.h"
#include "test_temp_dir.h"

namespace tacos {
namespace {

// Gather to NPU 3 along the 4-ring, one message per hop (see simulator_test.cpp for the times).
Algorithm small_gather() {
  Algorithm a(Collective::make(CollectiveKind::kGather, 4, 1 << 20, 1, {}, 3));
  const std::vector<ChunkId> two = {0, 1}, three = {0, 1, 2};
  a.add_transfer(0, 1, 0, 5382813, 0);
  a.add_transfer(1, 2, 5382813, 15648438, two);
  a.add_transfer(2, 3, 15648438, 30796876, three, /*reduce=*/true);
  a.synthesizer = "ring";
  a.seed = 42;
  a.link_model = LinkModel::kAstra;
  a.collective_time = 30796876;
  return a;
}

constexpr const char* kSmallGatherJson = R"({
  "format": "tacos-algorithm",
  "version": 1,
  "collective": "gather",
  "topology_npus": 4,
  "npus": [0, 1, 2, 3],
  "root": 3,
  "size_bytes": 1048576,
  "chunks_per_npu": 1,
  "chunk_bytes": 262144,
  "num_chunks": 4,
  "synthesizer": "ring",
  "seed": 42,
  "link_model": "astra",
  "collective_time_ps": 30796876,
  "transfers": [
    [0, 1, 0, 5382813, [0]],
    [1, 2, 5382813, 15648438, [0, 1]],
    [2, 3, 15648438, 30796876, [0, 1, 2], 1]
  ]
}
)";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_path(const std::string& name) {
  return tacos_test::TestTempDir::path().string() + "/" + name;
}

void expect_same(const Algorithm& a, const Algorithm& b) {
  const Collective& x = a.collective();
  const Collective& y = b.collective();
  EXPECT_EQ(x.kind(), y.kind());
  EXPECT_EQ(x.topology_npus(), y.topology_npus());
  EXPECT_EQ(x.members(), y.members());
  EXPECT_EQ(x.root(), y.root());
  EXPECT_EQ(x.size(), y.size());
  EXPECT_EQ(x.chunks_per_npu(), y.chunks_per_npu());
  EXPECT_EQ(x.chunk_bytes(), y.chunk_bytes());
  EXPECT_EQ(x.num_chunks(), y.num_chunks());
  EXPECT_EQ(a.synthesizer, b.synthesizer);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.link_model, b.link_model);
  EXPECT_EQ(a.collective_time, b.collective_time);
  ASSERT_EQ(a.transfers().size(), b.transfers().size());
  for (std::size_t i = 0; i < a.transfers().size(); ++i) {
    const Transfer& s = a.transfers()[i];
    const Transfer& t = b.transfers()[i];
    EXPECT_EQ(s.src, t.src) << i;
    EXPECT_EQ(s.dst, t.dst) << i;
    EXPECT_EQ(s.start, t.start) << i;
    EXPECT_EQ(s.end, t.end) << i;
    EXPECT_EQ(s.reduce, t.reduce) << i;
    const auto cs = a.chunks(s), ct = b.chunks(t);
    EXPECT_EQ(std::vector<ChunkId>(cs.begin(), cs.end()),
              std::vector<ChunkId>(ct.begin(), ct.end()))
        << i;
  }
}

TEST(AlgorithmJson, ExactText) { EXPECT_EQ(algorithm_to_json(small_gather()), kSmallGatherJson); }

TEST(AlgorithmJson, RoundTripIsByteIdentical) {
  const std::string first = temp_path("tacos_algorithm_json_a.json");
  const std::string second = temp_path("tacos_algorithm_json_b.json");
  const Algorithm a = small_gather();
  write_algorithm_json(a, first);
  EXPECT_EQ(read_text(first), kSmallGatherJson);
  const Algorithm b = read_algorithm_json(first);
  expect_same(a, b);
  write_algorithm_json(b, second);
  EXPECT_EQ(read_text(first), read_text(second));
  std::remove(first.c_str());
  std::remove(second.c_str());
}

TEST(AlgorithmJson, RoundTripSubsetNoRootNoTransfers) {
  Algorithm a(Collective::make(CollectiveKind::kAllToAll, 8, 3 << 20, 2, {5, 1, 3}));
  a.synthesizer = "direct \"quoted\"\\";
  a.seed = 18446744073709551615ull;
  const std::string text = algorithm_to_json(a);
  EXPECT_NE(text.find("\"npus\": [1, 3, 5],\n  \"root\": null,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"transfers\": []\n}\n"), std::string::npos) << text;
  const Algorithm b = algorithm_from_json(text, "mem.json");
  expect_same(a, b);
  EXPECT_EQ(algorithm_to_json(b), text);
}

TEST(AlgorithmJson, LargeRoundTrip) {
  Algorithm a(Collective::make(CollectiveKind::kAllGather, 64, 1 << 24, 4));
  std::vector<ChunkId> chunks;
  for (int i = 0; i < 20000; ++i) {
    chunks.assign(1 + i % 3, 0);
    for (std::size_t k = 0; k < chunks.size(); ++k)
      chunks[k] = static_cast<ChunkId>((i * 7 + k) % 256);
    a.add_transfer(i % 64, (i + 1) % 64, i * 1000LL, i * 1000LL + 999, chunks, i % 5 == 0);
  }
  const std::string text = algorithm_to_json(a);
  const Algorithm b = algorithm_from_json(text, "big.json");
  expect_same(a, b);
  EXPECT_EQ(algorithm_to_json(b), text);
}

TEST(AlgorithmJson, OptionalFieldsAndUnknownKeys) {
  const Algorithm a = algorithm_from_json(
      R"({"format": "tacos-algorithm", "version": 1, "collective": "all-gather",
          "topology_npus": 2, "size_bytes": 8, "chunks_per_npu": 1,
          "comment": {"any": [1, {"x": null}]},
          "transfers": [[0, 1, 0, 10, [0], 0], [1, 0, 5, 17, [1]]]})",
      "min.json");
  EXPECT_EQ(a.collective().members(), (std::vector<NpuId>{0, 1}));
  EXPECT_EQ(a.collective().chunk_bytes(), 4);
  EXPECT_EQ(a.transfers().size(), 2u);
  EXPECT_FALSE(a.transfers()[0].reduce);
  EXPECT_EQ(a.collective_time, 17);  // absent: the last end
  EXPECT_EQ(a.link_model, LinkModel::kTacos);
}

// Replaces the first occurrence of `from` in the small gather's text and expects an Error.
std::string error_for(const std::string& from, const std::string& to) {
  std::string text = kSmallGatherJson;
  const auto at = text.find(from);
  if (at == std::string::npos) return "test bug: '" + from + "' not in the text";
  text.replace(at, from.size(), to);
  try {
    algorithm_from_json(text, "alg.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(AlgorithmJson, ErrorsNameTheField) {
  EXPECT_EQ(error_for("\"version\": 1", "\"version\": 2"),
            "alg.json: field 'version': expected 1 (this tacos reads version 1), got 2");
  EXPECT_EQ(error_for("\"format\": \"tacos-algorithm\",", ""),
            "alg.json: field 'format': missing (expected the string \"tacos-algorithm\")");
  EXPECT_EQ(error_for("\"format\": \"tacos-algorithm\"", "\"format\": \"msccl\""),
            "alg.json: field 'format': expected \"tacos-algorithm\", got \"msccl\"");
  EXPECT_EQ(error_for("\"gather\"", "\"gathering\""),
            "alg.json: field 'collective': expected one of all-gather, reduce-scatter, "
            "all-reduce, broadcast, reduce, gather, scatter, all-to-all, got \"gathering\"");
  EXPECT_EQ(error_for("\"root\": 3", "\"root\": null"),
            "alg.json: field 'root': expected the root NPU id (gather has a root), got null");
  EXPECT_EQ(error_for("\"size_bytes\": 1048576", "\"size_bytes\": \"1MiB\""),
            "alg.json: field 'size_bytes': expected a positive integer, got \"1MiB\"");
  EXPECT_EQ(error_for("\"size_bytes\": 1048576", "\"size_bytes\": [1]"),
            "alg.json: field 'size_bytes': expected a positive integer, got an array");
  EXPECT_EQ(error_for("\"chunk_bytes\": 262144", "\"chunk_bytes\": 262145"),
            "alg.json: field 'chunk_bytes': expected 262144 (size_bytes and chunks_per_npu give "
            "that), got 262145");
  EXPECT_EQ(
      error_for("\"num_chunks\": 4", "\"num_chunks\": 5"),
      "alg.json: field 'num_chunks': expected 4 (the collective has that many chunks), got 5");
  EXPECT_EQ(error_for("\"link_model\": \"astra\"", "\"link_model\": \"ns3\""),
            "alg.json: field 'link_model': expected \"tacos\" or \"astra\", got \"ns3\"");
  EXPECT_EQ(error_for("\"npus\": [0, 1, 2, 3]", "\"npus\": 4"),
            "alg.json: field 'npus': expected an array of NPU ids, got 4");
  EXPECT_EQ(error_for("\"npus\": [0, 1, 2, 3]", "\"npus\": [0, 1, \"2\", 3]"),
            "alg.json: field 'npus[2]': expected an NPU id (integer), got a string");
  EXPECT_EQ(error_for("\"npus\": [0, 1, 2, 3]", "\"npus\": [0, 1, 2, 9]"),
            "alg.json: fields 'collective', 'topology_npus', 'npus', 'root', 'size_bytes' and "
            "'chunks_per_npu' describe no valid collective: --npus: NPU 9 is outside the topology "
            "(0..3)");
  EXPECT_EQ(error_for("\"seed\": 42", "\"seed\": 42,\n  \"seed\": 43"),
            "alg.json: field 'seed': appears twice");
  EXPECT_EQ(error_for("\"transfers\": [", "\"transfers\": {\"a\": 1}, \"x\": ["),
            "alg.json: field 'transfers': expected an array of transfers, got an object");
}

TEST(AlgorithmJson, TransferErrorsNameTheElement) {
  // Replays add link times to recorded ones: times past 2^60 ps would overflow them.
  EXPECT_EQ(error_for("[1, 2, 5382813,", "[1, 2, 1152921504606846977,"),
            "alg.json: field 'transfers[1][2]': expected start_ps of at most 2^60 ps "
            "(1152921504606846976), got 1152921504606846977");
  EXPECT_EQ(error_for("[1, 2, 5382813,", "[1, 2, -5,"),
            "alg.json: field 'transfers[1][2]': expected start_ps (a non-negative integer), got "
            "-5");
  EXPECT_EQ(error_for("[1, 2, 5382813,", "[1, 2, 1.5,"),
            "alg.json: field 'transfers[1][2]': expected start_ps (a non-negative integer), got "
            "1.5");
  EXPECT_EQ(error_for("[1, 2, 5382813,", "[1, \"2\", 5382813,"),
            "alg.json: field 'transfers[1][1]': expected dst (a non-negative integer), got a "
            "string");
  EXPECT_EQ(error_for("[1, 2, 5382813, 15648438, [0, 1]]", "[1, 2, 5382813, 15648438]"),
            "alg.json: field 'transfers[1]': expected [src, dst, start_ps, end_ps, [chunk, ...]] "
            "with an optional 6th element 1 (reduce)");
  EXPECT_EQ(error_for("[1, 2, 5382813, 15648438, [0, 1]]", "[1, 2, 5382813, 15648438, 0]"),
            "alg.json: field 'transfers[1][4]': expected the chunk list [chunk, ...], got 0");
  EXPECT_EQ(error_for("[1, 2, 5382813, 15648438, [0, 1]]", "[1, 2, 5382813, 15648438, []]"),
            "alg.json: field 'transfers[1][4]': expected at least one chunk");
  EXPECT_EQ(error_for("[0, 1, 2], 1]", "[0, 1, 2], 2]"),
            "alg.json: field 'transfers[2][5]': expected reduce: 1 (reduce) or 0 (copy), got 2");
  EXPECT_EQ(error_for("[0, 1, 2], 1]", "[0, 1, 2], 1, 1]"),
            "alg.json: field 'transfers[2]': expected [src, dst, start_ps, end_ps, [chunk, ...]] "
            "with an optional 6th element 1 (reduce), got more than 6 elements");
  EXPECT_EQ(error_for("[0, 1, 2], 1]", "[0, 1, 9], 1]"),
            "alg.json: field 'transfers[2][4][2]': expected a chunk id 0..3, got 9");
  EXPECT_EQ(error_for("[0, 1, 2], 1]", "[0, 1, -2], 1]"),
            "alg.json: field 'transfers[2][4][2]': expected a chunk id, got -2");
  EXPECT_EQ(error_for("[0, 1, 0, 5382813, [0]]", "[0, 1, 10, 5, [0]]"),
            "alg.json: field 'transfers[0][3]': expected end_ps after start_ps 10 (a message "
            "takes at least 1 ps), got 5");
  EXPECT_EQ(error_for("[0, 1, 0, 5382813, [0]]", "[0, 1, 0, 0, [0]]"),
            "alg.json: field 'transfers[0][3]': expected end_ps after start_ps 0 (a message "
            "takes at least 1 ps), got 0");
  EXPECT_EQ(error_for("[0, 1, 0, 5382813, [0]]", "{\"src\": 0}"),
            "alg.json: field 'transfers[0]': expected [src, dst, start_ps, end_ps, [chunk, ...]] "
            "with an optional 6th element 1 (reduce), got an object");
}

TEST(AlgorithmJson, SyntaxErrorsNameTheLine) {
  const std::string e = error_for("\"root\": 3,", "\"root\": 3");  // missing comma, line 7
  EXPECT_EQ(e.rfind("alg.json:8: invalid JSON: ", 0), 0u) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  try {
    algorithm_from_json("[1, 2]", "top.json");
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(std::string(err.what()), "top.json: expected a JSON object at the top level");
  }
  EXPECT_THROW(algorithm_from_json("", "empty.json"), Error);
  try {
    read_algorithm_json(temp_path("tacos_no_such_file.json"));
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("cannot open for reading"), std::string::npos);
  }
}

}  // namespace
}  // namespace tacos
