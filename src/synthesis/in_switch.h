#pragma once
// Plans for fabrics whose switches reduce (NVLink SHARP "NVLS", InfiniBand SHARP): a reducing
// switch holds data for the collective (Topology::is_reducing, docs/switch-fabrics.md
// "Reducing switches"), so a member sends its contribution up once and the switch returns sums.
//
// tacos's plan, on a switch joined to every member by a link each way: every member sends each
// chunk it contributes up once, the switch adds the contributions and sends each chunk's sum
// straight to the members that need it. Per member that is the whole buffer out and in for
// All-Reduce (the lower bound on such a switch: docs/bound.md), not 2(N-1)/N of it each way as
// on unicast switches. Copies (All-Gather, Broadcast) go up once and down to every receiver.
//
// NCCL's NVLS (the `nvls` baseline) as NCCL runs it: each GPU pulls its shard reduced over all
// GPUs (multimem.ld_reduce: every GPU, the puller included, sends its contribution up and the
// switch returns the sum to the puller), then stores it to every GPU, itself included
// (multimem.st: the shard goes up once and the switch writes it to all). Per GPU that is
// S (1 + 1/N) out and in for All-Reduce; Reduce-Scatter is the pull, All-Gather the store.
#include <optional>
#include <string>

#include "tacos/algorithm/algorithm.h"
#include "tacos/collective/collective.h"
#include "tacos/common/link_model.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

// The lowest-id reducing switch with a link to and from every member, or nullopt.
std::optional<DeviceId> shared_reducing_switch(const Topology& topology,
                                               const Collective& collective);

// tacos's in-switch plan, re-timed by the simulator; nullopt where no reducing switch joins
// every member (or for Gather, Scatter and All-to-All, which nothing reduces or copies).
std::optional<Algorithm> in_switch_plan(const Topology& topology, const Collective& collective,
                                        LinkModel model);

// Why NCCL's NVLS cannot run `collective` on `topology`, or nullopt when it can.
std::optional<std::string> nvls_inapplicable(const Topology& topology,
                                             const Collective& collective);
// NCCL's NVLS All-Reduce, Reduce-Scatter or All-Gather, re-timed by the simulator. Throws Error
// with nvls_inapplicable's reason.
Algorithm nvls_baseline(const Topology& topology, const Collective& collective, LinkModel model);

// NCCL across nodes, NVLS inside each node (NVLink domain): `nvls-tree` (NVLSTree: the
// domains joined by two binary trees per rail, half the chunks each) and `collnet` (CollNet:
// each rail's InfiniBand SHARP switch reduces and returns the sum). All-Reduce only; every NPU
// of the topology takes part.
std::optional<std::string> nvls_tree_inapplicable(const Topology& topology,
                                                  const Collective& collective, bool collnet);
Algorithm nvls_tree_baseline(const Topology& topology, const Collective& collective,
                             LinkModel model, bool collnet);

}  // namespace tacos::detail
