// One request in the library (tacos/synthesis/request.h): the C++ call and `tacos synthesize
// --json` give the same time, K and portfolio winner (python/tests/test_request.py checks
// `import tacos` on the same cases); the registry is the one list of algorithms.
#include "tacos/synthesis/request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_support.h"
#include "request_cases.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/topology/loader.h"

namespace tacos {
namespace {

TEST(Request, TheCaseListCoversWhatTheIssueAsks) {
  const auto cases = tacos_test::request_cases();
  ASSERT_EQ(cases.size(), 30u);
  std::set<std::string> kinds, models, chunks;
  for (const auto& c : cases) {
    kinds.insert(c.collective);
    models.insert(c.model);
    chunks.insert(c.chunks);
  }
  EXPECT_EQ(kinds.size(), 8u);
  EXPECT_EQ(models.size(), 2u);
  EXPECT_TRUE(chunks.count("1") && chunks.count("4") && chunks.count("auto"));
}

TEST(Request, LibraryCallEqualsTheCommandLine) {
  for (const tacos_test::RequestCase& c : tacos_test::request_cases()) {
    const std::string what = c.topology + " " + c.collective + " K=" + c.chunks + " " + c.model;
    const Topology network = load_topology(c.topology, LinkParams{});
    SynthesisRequest request;
    request.collective = parse_collective_kind(c.collective);
    request.size = parse_size(c.size);
    request.auto_chunks = c.chunks == "auto";
    request.chunks_per_npu = request.auto_chunks ? 1 : std::stoi(c.chunks);
    request.options.link_model = parse_link_model(c.model);
    const SynthesisRun run = synthesize(network, request);
    ASSERT_TRUE(run.verified.value_or(false)) << what;

    const tacos_test::RunResult cli = tacos_test::run_tacos(
        "synthesize --topology " + c.topology + " --collective " + c.collective + " --size " +
        c.size + " --chunks-per-npu " + c.chunks + " --link-model " + c.model + " --json");
    ASSERT_EQ(cli.exit_code, 0) << what << "\n" << cli.err;
    const nlohmann::json json = nlohmann::json::parse(cli.out);
    EXPECT_EQ(json["collective_time_us"].get<double>(), to_micros(run.result.collective_time))
        << what;
    EXPECT_EQ(json["chunks_per_npu"].get<int>(), run.result.algorithm.collective().chunks_per_npu())
        << what;
    EXPECT_EQ(json["portfolio_winner"].get<std::string>(), run.portfolio_winner) << what;
    ASSERT_TRUE(run.greedy_time) << what;
    EXPECT_EQ(json["greedy_time_us"].get<double>(), to_micros(*run.greedy_time)) << what;
  }
}

TEST(Request, TheRegistryIsTheOneListOfAlgorithms) {
  const auto& registry = algorithm_registry();
  ASSERT_EQ(registry.size(), 14u);
  EXPECT_EQ(registry.front().name, "tacos");
  EXPECT_EQ(algorithm_names_text(),
            "tacos, ring, direct, rhd, dbt, hierarchical, biring, bucket, node-direct, relay, "
            "torus-trees, nvls, nvls-tree or collnet");
  // nvls runs where a switch reduces: compare's default leaves it out elsewhere.
  EXPECT_EQ(algorithms_for(load_topology("ring:4", LinkParams{})).size(), 11u);
  EXPECT_TRUE(find_algorithm("dbt").applies_to(CollectiveKind::kBroadcast));
  EXPECT_FALSE(find_algorithm("dbt").applies_to(CollectiveKind::kAllGather));
  EXPECT_THROW(find_algorithm("rings"), UnknownAlgorithm);
  // The command line's help and errors read it.
  const auto help = tacos_test::run_tacos("synthesize --help");
  EXPECT_NE(help.out.find("ring, direct, rhd, dbt, hierarchical, biring, bucket, node-direct, "
                          "relay, torus-trees, nvls, nvls-tree, collnet"),
            std::string::npos);
  const auto bad = tacos_test::run_tacos("synthesize --topology ring:4 --algorithm rings");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(
      bad.err,
      "tacos: error: --algorithm: unknown algorithm 'rings' (expected tacos, ring, direct, rhd, "
      "dbt, hierarchical, biring, bucket, node-direct, relay, torus-trees, nvls, nvls-tree or "
      "collnet)\n");
}

TEST(Request, BaselinesThatDoNotApplySayWhy) {
  const Topology ring = load_topology("ring:6", LinkParams{});
  SynthesisRequest request;
  request.algorithm = "rhd";
  request.collective = CollectiveKind::kAllReduce;
  request.size = 1 << 20;
  const SynthesisRun run = synthesize(ring, request);
  ASSERT_TRUE(run.skipped_reason.has_value());
  EXPECT_EQ(*run.skipped_reason, "rhd needs a power-of-two NPU count (N = 6)");
}

}  // namespace
}  // namespace tacos
