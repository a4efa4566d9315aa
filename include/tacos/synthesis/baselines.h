#pragma once
// Baseline collective algorithms (ring, direct, recursive halving-doubling, double binary tree,
// hierarchical) as Algorithm producers on any topology, for comparison with TACOS.
//
// Every baseline is first written as a logical schedule: messages between member NPUs at
// logical steps. A message between NPUs that are not neighbours is routed over a shortest path
// (fewest hops, then least latency, then the lowest next-hop NPU; destination-based, so the
// routes into one NPU form a tree) and relayed hop by hop, store and forward, each hop one
// transfer of the same chunks. The logical steps become placeholder times that encode the
// intended order (every dependency recorded before its consumer, links used in step order) and
// detail::compact re-times the whole schedule with the simulator (congestion on shared links
// included); Algorithm::collective_time is the simulated time.
//
// Relays of copies are plain relays (a relay that already holds the chunk may forward it
// without waiting for the relayed copy: the simulator's copy rule). Relays of partial sums
// cannot be plain: a device holds one partial per chunk (the verifier's and simulator's model),
// so a relay that has its own partial of the chunk, has already sent it, or relays two partials
// of it would double count or lose one. The reduction phase of a baseline is therefore built as
// the time reversal of its copy dual (its reduce messages reversed in step order and direction,
// on the reversed routes, as TACOS derives reduce-scatter from all-gather), keeping each
// device's first delivery of each chunk. Without relays the result is exactly the textbook
// reduction; with relays, partials that meet at a relay are summed there and forwarded once
// (in-network combining), so a routed reduction moves less data than its copy counterpart
// (e.g. direct reduce-scatter on a torus is much faster than direct all-gather).
//
// With K = --chunks-per-npu > 1 every logical step is split into K messages (one per piece),
// so K = 1 gives the textbook algorithms and larger K pipelines (ring: K x the steps of 1/K).
//
//  ring          NCCL-style ring over one direction of a Hamiltonian cycle when the collective
//                spans every NPU: NPU order if it is a cycle, else the snake (boustrophedon)
//                cycle of the generator spec's dimensions, else a bounded depth-first search;
//                else (and for subsets) member order, routed. All-Reduce = ring reduce-scatter +
//                ring all-gather (2(N-1) steps of size/N); Broadcast and Reduce pipeline K
//                chunks along the ring from / to the root; Gather: every NPU's chunks travel the
//                ring to the root (each link sends its own first, then those from one further
//                back, ...); Scatter: the root sends the farthest NPU's chunks first, each NPU
//                passes on the rest; All-to-All: ring relay, on its h-th hop one message with
//                the chunks still going further.
//  direct        every NPU sends to every other (routed): All-Gather, Reduce-Scatter, All-Reduce
//                (direct RS + direct AG), All-to-All; Broadcast and Scatter from the root, Gather
//                and Reduce to the root.
//  rhd           Reduce-Scatter by recursive vector halving with distance doubling (partners
//                i^1, i^2, i^4, ...), All-Gather by recursive doubling (distance halving),
//                All-Reduce = both. Needs a power-of-two NPU count (else inapplicable).
//  dbt           NCCL's double binary tree (tree 0 a binary tree whose root has one child, tree 1
//                its mirror for even N or its shift by one for odd N), each tree carrying half of
//                the chunks, pipelined chunk by chunk: All-Reduce (reduce up, broadcast down);
//                Broadcast and Reduce hang both trees, built over the other N-1 NPUs, below the
//                root. With one chunk (K = 1 broadcast/reduce) only tree 0 carries data.
//  hierarchical  BlueConnect-style per dimension of a multi-dimensional generator topology:
//                Reduce-Scatter along dimension 0, then 1, ...; All-Gather in reverse order;
//                All-Reduce = both. On a two-tier fat-tree (fattree:HxLxS, H even, H >= 4)
//                instead: across the leaves, one host per remote leaf relaying each share
//                inside its leaf, in lockstep slots (leaf_relay_baseline).
//                Within a dimension: a ring for ring/uniring/torus axes, a
//                ring in zig-zag order (0, 2, 4, ..., 5, 3, 1) for mesh/hypercube axes (every
//                ring edge at most 2 hops), direct exchange for fc/switch dimensions. Needs the
//                whole topology as the collective and a generator spec of 2+ dimensions > 1.
//  biring        bidirectional ring over the ring baseline's order (its rail rings on DGX-style
//                clusters): every piece goes halfway round clockwise and halfway
//                counter-clockwise (with even N one way goes on to the antipode, alternating
//                by position), so each NPU still sends N-1 pieces' worth per ring but a piece
//                is at most N/2 hops from its destinations: through switches, where a
//                store-and-forward hop costs two port times, the ring's chain of N-1 hops is
//                what limits it. All-Gather, Reduce-Scatter (its time reversal) and All-Reduce
//                (both). Not NCCL's: NCCL's two-direction rings still send each half N-1 hops.
//  bucket        multi-dimensional bidirectional bucket on tori, meshes and rings: All-Gather
//                one dimension at a time, the pieces spread over the rotations of the
//                dimension order (2D: half rows first, half columns first) so every
//                dimension's links work in every phase, each block going both ways round a
//                ring (the antipode's copy split between the sides) or to both ends of a line.
//                Reduce-Scatter its time reversal, All-Reduce both. Needs K >= the number of
//                dimensions to use them all (K = 1: one rotation). All-to-All: each chunk one
//                dimension at a time, the orders by the sender-receiver offset so each
//                direction of each dimension works in every phase, and everything crossing a
//                link at one hop of one phase as one message.
//  node-direct   switch pods of nodes (DGX, NVL racks): each node gathers its GPUs' shards
//                over its NVSwitch, sends the whole node block to every other node in one
//                message over one rail (the rail of a node pair spread so every NIC sends and
//                receives alike), and the receiving GPU hands it on inside its node: (nodes - 1)
//                / rails messages per NIC of a node's size instead of nodes - 1 single shards.
//                Reduce-Scatter its time reversal, All-Reduce both. All-to-All as NCCL's PXN:
//                a GPU's chunks for rail r's GPUs go over the NVSwitch to its node's GPU r,
//                which sends each other node one message with its node's chunks for it.
//  relay         Broadcast and Reduce over switches (switch:N, fat-tree hosts, DGX pods): a
//                list schedule timed as it is made: whenever a port is free it sends the rarest
//                chunk its NPU holds to the receiver lacking it with the least queueing on the
//                way; a NIC only into a node that has none of the chunk, which spreads it over
//                its NVSwitch (there up to two chunks a message, the fastest of several
//                plans kept: batch families and tail plans). Reduce its time reversal.
//  nvls          NCCL's NVLS on a reducing switch joined to every member (NVLink SHARP): each
//                GPU pulls its shard reduced by the switch (ld_reduce), then stores it to every
//                GPU through the switch (multimem.st); All-Reduce (both), Reduce-Scatter (the
//                pull), All-Gather (the store). src/synthesis/in_switch.h.
//  nvls-tree     NCCL's NVLSTree: NVLS inside each node, two binary trees per rail across
//                nodes (half the chunks each); All-Reduce.
//  collnet       NCCL's CollNet: NVLS inside each node, each rail's InfiniBand SHARP switch
//                across nodes; All-Reduce.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/collective/collective.h"
#include "tacos/common/error.h"
#include "tacos/common/link_model.h"
#include "tacos/topology/topology.h"

namespace tacos {

enum class Baseline {
  kRing,
  kDirect,
  kRhd,
  kDbt,
  kHierarchical,
  kBiring,
  kBucket,
  kNodeDirect,
  kRelay,
  kNvls,
  kNvlsTree,
  kCollnet,
  kTorusTrees
};

// "ring", "direct", "rhd", "dbt", "hierarchical", "biring", "bucket", "node-direct", "relay",
// "torus-trees", "nvls", "nvls-tree", "collnet";
// anything else throws Error.
Baseline parse_baseline(std::string_view text);
std::string to_string(Baseline baseline);

// Why `baseline` cannot run `collective` on `network` (the baselines read its shape,
// Topology::shape, for rings and hierarchy), or nullopt when it can.
std::optional<std::string> baseline_inapplicable(Baseline baseline, const Topology& network,
                                                 const Collective& collective);

// Chunk transfers (each logical message's chunks times its hops, before partial sums are
// merged) above which a baseline is not built: every one is routed, re-timed by the simulator
// and verified, about 2.5 us and 300 bytes each on the 2-core VM, so the limit keeps a baseline
// within about 5 s and 0.6 GiB (docs/performance.md, "Measured costs"). At 1,024 NPUs the ring
// and biring All-Reduce fit (2,095,104); direct (33.5M on torus2d:32x32) and the ring's
// All-to-All on dgx-a100:32 (messages of up to 255 chunks: 8.4M, 5 GiB) do not.
inline constexpr double kBaselineTransferBudget = 2097152;

// bucket's All-Gather, Reduce-Scatter and All-Reduce send only to neighbours, and from the second
// dimension on in large blocks: a chunk transfer costs about 50 bytes and 0.15 us (torus2d:64x64
// All-Gather at K = 2, 33.5 million: 1.6 GiB, 5 s; docs/performance.md, "Measured costs"), so
// bucket has a budget of its own, 2^25: it holds that case, where the greedy alone is 1.205 x the
// bound and bucket 1.103. It applies from one piece per dimension order on (K >= the torus's or
// mesh's dimensions); below, where some links idle in every phase, the baselines' budget holds.
inline constexpr double kBucketTransferBudget = 33554432;

// torus-trees sends each chunk once into every NPU, one chunk per message to a neighbour: its
// chunk transfers are (N - 1) K, known before planning. It pays only with small chunks (depth W
// + H - 1 before its search, a message per hop), so its budget holds torus2d:32x32 at K = 4096
// (4,190,208): 0.95 GiB there (docs/performance.md, "Measured costs").
inline constexpr double kTorusTreesTransferBudget = 4194304;

// bucket's All-to-All sends all that crosses a link at one hop as one message, so its chunk
// transfers cost about a fifth of a routed one's (docs/performance.md, "Measured costs"): its
// own budget, 2^24, which holds torus2d:32x32 at K = 1 but not at K = 2.
inline constexpr double kBucketAllToAllBudget = 16777216;

// A baseline over kBaselineTransferBudget; the message says how many chunk transfers it has.
class BaselineOverBudget : public Error {
 public:
  using Error::Error;
};

// The baseline's algorithm, compacted (times from the simulator under `model`;
// Algorithm::synthesizer = to_string(baseline), collective_time = the simulated time). Throws
// Error with the reason when the baseline is inapplicable, or when two NPUs cannot reach each
// other; BaselineOverBudget (before building anything large) beyond kBaselineTransferBudget.
Algorithm synthesize_baseline(Baseline baseline, const Topology& network,
                              const Collective& collective, LinkModel model);

namespace detail {
// Building blocks of the baselines (src/synthesis/baseline_*.cpp); not a stable interface.
//
// Every builder plans between NPUs on `topology` and takes its times on `timing`: on a network
// with switch devices `topology` is its switch_route_view() (a link per NPU pair that a switch
// route joins) and `timing` the network itself; elsewhere both are the same object.

// Throws BaselineOverBudget with `format` (two %.0f: the transfers, then the budget) where
// `transfers` is over `budget`; every baseline counts its chunk transfers before building.
void require_transfers_within(double transfers, double budget, const char* format);

// Collects logical messages and turns them into a routed, compacted Algorithm (see the top of
// this file). Dependencies must point to strictly smaller steps; messages of one step are
// independent of each other. Reduce messages of one chunk must form an in-tree over the members
// (each member sends the chunk at most once, after everything it receives) ending at one NPU.
class LogicalSchedule {
 public:
  LogicalSchedule(const Topology& topology, const Topology& timing, const Collective& collective);

  void send(NpuId from, NpuId to, std::int64_t step, std::span<const ChunkId> chunks,
            bool reduce = false);
  void send(NpuId from, NpuId to, std::int64_t step, ChunkId chunk, bool reduce = false) {
    send(from, to, step, std::span<const ChunkId>(&chunk, 1), reduce);
  }

  // Routes, times and compacts; `name` becomes Algorithm::synthesizer and prefixes errors.
  // BaselineOverBudget beyond `budget` chunk transfers (each message's chunks x its hops).
  Algorithm build(const std::string& name, LinkModel model,
                  double budget = kBaselineTransferBudget) const;

  // One logical message; public so that build's steps (baseline_routing.cpp) can read them.
  struct Message {
    NpuId from, to;
    std::int64_t step;
    std::int64_t first_chunk;  // into the chunk pool
    std::int32_t num_chunks;
    bool reduce;
  };

 private:
  const Topology& topology_;
  const Topology& timing_;
  const Collective& collective_;
  std::vector<Message> messages_;
  std::vector<ChunkId> chunk_pool_;
};

// All-Gather, Reduce-Scatter and All-Reduce from a baseline's two phases: each phase takes
// the step it starts at and returns the step after its last; All-Reduce is Reduce-Scatter, then
// All-Gather from where it ended. Returns false (nothing run) for the other collectives.
template <class AllGather, class ReduceScatter>
bool run_phases(CollectiveKind kind, AllGather&& all_gather, ReduceScatter&& reduce_scatter) {
  switch (kind) {
    case CollectiveKind::kAllGather:
      all_gather(std::int64_t{0});
      return true;
    case CollectiveKind::kReduceScatter:
      reduce_scatter(std::int64_t{0});
      return true;
    case CollectiveKind::kAllReduce:
      all_gather(reduce_scatter(std::int64_t{0}));
      return true;
    default:
      return false;
  }
}

// A directed Hamiltonian cycle over the NPUs starting at NPU 0 (NPU order when it is one, else
// a depth-first search preferring the neighbour with the fewest onward choices and pruning moves
// that leave an NPU without a way in or out, within `budget` extensions; 0: NPU order only), or an
// empty vector.
std::vector<NpuId> hamiltonian_cycle(const Topology& topology, std::int64_t budget = 2'000'000);

// The snake (boustrophedon) Hamiltonian cycle of a multi-dimensional generator topology: a
// boustrophedon path over all dimensions but the last, then the classic grid cycle with the
// last dimension (needs an even side; any wiring but uniring). Empty when it does not apply.
std::vector<NpuId> snake_cycle(const std::vector<ShapeDimension>& dims);

// Member indices in the ring baseline's order. When the collective spans every NPU: NPU order
// if it is a cycle, else the snake of the topology's shape dimensions, else the search;
// otherwise (or when nothing is found) member order.
std::vector<int> ring_order(const Topology& topology, const Collective& collective);
// The rings the ring baseline spreads its pieces over (member indices): NCCL's rail rings on
// DGX-style clusters, else `ring`; each also turned the other way where its links run both ways
// and not `through_switches`. `reversed` = false leaves out the turned-round copies.
std::vector<std::vector<int>> ring_channels(const Topology& topology, const Collective& collective,
                                            const std::vector<int>& ring, bool through_switches,
                                            bool reversed = true);

Algorithm ring_baseline(const Topology& topology, const Topology& timing,
                        const Collective& collective, LinkModel model);
Algorithm biring_baseline(const Topology& topology, const Topology& timing,
                          const Collective& collective, LinkModel model);
Algorithm bucket_baseline(const Topology& topology, const Topology& timing,
                          const Collective& collective, LinkModel model);
// Why bucket cannot run here (it needs a torus, mesh or ring spec spanning every NPU), or nullopt.
std::optional<std::string> bucket_inapplicable(const Topology& network,
                                               const Collective& collective);
// `with_groups` false: behind spines the rounds alone, without the leaf-group relay (tests).
Algorithm node_direct_baseline(const Topology& topology, const Topology& timing,
                               const Collective& collective, LinkModel model,
                               bool with_groups = true);
// Why node-direct cannot run on `network` (it needs equal nodes of NPUs on switches, every rail
// and node joined by switch routes), or nullopt.
std::optional<std::string> node_direct_inapplicable(const Topology& network,
                                                    const Collective& collective);
Algorithm relay_baseline(const Topology& topology, const Topology& timing,
                         const Collective& collective, LinkModel model);
// Why relay cannot run here (members with links to switches only, all reachable from the root
// through switches and members), or nullopt.
std::optional<std::string> relay_inapplicable(const Topology& network,
                                              const Collective& collective);
// Broadcast and Reduce on a 2D torus over four spanning trees that share no link
// (baseline_torus_trees.cpp).
Algorithm torus_trees_baseline(const Topology& topology, const Topology& timing,
                               const Collective& collective, LinkModel model);
// Why torus-trees cannot run here (a 2D torus of rings 3 or longer, every NPU in the
// collective), or nullopt.
std::optional<std::string> torus_trees_inapplicable(const Topology& network,
                                                    const Collective& collective);
Algorithm direct_baseline(const Topology& topology, const Topology& timing,
                          const Collective& collective, LinkModel model);
Algorithm rhd_baseline(const Topology& topology, const Topology& timing,
                       const Collective& collective, LinkModel model);
Algorithm dbt_baseline(const Topology& topology, const Topology& timing,
                       const Collective& collective, LinkModel model);
Algorithm hierarchical_baseline(const Topology& topology, const Topology& timing,
                                const Collective& collective, LinkModel model);
// Hierarchical on a two-tier fat-tree (fattree:HxLxS, H even, 4 <= H, every NPU in the
// collective): (H, L), else nullopt (the generic hierarchical runs).
std::optional<std::pair<int, int>> leaf_relay_shape(const TopologyShape& shape, int npus);
// Across the leaves first, one host per remote leaf relaying each share inside its leaf, in
// lockstep slots (baseline_leaf_relay.cpp); Reduce-Scatter its time reversal.
Algorithm leaf_relay_baseline(const Topology& topology, const Topology& timing,
                              const Collective& collective, LinkModel model, int hosts, int leaves);

}  // namespace detail
}  // namespace tacos
