#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "algorithm_runner.h"
#include "collective_options.h"
#include "commands.h"
#include "common_options.h"
#include "msccl_options.h"
#include "progress.h"
#include "report.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/io/chakra.h"
#include "tacos/io/msccl_xml.h"

namespace tacos::cli {
namespace {

struct SynthesizeCommand {
  TopologyOptions topology;
  SynthesisFlags flags;
  CollectiveOptions collective;
  MscclOptions msccl;
  std::string algorithm = "tacos";
  bool json = false;
  bool time_only = false;
  std::string out_dir;
  std::string formats = "json";
  bool formats_given = false;

  // Writes every requested format into a staging directory first and moves the results into
  // `out_dir` only when all of them succeeded, so a failure leaves no partial output.
  // Writes every requested format into a fresh staging folder beside `out_dir` and moves the
  // results in only when all of them succeeded, so a failure leaves no partial output. The
  // target then holds exactly this run's formats: earlier tacos outputs (algorithm.json,
  // chakra/, astra/, msccl/) are replaced or removed; anything else in it is left alone.
  void write_outputs(const Algorithm& algorithm, const Topology& full) const {
    namespace fs = std::filesystem;
    const fs::path target = fs::path(out_dir).lexically_normal();
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    fs::path staging;
    try {
      fs::create_directories(parent);
      for (int attempt = 0;; ++attempt) {
        staging = parent / ("." + target.filename().string() + ".tacos-staging-" +
                            std::to_string(::getpid()) + "-" + std::to_string(attempt));
        if (fs::create_directory(staging)) break;
      }
    } catch (const fs::filesystem_error& e) {
      throw Error("--out " + out_dir + ": cannot create a folder beside it (" + e.code().message() +
                  ")");
    }
    try {
      std::vector<std::string> produced;
      for (const std::string& format : split_list(formats)) {
        if (format == "json") {
          write_algorithm_json(algorithm, (staging / "algorithm.json").string());
          produced.push_back("algorithm.json");
        } else if (format == "chakra") {
          write_chakra(algorithm, full, topology.topology, staging.string());
          produced.insert(produced.end(), {"chakra", "astra"});
        } else if (format == "msccl") {
          fs::create_directories(staging / "msccl");
          const std::string name = "tacos_" + to_string(algorithm.collective().kind());
          write_msccl_xml(algorithm, (staging / "msccl" / (name + ".xml")).string(), name,
                          msccl.get());
          produced.push_back("msccl");
        } else {
          throw Error("--format: unknown format '" + format + "' (expected json, chakra, msccl)");
        }
      }
      fs::create_directories(target);
      for (const char* owned : {"algorithm.json", "chakra", "astra", "msccl"})
        if (std::find(produced.begin(), produced.end(), owned) == produced.end())
          fs::remove_all(target / owned);
      for (const auto& entry : fs::directory_iterator(staging)) {
        const fs::path destination = target / entry.path().filename();
        fs::remove_all(destination);
        fs::rename(entry.path(), destination);
      }
      fs::remove_all(staging);
    } catch (const fs::filesystem_error& e) {
      std::error_code ignored;
      fs::remove_all(staging, ignored);
      throw Error("--out " + out_dir + ": cannot write (" + e.code().message() + ": " +
                  e.path1().string() + ")");
    } catch (const Error& e) {
      // Errors name the file being written; say where it was going, not the staging folder.
      std::error_code ignored;
      fs::remove_all(staging, ignored);
      std::string what = e.what();
      const std::string from = staging.string();
      for (auto at = what.find(from); at != std::string::npos; at = what.find(from, at))
        what.replace(at, from.size(), target.string());
      throw Error(what);
    } catch (...) {
      std::error_code ignored;
      fs::remove_all(staging, ignored);
      throw;
    }
  }

  // What ASTRA-sim will make of the written bundle: its congestion-aware backend runs 1-D
  // networks with the ET semantics tacos simulates (links timed as --link-model astra); the
  // congestion-unaware binary runs the rest without contention. Null without a bundle.
  nlohmann::ordered_json astra_sim_expectation(const Algorithm& algorithm,
                                               const Topology& full) const {
    if (out_dir.empty()) return nullptr;
    const auto listed = split_list(formats);
    if (std::find(listed.begin(), listed.end(), "chakra") == listed.end()) return nullptr;
    nlohmann::ordered_json info;
    const std::optional<std::string> network = astra_network_yaml(full, topology.topology);
    if (!network) {
      info["backend"] = nullptr;
      info["expected_time_us"] = nullptr;
      info["matches_reported"] = nullptr;
      info["note"] = "no ASTRA-sim network file: the topology is not expressible as one";
      return info;
    }
    const std::size_t list = network->find("topology: [");
    const bool one_dim =
        list == std::string::npos ||
        network->substr(list, network->find(']', list) - list).find(',') == std::string::npos;
    info["backend"] = one_dim ? "congestion_aware" : "congestion_unaware";
    const EtTrace trace = read_chakra((std::filesystem::path(out_dir) / "chakra").string());
    // Kinds without a workload collective node run as per-rank ETs: one send in flight.
    const CollectiveKind kind = algorithm.collective().kind();
    const bool per_rank = kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce ||
                          kind == CollectiveKind::kGather || kind == CollectiveKind::kScatter;
    const Time expected = simulate_chakra(trace, full, LinkModel::kAstra,
                                          algorithm.collective().size(), per_rank, one_dim)
                              .collective_time;
    const double reported = static_cast<double>(algorithm.collective_time);
    const bool matches = std::abs(static_cast<double>(expected) - reported) <= 1e-3 * reported;
    info["expected_time_us"] = to_micros(expected);
    info["matches_reported"] = matches;
    if (!one_dim)
      info["note"] = std::string(
                         "multi-dimensional: ASTRA-sim's congestion-aware backend refuses "
                         "it; its congestion-unaware binary runs it without link "
                         "contention") +
                     (matches ? ", which this schedule never meets" : ", so faster than this");
    else if (matches)
      info["note"] = "ASTRA-sim runs the schedule as synthesized";
    else if (per_rank)
      info["note"] = "approximate: ASTRA-sim has no " + to_string(kind) +
                     " collective node and runs the per-rank ETs with one send in flight per rank";
    else
      info["note"] =
          "ASTRA-sim's links follow --link-model astra; this schedule was timed with "
          "--link-model " +
          to_string(algorithm.link_model);
    return info;
  }

  void run() const {
    const Topology full = topology.load();
    const Topology network = topology.network(full);
    const Collective requested = collective.make(network, flags);
    if (time_only && !out_dir.empty())
      throw Error("--out cannot be combined with --time-only (no transfers are kept)");
    if (formats_given && out_dir.empty())
      throw Error("--format " + formats + " needs --out DIR (where to write the files)");
    if (!out_dir.empty() && std::filesystem::exists(out_dir) &&
        !std::filesystem::is_directory(out_dir))
      throw Error("--out: " + out_dir + " exists and is not a directory");
    msccl.get();  // bad --msccl-* values fail before the synthesis, not after
    if (const std::string flag = msccl.given(); !flag.empty()) {
      const auto listed = split_list(formats);
      if (out_dir.empty() || std::find(listed.begin(), listed.end(), "msccl") == listed.end())
        throw Error(flag + " needs --out DIR --format msccl (it shapes the MSCCL file only)");
    }

    SynthesisOptions options = collective.synthesis_options(flags);
    options.keep_transfers = !time_only;
    ProgressReporter progress("synthesize");
    options.progress = [&progress](double f) { progress.update(f); };
    const AlgorithmRun run = run_algorithm_searching_chunks(
        algorithm, network, [&](int k) { return collective.make(network, k); }, flags.auto_chunks(),
        requested.chunks_per_npu(), options, topology.topology);
    progress.finish();
    const Collective& coll = run.result.algorithm.collective();
    if (run.skipped_reason) throw Error("--algorithm " + algorithm + ": " + *run.skipped_reason);

    if (!out_dir.empty()) write_outputs(run.result.algorithm, full);
    const nlohmann::ordered_json astra = astra_sim_expectation(run.result.algorithm, full);
    const std::optional<LowerBound> bound = bound_if_affordable(full, coll);
    const Report report = make_report(run, coll, bound);
    if (json) {
      nlohmann::ordered_json out;
      out["topology"] = full.name();
      out["npus"] = network.npus();
      out["links"] = network.num_links();
      out["collective"] = to_string(coll.kind());
      out["npus_in_collective"] = coll.num_members();
      if (has_root(coll.kind())) out["root"] = coll.root();
      if (coll.kind() == CollectiveKind::kAllReduce && algorithm == "tacos")
        out["all_reduce_mode"] = collective.all_reduce_mode;
      out["size_bytes"] = coll.size();
      out["chunks_per_npu"] = coll.chunks_per_npu();
      out["chunk_bytes"] = coll.chunk_bytes();
      out["algorithm"] = algorithm;
      out["link_model"] = to_string(options.link_model);
      out["seed"] = run.result.seed;
      out["trials"] = collective.trials;
      out["collective_time_us"] = to_micros(run.result.collective_time);
      out["algbw_gbps"] = report.algbw_gbps;
      out["busbw_gbps"] = report.busbw_gbps;
      out["lower_bound_us"] = json_or_null(report.lower_bound_us);
      out["bound_ratio"] = json_or_null(report.bound_ratio);
      out["transfers"] = run.result.transfers;
      out["wasted_transfers"] = run.result.wasted_transfers;
      out["verified"] = run.verified ? nlohmann::ordered_json(*run.verified) : nullptr;
      out["synthesis_seconds"] = run.result.seconds;
      out["peak_memory_mib"] = peak_memory_mib();
      if (!out_dir.empty()) out["out"] = out_dir;
      if (!astra.is_null()) out["astra_sim"] = astra;
      std::cout << out.dump(2) << std::endl;
      return;
    }
    std::printf("%s %s on %s: %d NPUs, %d links, link model %s\n", algorithm.c_str(),
                to_string(coll.kind()).c_str(), full.name().c_str(), network.npus(),
                network.num_links(), to_string(options.link_model).c_str());
    if (coll.num_members() != network.npus() || has_root(coll.kind()))
      std::printf("  collective       %d NPUs%s\n", coll.num_members(),
                  has_root(coll.kind()) ? (", root " + std::to_string(coll.root())).c_str() : "");
    std::printf("  size             %s buffer, %d chunk(s) per NPU of %s\n",
                format_bytes(coll.size()).c_str(), coll.chunks_per_npu(),
                format_bytes(coll.chunk_bytes()).c_str());
    std::printf("  collective time  %s us\n", format_micros(run.result.collective_time).c_str());
    std::printf("  algbw / busbw    %.2f / %.2f GB/s (1e9 B/s, as nccl-tests)\n", report.algbw_gbps,
                report.busbw_gbps);
    if (report.lower_bound_us)
      std::printf("  lower bound      %.6g us (time = %.3f x bound)\n", *report.lower_bound_us,
                  *report.bound_ratio);
    std::printf("  transfers        %lld (%s)\n", static_cast<long long>(run.result.transfers),
                run.verified ? "verified" : "not kept: --time-only");
    if (algorithm == "tacos")
      std::printf("  synthesis time   %.3f s (%d trial(s), best seed %llu)\n", run.result.seconds,
                  collective.trials, static_cast<unsigned long long>(run.result.seed));
    else
      std::printf("  synthesis time   %.3f s\n", run.result.seconds);
    std::printf("  peak memory      %.1f MiB\n", peak_memory_mib());
    if (!out_dir.empty())
      std::printf("  wrote            %s (%s)\n", out_dir.c_str(), formats.c_str());
    if (!astra.is_null() && astra["expected_time_us"].is_number())
      std::printf("  ASTRA-sim        %s: %.6f us expected (%s)\n",
                  astra["backend"].get<std::string>().c_str(),
                  astra["expected_time_us"].get<double>(),
                  astra["matches_reported"].get<bool>() ? "= the time above"
                                                        : astra["note"].get<std::string>().c_str());
  }
};

}  // namespace

void add_synthesize_command(CLI::App& app) {
  auto cmd = std::make_shared<SynthesizeCommand>();
  CLI::App* sub = app.add_subcommand(
      "synthesize", "Synthesize a collective algorithm, verify it and report its time");
  cmd->topology.add_to(*sub);
  cmd->collective.add_to(*sub);
  cmd->flags.add_to(*sub);
  sub->add_option("--algorithm", cmd->algorithm,
                  "tacos (synthesized) or a baseline: ring, direct, rhd, dbt, hierarchical")
      ->capture_default_str();
  sub->add_flag("--json", cmd->json,
                "Print one JSON object on stdout instead of the summary (algbw_gbps, busbw_gbps: "
                "GB/s of 10^9 B/s, as nccl-tests)");
  sub->add_flag("--time-only", cmd->time_only,
                "Report time and statistics without keeping the transfer list (no verification, "
                "no --out); for very large systems");
  sub->add_option("--out", cmd->out_dir,
                  "Write the algorithm into DIR in the --format(s): DIR/algorithm.json, "
                  "DIR/chakra/tacos.RANK.et with DIR/astra/ (ASTRA-sim run files), "
                  "DIR/msccl/NAME.xml");
  sub->add_option("--format", cmd->formats, "Comma list of json, chakra, msccl (with --out)")
      ->capture_default_str()
      ->each([cmd](const std::string&) { cmd->formats_given = true; });
  cmd->msccl.add_to(*sub);
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace tacos::cli
