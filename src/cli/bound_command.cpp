#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bound_job.h"
#include "commands.h"
#include "report.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos::cli {
namespace {

struct BoundCommand {
  BoundJob job;
  bool json = false;

  void run() const {
    check_bound_flags(job);  // before loading the topology: flag errors come first
    const Topology full = job.topology.load();  // switch devices kept: they are cut vertices
    const BoundOutcome o = run_bound(job, full);
    const LowerBound& bound = o.bound;
    const Collective& coll = o.collective;
    if (json) {
      std::cout << json_text(o.json) << std::endl;
      return;
    }
    std::printf("lower bound for %s on %s: %d NPUs, %d switches\n", to_string(coll.kind()).c_str(),
                full.name().c_str(), full.npus(), full.switches());
    if (coll.num_members() != full.npus() || has_root(coll.kind()))
      std::printf("  collective         %d NPUs%s\n", coll.num_members(),
                  has_root(coll.kind()) ? (", root " + std::to_string(coll.root())).c_str() : "");
    std::printf("  size               %s per NPU, %d chunk(s) per NPU of %s\n",
                format_bytes(coll.size()).c_str(), job.flags.chunks(),
                format_bytes(coll.chunk_bytes()).c_str());
    std::printf("  lower bound        %.6f us\n", bound.lower_bound_us);
    std::printf("  latency bound      %.6f us\n", bound.latency_bound_us);
    std::printf("  bandwidth bound    %.6f us%s\n", bound.bandwidth_bound_us,
                bound.bandwidth_bound_exact ? "" : " (approximate: may lie below the exact cut)");
    if (bound.store_and_forward_bound_us > 0)
      std::printf("  store-and-forward  %.6f us (tacos link model: whole messages through %s)\n",
                  bound.store_and_forward_bound_us, store_and_forward_relays(full));
    std::printf("  algbw at bound     %.3f GB/s (size / bandwidth bound; 1e9 B/s)\n",
                o.algbw_at_bound_gbps);
    std::printf("  busbw at bound     %.3f GB/s (algbw x %.4g, as nccl-tests)\n",
                o.busbw_at_bound_gbps, bus_factor(coll.kind(), coll.num_members()));
    std::printf("  method             %s\n", bound.method.c_str());
  }
};

}  // namespace

void add_bound_command(CLI::App& app) {
  auto cmd = std::make_shared<BoundCommand>();
  CLI::App* sub = add_command(
      app, cmd, "bound",
      "Lower bounds on a collective's time: latency (farthest pair) and bandwidth (cut) bound, "
      "and under the tacos link model the store-and-forward bound (switch fabrics; Broadcast and "
      "Reduce relayed by NPUs)");
  cmd->job.topology.add_to(*sub);
  sub->add_option("--collective", cmd->job.collective,
                  "all-gather, reduce-scatter, all-reduce, broadcast, reduce, gather, scatter or "
                  "all-to-all")
      ->capture_default_str();
  sub->add_option("--size", cmd->job.size,
                  "The collective's whole buffer per NPU (as for synthesize); e.g. 64MiB, 1GiB")
      ->capture_default_str();
  sub->add_option("--root", cmd->job.root,
                  "Root NPU of broadcast, reduce, gather and scatter (default 0)")
      ->each([cmd](const std::string&) { cmd->job.root_given = true; });
  sub->add_option("--npus", cmd->job.npus,
                  "Run the collective among these NPUs only, e.g. 0-7,16-23; every device may "
                  "still relay. Default: all NPUs");
  cmd->job.flags.add_to(*sub);
  sub->add_flag("--json", cmd->json,
                "Print one JSON object on stdout instead of the summary (algbw_at_bound_gbps, "
                "busbw_at_bound_gbps: GB/s of 10^9 B/s, as nccl-tests)");
}

}  // namespace tacos::cli
