#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common_options.h"
#include "report.h"
#include "tacos/bounds/lower_bound.h"
#include "tacos/collective/npu_list.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos::cli {
namespace {

struct BoundCommand {
  TopologyOptions topology;
  SynthesisFlags flags;
  std::string collective = "all-gather";
  NpuId root = 0;
  bool root_given = false;
  std::string npus;
  std::string size = "64MiB";
  bool json = false;

  void run() const {
    const CollectiveKind kind = parse_collective_kind(collective);
    const Bytes bytes = parse_size(size);
    (void)flags.model();  // validated for symmetry with synthesize; bounds hold for both models
    if (root_given && !has_root(kind)) throw Error("--root: " + to_string(kind) + " has no root");
    const Topology full = topology.load();  // switch devices kept: they are cut vertices
    const std::vector<NpuId> members = npus.empty() ? std::vector<NpuId>{} : parse_npu_list(npus);
    const Collective coll =
        Collective::make(kind, full.npus(), bytes, flags.chunks(), members, root);
    const LowerBound bound = compute_lower_bound(full, coll);
    // nccl-tests' convention (report.h): 1e9 B/s, busbw = algbw x the collective's bus factor.
    const double algbw =
        bound.bandwidth_bound_us > 0
            ? static_cast<double>(bytes) / kNcclBytesPerGB / (bound.bandwidth_bound_us * 1e-6)
            : 0.0;
    const double busbw = algbw * bus_factor(kind, coll.num_members());

    if (json) {
      nlohmann::ordered_json out;
      out["topology"] = full.name();
      out["npus"] = full.npus();
      out["switches"] = full.switches();
      out["collective"] = to_string(kind);
      out["npus_in_collective"] = coll.num_members();
      if (has_root(kind)) out["root"] = coll.root();
      out["size_bytes"] = bytes;
      out["chunks_per_npu"] = flags.chunks();
      out["chunk_bytes"] = coll.chunk_bytes();
      out["lower_bound_us"] = bound.lower_bound_us;
      out["latency_bound_us"] = bound.latency_bound_us;
      out["bandwidth_bound_us"] = bound.bandwidth_bound_us;
      out["algbw_at_bound_gbps"] =
          algbw > 0 ? nlohmann::ordered_json(algbw) : nlohmann::ordered_json();
      out["busbw_at_bound_gbps"] =
          algbw > 0 ? nlohmann::ordered_json(busbw) : nlohmann::ordered_json();
      out["method"] = bound.method;
      out["bandwidth_bound_method"] = bound.method;
      out["bandwidth_bound_exact"] = bound.bandwidth_bound_exact;
      std::cout << out.dump(2) << std::endl;
      return;
    }
    std::printf("lower bound for %s on %s: %d NPUs, %d switches\n", to_string(kind).c_str(),
                full.name().c_str(), full.npus(), full.switches());
    if (coll.num_members() != full.npus() || has_root(kind))
      std::printf("  collective         %d NPUs%s\n", coll.num_members(),
                  has_root(kind) ? (", root " + std::to_string(coll.root())).c_str() : "");
    std::printf("  size               %s per NPU, %d chunk(s) per NPU of %s\n",
                format_bytes(bytes).c_str(), flags.chunks(),
                format_bytes(coll.chunk_bytes()).c_str());
    std::printf("  lower bound        %.6f us\n", bound.lower_bound_us);
    std::printf("  latency bound      %.6f us\n", bound.latency_bound_us);
    std::printf("  bandwidth bound    %.6f us%s\n", bound.bandwidth_bound_us,
                bound.bandwidth_bound_exact ? "" : " (approximate: may lie below the exact cut)");
    std::printf("  algbw at bound     %.3f GB/s (size / bandwidth bound; 1e9 B/s)\n", algbw);
    std::printf("  busbw at bound     %.3f GB/s (algbw x %.4g, as nccl-tests)\n", busbw,
                bus_factor(kind, coll.num_members()));
    std::printf("  method             %s\n", bound.method.c_str());
  }
};

}  // namespace

void add_bound_command(CLI::App& app) {
  auto cmd = std::make_shared<BoundCommand>();
  CLI::App* sub = app.add_subcommand(
      "bound",
      "Lower bounds on a collective's time: latency (farthest pair) and bandwidth (cut) bound");
  cmd->topology.add_to(*sub);
  sub->add_option("--collective", cmd->collective,
                  "all-gather, reduce-scatter, all-reduce, broadcast, reduce, gather, scatter or "
                  "all-to-all")
      ->capture_default_str();
  sub->add_option("--size", cmd->size,
                  "The collective's whole buffer per NPU (as for synthesize); e.g. 64MiB, 1GiB")
      ->capture_default_str();
  sub->add_option("--root", cmd->root,
                  "Root NPU of broadcast, reduce, gather and scatter (default 0)")
      ->each([cmd](const std::string&) { cmd->root_given = true; });
  sub->add_option("--npus", cmd->npus,
                  "Run the collective among these NPUs only, e.g. 0-7,16-23; every device may "
                  "still relay. Default: all NPUs");
  cmd->flags.add_to(*sub);
  sub->add_flag("--json", cmd->json,
                "Print one JSON object on stdout instead of the summary (algbw_at_bound_gbps, "
                "busbw_at_bound_gbps: GB/s of 10^9 B/s, as nccl-tests)");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace tacos::cli
