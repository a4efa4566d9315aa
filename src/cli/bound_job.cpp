#include "bound_job.h"

#include "report.h"
#include "tacos/collective/npu_list.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos::cli {

void check_bound_flags(const BoundJob& job) {
  const CollectiveKind kind = parse_collective_kind(job.collective);
  parse_size(job.size);
  (void)job.flags.model();  // validated for symmetry with synthesize; bounds hold for both models
  if (job.root_given && !has_root(kind)) throw Error("--root: " + to_string(kind) + " has no root");
}

BoundOutcome run_bound(const BoundJob& job, const Topology& full) {
  check_bound_flags(job);
  const CollectiveKind kind = parse_collective_kind(job.collective);
  const Bytes bytes = parse_size(job.size);
  const std::vector<NpuId> members =
      job.npus.empty() ? std::vector<NpuId>{} : parse_npu_list(job.npus);
  BoundOutcome o{
      report_bound(
          full, Collective::make(kind, full.npus(), bytes, job.flags.chunks(), members, job.root),
          job.flags.model(), job.topology.unwound()),
      {}};
  nlohmann::ordered_json& out = o.json;
  out["topology"] = full.name();
  out["npus"] = full.npus();
  out["switches"] = full.switches();
  out["collective"] = to_string(kind);
  out["npus_in_collective"] = o.collective.num_members();
  if (has_root(kind)) out["root"] = o.collective.root();
  out["size_bytes"] = bytes;
  out["chunks_per_npu"] = job.flags.chunks();
  out["chunk_bytes"] = o.collective.chunk_bytes();
  out["lower_bound_us"] = o.bound.lower_bound_us;
  out["latency_bound_us"] = o.bound.latency_bound_us;
  out["bandwidth_bound_us"] = o.bound.bandwidth_bound_us;
  out["store_and_forward_bound_us"] =
      o.bound.store_and_forward_bound_us > 0
          ? nlohmann::ordered_json(o.bound.store_and_forward_bound_us)
          : nlohmann::ordered_json();
  out["algbw_at_bound_gbps"] = o.algbw_at_bound_gbps > 0
                                   ? nlohmann::ordered_json(o.algbw_at_bound_gbps)
                                   : nlohmann::ordered_json();
  out["busbw_at_bound_gbps"] = o.algbw_at_bound_gbps > 0
                                   ? nlohmann::ordered_json(o.busbw_at_bound_gbps)
                                   : nlohmann::ordered_json();
  out["method"] = o.bound.method;
  out["bandwidth_bound_method"] = o.bound.method;
  out["bandwidth_bound_exact"] = o.bound.bandwidth_bound_exact;
  return o;
}

}  // namespace tacos::cli
