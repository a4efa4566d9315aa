#include "algorithm_outputs.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <vector>

#include "tacos/common/atomic_file.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/io/chakra.h"
#include "tacos/io/msccl_xml.h"
#include "tacos/io/trace.h"
#include "tacos/io/viewer.h"
#include "tacos/simulation/simulator.h"

namespace tacos::cli {
namespace {

// Whether write_algorithm_outputs wrote `format` (there is an --out and --format lists it).
bool written(const std::string& out_dir, const std::string& formats, std::string_view format) {
  if (out_dir.empty()) return false;
  const auto listed = split_list(formats);
  return std::find(listed.begin(), listed.end(), format) != listed.end();
}

}  // namespace

std::string msccl_file(const Algorithm& algorithm, const std::string& out_dir) {
  return (std::filesystem::path(out_dir) / "msccl" /
          ("tacos_" + to_string(algorithm.collective().kind()) + ".xml"))
      .string();
}

void write_algorithm_outputs(const Algorithm& algorithm, const Topology& full,
                             const std::string& out_dir, const std::string& formats,
                             const MscclWriteOptions& msccl, const Topology* network) {
  namespace fs = std::filesystem;
  const fs::path target = fs::path(out_dir).lexically_normal();
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  fs::path staging;
  try {
    fs::create_directories(parent);
    for (int attempt = 0;; ++attempt) {
      // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "." + std::string.
      std::string name = ".";
      name += target.filename().string();
      name += ".tacos-staging-" + std::to_string(::getpid()) + "-" + std::to_string(attempt);
      staging = parent / name;
      if (fs::create_directory(staging)) break;
    }
  } catch (const fs::filesystem_error& e) {
    // The staging folder goes next to DIR, so this is about DIR's parent (say /proc).
    throw Error("--out " + out_dir + ": cannot create a folder in " + parent.string() + " (" +
                e.code().message() + "); choose a writable place");
  }
  try {
    std::vector<std::string> produced;
    for (const std::string& format : split_list(formats)) {
      if (format == "json") {
        write_algorithm_json(algorithm, (staging / "algorithm.json").string());
        produced.push_back("algorithm.json");
      } else if (format == "chakra") {
        write_chakra(algorithm, full, staging.string());
        produced.insert(produced.end(), {"chakra", "astra"});
      } else if (format == "msccl") {
        fs::create_directories(staging / "msccl");
        const std::string name = "tacos_" + to_string(algorithm.collective().kind());
        write_msccl_xml(algorithm, network != nullptr ? *network : full,
                        msccl_file(algorithm, staging.string()), name, msccl);
        produced.push_back("msccl");
      } else if (format == "trace") {
        // Timed by the simulator on what the algorithm runs on, as the reported time is.
        write_trace(algorithm, network != nullptr ? *network : full, algorithm.link_model,
                    (staging / "trace.json").string());
        produced.push_back("trace.json");
      } else if (format == "html") {
        const Topology& on = network != nullptr ? *network : full;
        write_file_atomically((staging / "view.html").string(),
                              viewer_html(on, {{algorithm.synthesizer, &algorithm,
                                                simulate(algorithm, on, algorithm.link_model)}}));
        produced.push_back("view.html");
      } else {
        throw Error("--format: unknown format '" + format +
                    "' (expected json, chakra, msccl, trace, html)");
      }
    }
    fs::create_directories(target);
    for (const char* owned :
         {"algorithm.json", "chakra", "astra", "msccl", "trace.json", "view.html"})
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

// ASTRA-sim's congestion-aware backend runs 1-D networks with the ET semantics tacos simulates
// (links timed as --link-model astra); the congestion-unaware binary runs the rest without
// contention. Neither models multicast switches: the Chakra ETs name NPU-to-NPU messages, a
// multicast message becomes one send per receiver, so `expected_time_us` is that unicast
// execution and `matches_reported` says whether it reproduces the multicast time.
nlohmann::ordered_json astra_sim_expectation(const Algorithm& algorithm, const Topology& full,
                                             const std::string& out_dir,
                                             const std::string& formats) {
  if (!written(out_dir, formats, "chakra")) return nullptr;
  nlohmann::ordered_json info;
  const std::optional<std::string> network = astra_network_yaml(full);
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
  else if (algorithm.has_multicast())
    info["note"] =
        std::string(
            "ASTRA-sim does not model multicast switches: the Chakra ETs send each copy "
            "of a multicast message on its own, and every copy crosses the sender's "
            "port") +
        (per_rank ? "; approximate, too: ASTRA-sim has no " + to_string(kind) +
                        " collective node and runs the per-rank ETs with one send in flight per "
                        "rank"
                  : "");
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

nlohmann::ordered_json chakra_replay(const Algorithm& algorithm, const Topology& network,
                                     LinkModel model, const std::string& out_dir,
                                     const std::string& formats) {
  if (!written(out_dir, formats, "chakra")) return nullptr;
  const EtTrace trace = read_chakra((std::filesystem::path(out_dir) / "chakra").string());
  const Time replay =
      simulate_chakra(trace, network, model, algorithm.collective().size()).collective_time;
  const bool matches = replay == algorithm.collective_time;
  nlohmann::ordered_json info;
  info["time_us"] = to_micros(replay);
  info["matches_reported"] = matches;
  if (matches)
    info["note"] = "the Chakra files replay to the reported time";
  else if (algorithm.has_multicast())
    info["note"] =
        "Chakra (as ASTRA-sim runs it) has no multicast: each copy of a multicast message is a "
        "send of its own, and every copy crosses the sender's port";
  else if (model == LinkModel::kAstra)
    info["note"] =
        "under --link-model astra a 0 us COMP_NODE runs for 1 ns, as in ASTRA-sim: the order "
        "nodes that keep a link's sends in the synthesized order (longer than messages that "
        "take under 1 ns on their link) and the reductions' nodes";
  else
    info["note"] = "the Chakra files' dependencies do not reproduce the schedule's timing";
  return info;
}

nlohmann::ordered_json msccl_replay(const Algorithm& algorithm, const Topology& network,
                                    LinkModel model, const std::string& path, Time reported) {
  // Timed as `tacos simulate` times the file.
  const Algorithm read = read_msccl_xml(path, network, model, std::nullopt);
  const Time replay = simulate(read, network, model).collective_time;
  nlohmann::ordered_json info;
  info["time_us"] = to_micros(replay);
  info["matches_reported"] = replay == reported;
  if (replay == reported) {
    info["note"] = "the MSCCL file replays to the reported time";
    return info;
  }
  std::vector<std::string> why;
  if (algorithm.has_multicast())
    why.push_back(
        "MSCCL has no multicast: each copy of a multicast message is its own send over the "
        "sender's port");
  bool split = false;
  for (const Transfer& t : algorithm.transfers()) split = split || t.num_chunks > 71;
  if (split)
    why.push_back(
        "a message of more than 71 chunks is split into several (MSCCL's cnt < 72), each paying "
        "the link latency");
  // The writer marks a file whose ports' order it had to leave to the executor.
  std::ifstream in(path);
  std::string root;
  std::getline(in, root, '>');
  if (root.find(" tacos_port_order=\"0\"") != std::string::npos)
    why.push_back(
        "keeping each switch port's message order would make steps wait on more than 128 thread "
        "blocks of a GPU (the executor keeps that id in an int8), so the file leaves the order "
        "to the executor");
  if (why.empty()) why.push_back("the MSCCL execution orders its messages differently");
  std::string note;
  for (std::size_t k = 0; k < why.size(); ++k) note += (k ? "; " : "") + why[k];
  info["note"] = note;
  return info;
}

nlohmann::ordered_json msccl_replay(const Algorithm& algorithm, const Topology& network,
                                    LinkModel model, const std::string& out_dir,
                                    const std::string& formats) {
  if (!written(out_dir, formats, "msccl")) return nullptr;
  return msccl_replay(algorithm, network, model, msccl_file(algorithm, out_dir),
                      algorithm.collective_time);
}

void note_replay(const nlohmann::ordered_json& replay, const std::string& path, Time reported) {
  if (replay.is_null() || replay["matches_reported"].get<bool>()) return;
  const Time time = std::llround(replay["time_us"].get<double>() * 1e6);
  std::fprintf(stderr, "tacos: note: %s replays to %s us, not the reported %s us: %s\n",
               path.c_str(), format_micros(time).c_str(), format_micros(reported).c_str(),
               replay["note"].get<std::string>().c_str());
}

}  // namespace tacos::cli
