#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common_options.h"
#include "progress.h"
#include "tacos/algorithm/verify.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/collective/npu_list.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/synthesis/synthesizer.h"

namespace tacos::cli {
namespace {

constexpr int kBoundNpuLimit = 4096;

double bound_ratio(Time collective_time, const LowerBound& bound) {
  return bound.lower_bound_us > 0 ? to_micros(collective_time) / bound.lower_bound_us : 0.0;
}

double peak_memory_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

struct SynthesizeCommand {
  TopologyOptions topology;
  SynthesisFlags flags;
  std::string collective = "all-gather";
  NpuId root = 0;
  bool root_given = false;
  std::string npus;
  bool npus_given = false;
  std::string all_reduce_mode = "pipelined";
  std::string size = "64MiB";
  int trials = 1;
  int threads = 0;
  bool json = false;
  bool time_only = false;
  std::string out_dir;

  void run() const {
    const CollectiveKind kind = parse_collective_kind(collective);
    const Bytes bytes = parse_size(size);
    const LinkModel model = flags.model();
    if (trials < 1) throw Error("--trials: must be at least 1, got " + std::to_string(trials));
    if (threads < 0) throw Error("--threads: must not be negative");
    const Topology full = topology.load();
    const Topology network = full.unwind_switches();
    if (root_given && !has_root(kind))
      throw Error("--root: " + to_string(kind) + " has no root");
    const std::vector<NpuId> members = npus_given ? parse_npu_list(npus) : std::vector<NpuId>{};
    const Collective coll =
        Collective::make(kind, network.npus(), bytes, flags.chunks_per_npu, members, root);
    const AllReduceMode mode = parse_all_reduce_mode(all_reduce_mode);
    if (time_only && !out_dir.empty())
      throw Error("--out cannot be combined with --time-only (no transfers are kept)");
    if (!out_dir.empty() && std::filesystem::exists(out_dir) &&
        !std::filesystem::is_directory(out_dir))
      throw Error("--out: " + out_dir + " exists and is not a directory");

    SynthesisOptions options;
    options.seed = flags.seed;
    options.trials = trials;
    options.threads = threads;
    options.link_model = model;
    options.keep_transfers = !time_only;
    options.all_reduce_mode = mode;
    ProgressReporter progress("synthesize");
    options.progress = [&progress](double f) { progress.update(f); };
    SynthesisResult result = synthesize_tacos(network, coll, options);
    progress.finish();

    // Every reported schedule is replayed by the verifier; --time-only keeps none to check.
    std::optional<bool> verified;
    if (!time_only) {
      const VerifyResult check = verify_algorithm(result.algorithm, network, model);
      if (!check.ok || check.collective_time != result.collective_time)
        throw Error("synthesize: internal check failed, the algorithm does not verify: " +
                    (check.ok ? std::string("replayed time differs from the synthesized time")
                              : check.error));
      verified = true;
    }
    if (!out_dir.empty()) {
      std::filesystem::create_directories(out_dir);
      write_algorithm_json(result.algorithm, (std::filesystem::path(out_dir) / "algorithm.json"));
    }

    // The exact cut bound costs max-flows; beyond a few thousand NPUs `tacos bound` computes it.
    std::optional<LowerBound> bound;
    if (full.npus() <= kBoundNpuLimit) bound = compute_lower_bound(full, coll);
    const double seconds_per_ps = 1e-12;
    const double algbw = result.collective_time > 0
                             ? static_cast<double>(bytes) / kBytesPerGB /
                                   (static_cast<double>(result.collective_time) * seconds_per_ps)
                             : 0.0;
    if (json) {
      nlohmann::ordered_json out;
      out["topology"] = full.name();
      out["npus"] = network.npus();
      out["links"] = network.num_links();
      out["collective"] = to_string(kind);
      out["npus_in_collective"] = coll.num_members();
      if (has_root(kind)) out["root"] = coll.root();
      if (kind == CollectiveKind::kAllReduce) out["all_reduce_mode"] = to_string(mode);
      out["size_bytes"] = bytes;
      out["chunks_per_npu"] = flags.chunks_per_npu;
      out["chunk_bytes"] = coll.chunk_bytes();
      out["algorithm"] = "tacos";
      out["link_model"] = to_string(model);
      out["seed"] = result.seed;
      out["trials"] = trials;
      out["collective_time_us"] = to_micros(result.collective_time);
      out["algbw_gbps"] = algbw;
      if (bound) {
        out["lower_bound_us"] = bound->lower_bound_us;
        out["bound_ratio"] = bound_ratio(result.collective_time, *bound);
      } else {
        out["lower_bound_us"] = nullptr;
        out["bound_ratio"] = nullptr;
      }
      out["transfers"] = result.transfers;
      out["wasted_transfers"] = result.wasted_transfers;
      out["verified"] = verified ? nlohmann::ordered_json(*verified) : nlohmann::ordered_json();
      out["synthesis_seconds"] = result.seconds;
      out["peak_memory_mib"] = peak_memory_mib();
      if (!out_dir.empty()) out["out"] = out_dir;
      std::cout << out.dump(2) << std::endl;
      return;
    }
    std::printf("tacos %s on %s: %d NPUs, %d links, link model %s\n", to_string(kind).c_str(),
                full.name().c_str(), network.npus(), network.num_links(),
                to_string(model).c_str());
    if (coll.num_members() != network.npus() || has_root(kind))
      std::printf("  collective       %d NPUs%s\n", coll.num_members(),
                  has_root(kind) ? (", root " + std::to_string(coll.root())).c_str() : "");
    std::printf("  size             %s buffer, %d chunk(s) per NPU of %s\n",
                format_bytes(bytes).c_str(), flags.chunks_per_npu,
                format_bytes(coll.chunk_bytes()).c_str());
    std::printf("  collective time  %s us\n", format_micros(result.collective_time).c_str());
    std::printf("  algorithm bw     %.2f GB/s\n", algbw);
    if (bound)
      std::printf("  lower bound      %s us (time = %.3f x bound)\n",
                  format_micros(static_cast<Time>(bound->lower_bound_us * 1e6 + 0.5)).c_str(),
                  bound_ratio(result.collective_time, *bound));
    std::printf("  transfers        %lld (%s)\n", static_cast<long long>(result.transfers),
                verified ? "verified" : "not kept: --time-only");
    std::printf("  synthesis time   %.3f s (%d trial(s), best seed %llu)\n", result.seconds,
                trials, static_cast<unsigned long long>(result.seed));
    std::printf("  peak memory      %.1f MiB\n", peak_memory_mib());
    if (!out_dir.empty()) std::printf("  wrote            %s/algorithm.json\n", out_dir.c_str());
  }
};

}  // namespace

void add_synthesize_command(CLI::App& app) {
  auto cmd = std::make_shared<SynthesizeCommand>();
  CLI::App* sub = app.add_subcommand(
      "synthesize", "Synthesize a collective algorithm with TACOS, verify it and report its time");
  cmd->topology.add_to(*sub);
  sub->add_option("--collective", cmd->collective,
                  "all-gather, reduce-scatter, all-reduce, broadcast, reduce, gather, scatter or "
                  "all-to-all")
      ->capture_default_str();
  sub->add_option("--size", cmd->size,
                  "The collective's whole buffer per NPU: All-Gather output, Reduce-Scatter "
                  "input, All-Reduce buffer, Broadcast/Reduce buffer, Gather output at the root, "
                  "Scatter input at the root, All-to-All send buffer; e.g. 64MiB, 1GiB, 512KB")
      ->capture_default_str();
  sub->add_option("--root", cmd->root,
                  "Root NPU of broadcast, reduce, gather and scatter (default 0)")
      ->each([cmd](const std::string&) { cmd->root_given = true; });
  sub->add_option("--npus", cmd->npus,
                  "Run the collective among these NPUs only, e.g. 0-7,16-23 (a process group); "
                  "every NPU may still relay. Default: all NPUs")
      ->each([cmd](const std::string&) { cmd->npus_given = true; });
  sub->add_option("--all-reduce-mode", cmd->all_reduce_mode,
                  "All-Reduce as 'sequential' (Reduce-Scatter, then All-Gather) or 'pipelined' "
                  "(each chunk's All-Gather starts once its reduction is done)")
      ->capture_default_str();
  cmd->flags.add_to(*sub);
  sub->add_option("--trials", cmd->trials, "Seeds tried (seed, seed+1, ...); the fastest is kept")
      ->capture_default_str();
  sub->add_option("--threads", cmd->threads, "Threads for trials (0 = all cores)")
      ->capture_default_str();
  sub->add_flag("--json", cmd->json, "Print one JSON object on stdout instead of the summary");
  sub->add_flag("--time-only", cmd->time_only,
                "Report time and statistics without keeping the transfer list (no verification, "
                "no --out); for very large systems");
  sub->add_option("--out", cmd->out_dir, "Write DIR/algorithm.json");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace tacos::cli
