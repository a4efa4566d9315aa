// One comparison in the library (tacos/synthesis/compare.h): the C++ call and `tacos compare
// --json` give the same rows, and the report names the bound a time is judged by.
#include "tacos/synthesis/compare.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_support.h"
#include "request_cases.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/topology/loader.h"

namespace tacos {
namespace {

CompareRequest request_for(const tacos_test::RequestCase& c) {
  CompareRequest request;
  SynthesisRequest& s = request.settings;
  s.collective = parse_collective_kind(c.collective);
  s.size = parse_size(c.size);
  s.auto_chunks = c.chunks == "auto";
  s.chunks_per_npu = s.auto_chunks ? 1 : std::stoi(c.chunks);
  s.options.link_model = parse_link_model(c.model);
  return request;
}

std::string json_or_dash(const nlohmann::json& value) {
  return value.is_null() ? "-" : value.dump();
}

// Every third case of the 30 (each collective, both link models, K = 1, 4 and auto appear):
// compare runs every applicable algorithm, so all 30 would cost a minute.
TEST(Compare, LibraryCallEqualsTheCommandLine) {
  const auto cases = tacos_test::request_cases();
  for (std::size_t i = 0; i < cases.size(); i += 3) {
    const tacos_test::RequestCase& c = cases[i];
    const std::string what = c.topology + " " + c.collective + " K=" + c.chunks + " " + c.model;
    const Topology network = load_topology(c.topology, LinkParams{});
    const Comparison comparison = compare(network, network, request_for(c));

    const tacos_test::RunResult cli = tacos_test::run_tacos(
        "compare --topology " + c.topology + " --collective " + c.collective + " --size " + c.size +
        " --chunks-per-npu " + c.chunks + " --link-model " + c.model + " --json");
    ASSERT_EQ(cli.exit_code, 0) << what << "\n" << cli.err;
    const nlohmann::json rows = nlohmann::json::parse(cli.out)["results"];
    ASSERT_EQ(rows.size(), comparison.rows.size()) << what;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const SynthesisRun& run = comparison.rows[r].run;
      const std::string row = what + " " + run.name;
      EXPECT_EQ(rows[r]["algorithm"].get<std::string>(), run.name) << row;
      if (run.skipped_reason) {
        EXPECT_EQ(rows[r]["skipped_reason"].get<std::string>(), *run.skipped_reason) << row;
        continue;
      }
      EXPECT_TRUE(run.verified.value_or(false)) << row;
      EXPECT_EQ(rows[r]["collective_time_us"].get<double>(), to_micros(run.result.collective_time))
          << row;
      EXPECT_EQ(rows[r]["chunks_per_npu"].get<int>(),
                run.result.algorithm.collective().chunks_per_npu())
          << row;
      EXPECT_EQ(json_or_dash(rows[r]["binding_ratio"]),
                comparison.rows[r].report.binding_ratio
                    ? nlohmann::json(*comparison.rows[r].report.binding_ratio).dump()
                    : "-")
          << row;
      if (run.name == "tacos") {
        EXPECT_EQ(rows[r]["portfolio_winner"].get<std::string>(), run.portfolio_winner) << row;
      }
    }
  }
}

// The tacos row's portfolio takes the baseline rows instead of building them again, so it is
// never slower than any of them.
TEST(Compare, TacosIsNeverSlowerThanARow) {
  const Topology network = load_topology("dgx-h100:2", LinkParams{});
  CompareRequest request;
  request.settings.collective = CollectiveKind::kAllReduce;
  request.settings.size = 64LL << 20;
  request.algorithms = {"ring", "tacos", "rhd", "dbt"};
  const Comparison comparison = compare(network, network, request);
  ASSERT_EQ(comparison.rows.size(), 4u);
  EXPECT_EQ(comparison.rows[1].run.name, "tacos");
  const Time tacos_time = comparison.rows[1].run.result.collective_time;
  for (const ComparisonRow& row : comparison.rows)
    EXPECT_LE(tacos_time, row.run.result.collective_time) << row.run.name;
  ASSERT_TRUE(comparison.bound.has_value());
  EXPECT_GT(comparison.bound->lower_bound_us, 0);
}

// A baseline over the baselines' budget (baselines.h) is a skipped row with its reason, in the
// library and in both outputs of the command; the others still run.
TEST(Compare, ABaselineOverTheBudgetIsSkippedWithItsReason) {
  const std::string reason =
      "2621440 chunk transfers routed hop by hop > 2097152, the baselines' budget";
  CompareRequest request;
  request.settings.collective = CollectiveKind::kAllGather;
  request.settings.chunks_per_npu = 5;
  request.algorithms = {"direct", "rhd"};
  const Topology torus = load_topology("torus2d:16x16", LinkParams{});
  const Comparison comparison = compare(torus, torus, request);
  ASSERT_EQ(comparison.rows.size(), 2u);
  EXPECT_EQ(comparison.rows[0].run.skipped_reason, reason);
  EXPECT_FALSE(comparison.rows[1].run.skipped_reason);
  EXPECT_TRUE(comparison.rows[1].run.verified.value_or(false));

  const std::string flags =
      "compare --topology torus2d:16x16 --chunks-per-npu 5 --algorithms direct,rhd";
  const tacos_test::RunResult json = tacos_test::run_tacos(flags + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json rows = nlohmann::json::parse(json.out)["results"];
  EXPECT_EQ(rows[0]["skipped_reason"], reason);
  EXPECT_TRUE(rows[0]["collective_time_us"].is_null());
  const tacos_test::RunResult text = tacos_test::run_tacos(flags);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("skipped: " + reason + "\n"), std::string::npos) << text.out;
}

TEST(Compare, UnknownAlgorithmIsTypedAndNamesTheValidOnes) {
  const Topology network = load_topology("ring:4", LinkParams{});
  CompareRequest request;
  request.algorithms = {"ring", "nope"};
  try {
    compare(network, network, request);
    FAIL() << "expected UnknownAlgorithm";
  } catch (const UnknownAlgorithm& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ring"), std::string::npos) << e.what();
  }
}

// ---- The binding bound --------------------------------------------------------------------

LowerBound bounds(double lower_us, double store_and_forward_us) {
  LowerBound b;
  b.lower_bound_us = lower_us;
  b.bandwidth_bound_us = lower_us;
  b.store_and_forward_bound_us = store_and_forward_us;
  return b;
}

TEST(BindingBound, TheLargerValidBoundBinds) {
  const Collective c = Collective::make(CollectiveKind::kAllGather, 8, 1 << 20, 1);
  const Time t = 300000000;  // 300 us in picoseconds
  // Store-and-forward above the cut bound (a DGX pod): it binds.
  Report r = make_report(t, c, bounds(100, 150), LinkModel::kTacos);
  EXPECT_EQ(r.binding, BindingBound::kStoreAndForward);
  EXPECT_DOUBLE_EQ(*r.binding_bound_us, 150);
  EXPECT_DOUBLE_EQ(*r.binding_ratio, 2.0);
  EXPECT_DOUBLE_EQ(*r.bound_ratio, 3.0);
  // Below it (a fat-tree): reported, but the cut bound binds.
  r = make_report(t, c, bounds(100, 50), LinkModel::kTacos);
  EXPECT_EQ(r.binding, BindingBound::kLowerBound);
  EXPECT_DOUBLE_EQ(*r.binding_ratio, 3.0);
  EXPECT_DOUBLE_EQ(*r.store_and_forward_ratio, 6.0);
  // The astra link model times no store-and-forward: only the cut bound holds.
  r = make_report(t, c, bounds(100, 150), LinkModel::kAstra);
  EXPECT_EQ(r.binding, BindingBound::kLowerBound);
  EXPECT_FALSE(r.store_and_forward_bound_us.has_value());
  EXPECT_DOUBLE_EQ(*r.binding_ratio, 3.0);
  r = make_report(t, c, std::nullopt, LinkModel::kTacos);
  EXPECT_EQ(r.binding, BindingBound::kNone);
  EXPECT_FALSE(r.binding_ratio.has_value());
  EXPECT_EQ(to_string(BindingBound::kStoreAndForward), "store_and_forward_bound");
}

// The case: where the store-and-forward bound lies below the cut bound it must not be
// presented as the tighter one (switch:16 Broadcast: 1220.29 against 1250 us); where it lies
// above, it is the bound the ratio is against (switch:8 All-Gather; fattree:16x8x16, whose
// fabric of leaves and spines counts as one switch of 128 ports: 1290.04 against 1240.23 us,
// once 655.33 us when each leaf's spine ports counted as capacity too).
TEST(BindingBound, ReportsNameIt) {
  auto json = [](const std::string& args) {
    const tacos_test::RunResult r = tacos_test::run_tacos(args + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  // Gather into one switch port: the cut bound (15 shares through the root's port) is far
  // above what the switches' store-and-forward argument counts.
  const std::string star = "synthesize --topology switch:16 --collective gather --chunks-per-npu 4";
  const auto below = json(star);
  EXPECT_NEAR(below["lower_bound_us"].get<double>(), 1171.875, 1e-9);
  EXPECT_NEAR(below["store_and_forward_bound_us"].get<double>(), 85.35, 0.01);
  EXPECT_EQ(below["binding_bound"], "lower_bound");
  EXPECT_EQ(below["binding_ratio"], below["bound_ratio"]);
  // Broadcast from one port: the root's port and a receiver's, 1250 us of bytes each with
  // 0.5 us per message, 1250 + 2 phi(1250) / 1250 = 1297.64 us, and the two messages of a
  // relaying NPU: 1302.46 us (rooted_relay_bound.cpp) binds.
  const auto rooted =
      json("synthesize --topology switch:16 --collective broadcast --chunks-per-npu 128");
  EXPECT_NEAR(rooted["lower_bound_us"].get<double>(), 1250, 1e-9);
  EXPECT_NEAR(rooted["store_and_forward_bound_us"].get<double>(), 1302.46, 0.01);
  EXPECT_EQ(rooted["binding_bound"], "store_and_forward_bound");
  EXPECT_EQ(rooted["binding_ratio"], rooted["store_and_forward_ratio"]);
  const auto fat = json("synthesize --topology fattree:16x8x16 --collective all-gather");
  EXPECT_NEAR(fat["lower_bound_us"].get<double>(), 1240.23, 0.01);
  EXPECT_NEAR(fat["store_and_forward_bound_us"].get<double>(), 1290.04, 0.01);
  EXPECT_EQ(fat["binding_bound"], "store_and_forward_bound");
  EXPECT_EQ(fat["binding_ratio"], fat["store_and_forward_ratio"]);
  const auto one =
      json("synthesize --topology switch:8 --collective all-gather --chunks-per-npu 4");
  EXPECT_EQ(one["binding_bound"], "store_and_forward_bound");
  EXPECT_NEAR(one["binding_bound_us"].get<double>(), 1140.520716, 1e-5);
  EXPECT_EQ(one["binding_ratio"], one["store_and_forward_ratio"]);
  const tacos_test::RunResult text = tacos_test::run_tacos(star);
  EXPECT_NE(text.out.find(" x bound; the larger bound)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("store-and-forward, tacos link model; below the lower bound)"),
            std::string::npos)
      << text.out;
  const auto rows = json("compare --topology switch:8 --collective all-gather")["results"];
  for (const auto& row : rows) {
    if (row["collective_time_us"].is_null()) continue;
    EXPECT_EQ(row["binding_bound"], "store_and_forward_bound") << row["algorithm"];
  }
}

}  // namespace
}  // namespace tacos
