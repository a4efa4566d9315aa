#include "collective_options.h"

#include "tacos/collective/npu_list.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos::cli {

void CollectiveOptions::add_to(CLI::App& command) {
  command
      .add_option("--collective", collective,
                  "all-gather, reduce-scatter, all-reduce, broadcast, reduce, gather, scatter or "
                  "all-to-all")
      ->capture_default_str();
  command
      .add_option("--size", size,
                  "The collective's whole buffer per NPU: All-Gather output, Reduce-Scatter "
                  "input, All-Reduce buffer, Broadcast/Reduce buffer, Gather output at the root, "
                  "Scatter input at the root, All-to-All send buffer; e.g. 64MiB, 1GiB, 512KB")
      ->capture_default_str();
  command
      .add_option("--root", root, "Root NPU of broadcast, reduce, gather and scatter (default 0)")
      ->each([this](const std::string&) { root_given = true; });
  command
      .add_option("--npus", npus,
                  "Run the collective among these NPUs only, e.g. 0-7,16-23 (a process group); "
                  "every NPU may still relay. Default: all NPUs")
      ->each([this](const std::string&) { npus_given = true; });
  command
      .add_option("--all-reduce-mode", all_reduce_mode,
                  "All-Reduce as 'sequential' (Reduce-Scatter, then All-Gather) or 'pipelined' "
                  "(each chunk's All-Gather starts once its reduction is done)")
      ->capture_default_str();
  command.add_option("--trials", trials, "Seeds tried (seed, seed+1, ...); the fastest is kept")
      ->capture_default_str();
  command.add_option("--threads", threads, "Threads (0 = all cores)")->capture_default_str();
}

Collective CollectiveOptions::make(const Topology& network, const SynthesisFlags& flags) const {
  return make(network, flags.chunks());
}

Collective CollectiveOptions::make(const Topology& network, int chunks_per_npu) const {
  const CollectiveKind kind = parse_collective_kind(collective);
  const Bytes bytes = parse_size(size);
  if (trials < 1) throw Error("--trials: must be at least 1, got " + std::to_string(trials));
  if (threads < 0) throw Error("--threads: must not be negative");
  if (root_given && !has_root(kind)) throw Error("--root: " + to_string(kind) + " has no root");
  parse_all_reduce_mode(all_reduce_mode);
  const std::vector<NpuId> members = npus_given ? parse_npu_list(npus) : std::vector<NpuId>{};
  return Collective::make(kind, network.npus(), bytes, chunks_per_npu, members, root);
}

SynthesisOptions CollectiveOptions::synthesis_options(const SynthesisFlags& flags,
                                                      const TopologyOptions& topology) const {
  SynthesisOptions options;
  options.seed = flags.seed;
  options.trials = trials;
  options.threads = threads;
  options.link_model = flags.model();
  options.all_reduce_mode = parse_all_reduce_mode(all_reduce_mode);
  // Message coalescing and batched messages belong with the portfolio: off is the pure greedy;
  // the paper's model (--switch-model unwind) keeps the paper's greedy, one chunk per message.
  // --time-only batches (a batched run needs no transfer list) but cannot coalesce.
  options.coalesce = flags.portfolio_on() && !topology.unwound();
  options.batch = options.coalesce;
  return options;
}

SynthesisRequest CollectiveOptions::request(const Topology& network, const SynthesisFlags& flags,
                                            const TopologyOptions& topology,
                                            const std::string& algorithm) const {
  const Collective validated = make(network, flags);
  SynthesisRequest request;
  request.algorithm = algorithm;
  request.collective = validated.kind();
  request.size = validated.size();
  if (npus_given) request.members = validated.members();
  request.root = root;
  request.chunks_per_npu = validated.chunks_per_npu();
  request.auto_chunks = flags.auto_chunks();
  request.auto_budget_seconds = flags.auto_budget_seconds();
  request.portfolio = flags.portfolio_on();
  request.options = synthesis_options(flags, topology);
  return request;
}

}  // namespace tacos::cli
