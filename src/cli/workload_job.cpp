// tacos workload: a training-step workload's collectives synthesized on their groups and the
// ASTRA-sim bundle that runs the step with them (see workload_job.h, docs/workload.md).
#include "workload_job.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "algorithm_runner.h"
#include "report.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/common/atomic_file.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/chakra.h"
#include "tacos/io/workload_step.h"
#include "tacos/synthesis/request.h"
#include "tacos/topology/sub_topology.h"

namespace tacos::cli {
namespace {

namespace fs = std::filesystem;

std::string members_text(const std::vector<NpuId>& members) {
  std::string text;
  for (NpuId m : members) {
    if (!text.empty()) text += ',';
    text += std::to_string(m);
  }
  return text;
}

std::string describe(const WorkloadCollective& c) {
  return to_string(c.kind) + " of " + format_bytes(c.comm_size) + " on ranks " +
         members_text(c.members);
}

// The system config: the roofline for compute nodes, and either the per-node custom
// implementations (splits 1: with more every rank deadlocked, issue 27) or one native
// algorithm for every collective kind (splits 1 too; astra-run tunes it per algorithm).
std::string system_json(const WorkloadJob& job, const std::string& native) {
  std::string out = "{\n  \"scheduling-policy\": \"FIFO\",\n";
  out += "  \"preferred-dataset-splits\": 1,\n";
  if (native.empty()) {
    out += "  \"per-node-custom-implementation\": \"implementations.yaml\",\n";
  } else {
    for (CollectiveKind k : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                             CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll})
      out += "  \"" + *astra_implementation_key(k) + "\": [\"" + native + "\"],\n";
  }
  char numbers[160];
  std::snprintf(
      numbers, sizeof numbers,
      "  \"roofline-enabled\": 1,\n  \"peak-perf\": %.17g,\n  \"local-mem-bw\": %.17g\n}\n",
      job.peak_tflops, job.local_mem_gbps);
  return out + numbers;
}

// Synthesizes `c` on the NPUs of its group (renumbered 0..k-1, the positions ASTRA-sim gives
// an algorithm's ranks), with the best baseline and the lower bound beside it.
WorkloadRow plan_collective(const WorkloadJob& job, const Topology& full,
                            const WorkloadCollective& c, Algorithm& kept) {
  if (c.members.size() < 2)
    throw Error("workload: " + describe(c) +
                ": a collective of one rank moves no data; tacos has no algorithm to give it");
  const std::optional<Topology> group = sub_topology(full, c.members);
  if (!group)
    throw Error("workload: " + describe(c) +
                " would need relays through NPUs outside its group on " + job.topology.topology +
                ", which ASTRA-sim cannot run (one communication in flight per rank: it "
                "deadlocks or crashes when those NPUs run their own collectives)");
  SynthesisRequest request;
  request.collective = c.kind;
  request.size = c.size();
  request.auto_chunks = job.chunks_per_npu == "auto";
  request.chunks_per_npu = request.auto_chunks ? 1 : 0;
  if (!request.auto_chunks) {
    try {
      request.chunks_per_npu = std::stoi(job.chunks_per_npu);
    } catch (const std::exception&) {
    }
    if (request.chunks_per_npu < 1 || std::to_string(request.chunks_per_npu) != job.chunks_per_npu)
      throw Error("--chunks-per-npu: expected a whole number >= 1 or 'auto', got '" +
                  job.chunks_per_npu + "'");
  }
  request.options.seed = job.seed;
  request.options.link_model = LinkModel::kAstra;
  WorkloadRow row;
  row.collective = c;
  request.algorithm = job.algorithm;
  const AlgorithmRun run = synthesize(*group, request);
  if (run.skipped_reason)
    throw Error("--algorithm " + job.algorithm + ": " + describe(c) + ": " + *run.skipped_reason);
  row.winner = run.portfolio_winner.empty() ? job.algorithm : run.portfolio_winner;
  row.chunks_per_npu = run.result.algorithm.collective().chunks_per_npu();
  row.time = run.result.collective_time;
  for (const std::string& name : algorithms_for(*group)) {
    if (name == "tacos") continue;
    SynthesisRequest baseline = request;
    baseline.algorithm = name;
    baseline.portfolio = false;
    const AlgorithmRun b = synthesize(*group, baseline);
    if (b.skipped_reason) continue;
    if (row.best_baseline.empty() || b.result.collective_time < row.baseline_time) {
      row.best_baseline = name;
      row.baseline_time = b.result.collective_time;
    }
  }
  row.bound_us = compute_lower_bound(*group, run.result.algorithm.collective()).lower_bound_us;
  kept = run.result.algorithm;
  return row;
}

// Writes the algorithm's Chakra files as ALGORITHMS/cI.POS.et, reads them back into `files`
// and returns the time they take in ASTRA-sim (their replay with its whole-ns link times: a
// 0 us order node runs 1 ns there, and each link crossing is cut to whole ns, so this can
// differ from the synthesized time).
Time write_algorithm(const Algorithm& algorithm, const Topology& group, int index,
                     const fs::path& staging, const fs::path& algorithms, EtTrace& files) {
  ChakraOptions options;
  options.prefix = "c" + std::to_string(index);
  const fs::path scratch = staging / ("scratch-" + options.prefix);
  write_chakra(algorithm, group, scratch.string(), options);
  files = read_chakra((scratch / "chakra").string());
  const Time replay =
      simulate_chakra(files, group, LinkModel::kAstra, algorithm.collective().size(),
                      /*one_send_in_flight=*/false, /*congestion=*/true, /*whole_ns=*/true)
          .collective_time;
  for (const auto& entry : fs::directory_iterator(scratch / "chakra"))
    fs::rename(entry.path(), algorithms / entry.path().filename());
  fs::remove_all(scratch);
  return replay;
}

nlohmann::ordered_json row_json(const WorkloadRow& row) {
  nlohmann::ordered_json j;
  j["collective"] = to_string(row.collective.kind);
  j["comm_size_bytes"] = row.collective.comm_size;
  j["size_bytes"] = row.collective.size();
  j["members"] = row.collective.members;
  j["group_id"] = row.group_id;
  j["nodes"] = row.collective.nodes;
  j["per_rank"] = row.per_rank;
  j["algorithm"] = row.winner;
  j["chunks_per_npu"] = row.chunks_per_npu;
  j["time_us"] = to_micros(row.time);
  j["astra_sim_expected_us"] = to_micros(row.astra_time);
  j["best_baseline"] = row.best_baseline.empty() ? nlohmann::ordered_json(nullptr)
                                                 : nlohmann::ordered_json(row.best_baseline);
  j["baseline_time_us"] = row.best_baseline.empty()
                              ? nlohmann::ordered_json(nullptr)
                              : nlohmann::ordered_json(to_micros(row.baseline_time));
  j["lower_bound_us"] = row.bound_us;
  return j;
}

// What `tacos workload --json` prints, less "out".
nlohmann::ordered_json summary_json(const WorkloadJob& job, const WorkloadOutcome& outcome) {
  const ChakraWorkload& workload = outcome.workload;
  nlohmann::ordered_json json;
  json["workload"] = workload.prefix;
  json["ranks"] = workload.ranks;
  json["topology"] = job.topology.topology;
  json["link_model"] = "astra";
  json["compute_nodes_rank0"] = workload.compute_nodes.empty() ? 0 : workload.compute_nodes[0];
  json["collectives"] = nlohmann::ordered_json::array();
  for (const WorkloadRow& row : outcome.rows) json["collectives"].push_back(row_json(row));
  // What tacos predicts without ASTRA-sim: per rank, its collectives one after another
  // (compute and the overlap of collectives are ASTRA-sim's to time).
  nlohmann::ordered_json serial = nlohmann::ordered_json::array();
  for (int r = 0; r < workload.ranks; ++r) {
    Time total = 0;
    for (const WorkloadCollNode& n : workload.coll_nodes[static_cast<std::size_t>(r)])
      total += outcome.rows[static_cast<std::size_t>(n.collective)].astra_time;
    serial.push_back(to_micros(total));
  }
  json["serial_communication_us"] = serial;
  return json;
}

// The step as ASTRA-sim runs it: the rewritten workload (DIR/astra/workload.RANK.et), its
// groups and the per-node implementation YAML. Returns each collective node id's distinct
// collective.
std::map<std::uint64_t, int> write_step(const WorkloadOutcome& outcome, const fs::path& astra) {
  const ChakraWorkload& workload = outcome.workload;
  std::vector<int> group_ids;
  std::string groups = "{";
  for (const WorkloadRow& row : outcome.rows) {
    group_ids.push_back(row.group_id);
    groups += std::string(groups.size() > 1 ? ", " : "") + "\"" + std::to_string(row.group_id) +
              "\": [" + members_text(row.collective.members) + "]";
  }
  write_file_atomically((astra / "groups.json").string(), groups + "}\n");
  const std::map<std::uint64_t, int> nodes =
      write_bundle_workload(workload, group_ids, (astra / "workload").string());
  std::string yaml;
  for (const auto& [id, c] : nodes)
    yaml += std::to_string(id) + ": algorithms/c" + std::to_string(c) + "\n";
  write_file_atomically((astra / "implementations.yaml").string(), yaml);
  return nodes;
}

// tacos's prediction of the step (io/workload_step.h), from the files just written.
StepPrediction predict_step(const WorkloadJob& job, const WorkloadOutcome& outcome,
                            const std::vector<EtTrace>& algorithms,
                            const std::map<std::uint64_t, int>& nodes, const fs::path& astra) {
  const EtTrace step = read_chakra((astra / "workload").string());
  std::vector<StepCollective> collectives;
  for (std::size_t i = 0; i < outcome.rows.size(); ++i)
    collectives.push_back({&algorithms[i], outcome.rows[i].collective.members});
  Roofline roofline;
  roofline.peak_tflops = job.peak_tflops;
  roofline.local_mem_gbps = job.local_mem_gbps;
  return simulate_workload_step(step, collectives, nodes, outcome.full, roofline);
}

nlohmann::ordered_json prediction_json(const StepPrediction& p) {
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < p.rank_finish.size(); ++r) {
    nlohmann::ordered_json j;
    j["rank"] = r;
    j["step_time_us"] = to_micros(p.rank_finish[r]);
    j["compute_us"] = to_micros(p.compute[r]);
    j["exposed_communication_us"] = to_micros(p.rank_finish[r] - p.compute[r]);
    ranks.push_back(j);
  }
  return ranks;
}

// The rest of ASTRA (DIR/astra when moved into place): each collective alone, the network and
// the system configs.
void write_bundle(const WorkloadJob& job, const WorkloadOutcome& outcome,
                  const std::map<std::uint64_t, int>& nodes, const std::string& network,
                  const fs::path& astra) {
  std::map<int, std::uint64_t> first_node;
  for (const auto& [id, c] : nodes) first_node.emplace(c, id);
  for (std::size_t i = 0; i < outcome.rows.size(); ++i) {
    const WorkloadCollective& c = outcome.rows[i].collective;
    write_single_collective_workload(outcome.workload.ranks, c, outcome.rows[i].group_id,
                                     first_node.at(static_cast<int>(i)),
                                     (astra / "alone" / ("c" + std::to_string(i))).string());
  }
  write_file_atomically((astra / "network.yml").string(), network);
  write_file_atomically((astra / "mem.json").string(),
                        "{\"memory-type\": \"NO_MEMORY_EXPANSION\"}\n");
  write_file_atomically((astra / "system.json").string(), system_json(job, ""));
  for (const char* native : {"ring", "direct", "halvingDoubling"})
    write_file_atomically((astra / (std::string("native-") + native + ".json")).string(),
                          system_json(job, native));
}

}  // namespace

WorkloadOutcome run_workload(const WorkloadJob& job) {
  if (!(job.peak_tflops > 0)) throw Error("--peak-tflops: expected a positive number");
  if (!(job.local_mem_gbps > 0)) throw Error("--local-mem-bw: expected a positive number");
  require_algorithm("--algorithm", job.algorithm);
  WorkloadOutcome outcome;
  outcome.full = job.topology.load();
  outcome.workload = read_chakra_workload(job.et_prefix, job.comm_groups);
  const ChakraWorkload& workload = outcome.workload;
  if (workload.ranks != outcome.full.npus())
    throw Error("--topology: " + job.topology.topology + " has " +
                std::to_string(outcome.full.npus()) + " NPUs but the workload has " +
                std::to_string(workload.ranks) + " ranks");
  const std::optional<std::string> network = astra_network_yaml(outcome.full);
  if (!job.out_dir.empty() && !network)
    throw Error("--topology: " + job.topology.topology +
                " is not an ASTRA-sim network (ring, fc or switch dimensions)");

  // The bundle is built in a staging folder beside DIR (or a temporary one when only the
  // summary is asked for: the replay of the files is part of it) and moved into place when
  // complete, so a refused workload leaves nothing behind.
  fs::path out = fs::path(job.out_dir).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();  // "DIR/"
  const fs::path staging =
      job.out_dir.empty()
          ? fs::temp_directory_path() / ("tacos-workload-" + std::to_string(::getpid()))
          : (out.has_parent_path() ? out.parent_path() : fs::path(".")) /
                (".tacos-workload-" + out.filename().string() + "-" + std::to_string(::getpid()));
  fs::remove_all(staging);
  const fs::path astra = staging / "astra";
  fs::create_directories(astra / "algorithms");
  fs::create_directories(astra / "alone");
  try {
    std::vector<EtTrace> algorithms(workload.collectives.size());
    for (std::size_t i = 0; i < workload.collectives.size(); ++i) {
      Algorithm algorithm;
      WorkloadRow row = plan_collective(job, outcome.full, workload.collectives[i], algorithm);
      row.group_id = static_cast<int>(i) + 1;
      row.per_rank = row.collective.nodes / static_cast<int>(row.collective.members.size());
      row.astra_time =
          write_algorithm(algorithm, *sub_topology(outcome.full, row.collective.members),
                          static_cast<int>(i), staging, astra / "algorithms", algorithms[i]);
      outcome.rows.push_back(std::move(row));
    }
    const std::map<std::uint64_t, int> nodes = write_step(outcome, astra);
    outcome.prediction = predict_step(job, outcome, algorithms, nodes, astra);

    outcome.json = summary_json(job, outcome);
    nlohmann::ordered_json& json = outcome.json;
    json["predicted_step_us"] = to_micros(outcome.prediction.step_time);
    json["predicted_ranks"] = prediction_json(outcome.prediction);
    json["out"] =
        job.out_dir.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(job.out_dir);
    if (job.out_dir.empty()) {
      fs::remove_all(staging);
      return outcome;
    }
    write_bundle(job, outcome, nodes, *network, astra);
    write_file_atomically((staging / "workload.json").string(), json_text(json) + "\n");
    fs::create_directories(out);
    fs::remove_all(out / "astra");
    fs::rename(astra, out / "astra");
    fs::rename(staging / "workload.json", out / "workload.json");
    fs::remove_all(staging);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
  return outcome;
}

}  // namespace tacos::cli
