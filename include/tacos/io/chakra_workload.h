#pragma once
// A training-step workload in Chakra ET: one file per rank holding compute nodes and workload
// collectives (COMM_COLL_NODE), plus ASTRA-sim's process-group JSON ({"id": [ranks]}), as the
// symbolic tensor graph generator writes them. tacos reads the distinct collectives to
// synthesize each one, and rewrites the workload so that ASTRA-sim runs every collective node
// with the algorithm made for it (docs/workload.md).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tacos/collective/collective.h"
#include "tacos/common/types.h"

namespace tacos {

// One distinct collective of a workload. ASTRA-sim runs a custom algorithm with the message
// sizes written in the algorithm's own ET and ignores the node's comm_size, so every distinct
// (kind, size, members) needs an algorithm of its own.
struct WorkloadCollective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  Bytes comm_size = 0;         // the nodes' comm_size (All-Gather: each NPU's input)
  std::vector<NpuId> members;  // sorted
  int nodes = 0;               // collective nodes of this kind, size and group over all ranks
  // The size as tacos counts it: All-Gather's output is comm_size x members; the other kinds
  // take comm_size as it is.
  Bytes size() const;
};

// A collective node of one rank.
struct WorkloadCollNode {
  std::uint64_t id = 0;  // the node id in the rank's file
  int collective = 0;    // index into ChakraWorkload::collectives
};

struct ChakraWorkload {
  std::string prefix;  // PREFIX of the PREFIX.RANK.et files
  int ranks = 0;
  std::vector<WorkloadCollective> collectives;            // sorted by (members, kind, comm_size)
  std::vector<std::vector<WorkloadCollNode>> coll_nodes;  // per rank, in file order
  std::vector<int> compute_nodes;                         // per rank
};

// Reads PREFIX.0.et .. PREFIX.(N-1).et and the process groups (`groups_file`; empty:
// PREFIX.json when it exists). A collective node names its group by pg_name; no pg_name (or
// "0") means every rank. Throws Error, one line naming the file and the node, on missing or
// malformed files, a collective kind ASTRA-sim's workload layer does not run (only All-Reduce,
// All-Gather, Reduce-Scatter and All-to-All), a missing or non-positive comm_size, a pg_name the
// group file lacks, and a rank running a collective of a group it is not in.
ChakraWorkload read_chakra_workload(const std::string& prefix, const std::string& groups_file);

// Writes OUT_PREFIX.RANK.et for every rank: the workload's nodes unchanged, except that every
// collective node gets pg_name group_ids[its collective] and a new id, the same on every rank
// for the same occurrence of the same distinct collective (ASTRA-sim's per-node implementation
// YAML is one file for all ranks); dependencies follow the renumbering. Returns each new
// collective node id with its distinct collective. Files are written atomically.
std::map<std::uint64_t, int> write_bundle_workload(const ChakraWorkload& workload,
                                                   const std::vector<int>& group_ids,
                                                   const std::string& out_prefix);

// Writes OUT_PREFIX.RANK.et for `ranks` ranks: one collective node `node_id` (kind, comm_size
// and pg_name `group_id` of `collective`) on its members, a 0 us compute node on every other
// rank: the collective alone, run the way the bundle's workload runs it.
void write_single_collective_workload(int ranks, const WorkloadCollective& collective, int group_id,
                                      std::uint64_t node_id, const std::string& out_prefix);

}  // namespace tacos
