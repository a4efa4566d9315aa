#pragma once
// Chakra execution traces (ET): one protobuf file per NPU ("PREFIX.RANK.et"), the format
// ASTRA-sim runs collective algorithms from (docs/formats.md, "Exact formats: what the code
// relies on"; docs/design.md "Algorithm -> Chakra ET"). Three parts:
//  - write_chakra: Algorithm -> per-rank send/recv/compute graphs plus the ASTRA-sim inputs;
//  - read_chakra: any producer's per-rank ET set -> EtTrace (a checked dependency graph);
//  - simulate_chakra / chakra_to_algorithm: run an EtTrace the way ASTRA-sim's analytical
//    congestion-aware backend does, or turn tacos's own files back into an Algorithm.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/collective/collective.h"
#include "tacos/common/link_model.h"
#include "tacos/common/types.h"
#include "tacos/topology/topology.h"

namespace tacos {

// ---------------------------------------------------------------------------------------------
// Writing.

struct ChakraOptions {
  // Files are named PREFIX.RANK.et (chakra/) and the system JSON names "../chakra/PREFIX".
  std::string prefix = "tacos";
  // duration_micros of the COMP_NODE that follows every reduce receive (0: free; note that
  // ASTRA-sim runs a 0 us compute node for 1 ns).
  std::uint64_t reduction_micros = 0;
  // Per-link order of sends. Algorithms timed with --link-model astra: each send with a
  // successor on its first hop (a link, or a switch uplink) gets an "order" COMP_NODE of 0 us
  // carrying the send's own dependencies, and the successor depends on it, so ASTRA-sim (which
  // issues ready sends in no fixed order and counts a send done only on arrival) feeds the
  // link in the synthesized order without idling. --link-model tacos: a send has a ctrl_dep
  // on the previous send to the same peer (ASTRA-sim honours ctrl_deps and then starts it one
  // latency after the last one's bytes, the tacos model on a direct link). Receives always
  // have a ctrl_dep on the previous receive from the same peer. true: those ctrl_deps go into
  // data_deps instead, and no order nodes are written.
  bool order_in_data_deps = false;
};

// Writes, for an algorithm over NPUs 0..N-1 of `topology` (N = topology.npus(), which must equal
// the collective's topology NPUs; every transfer is NPU -> NPU, over a link or through switches
// (a switch is transparent to the files)):
//   OUT/chakra/PREFIX.RANK.et  every rank, even idle ones
//   OUT/astra/system.json, workload.RANK.et, mem.json, README, and network.yml when the
//   topology's shape is an ASTRA-sim network: ring/fc/switch dimensions, torus2d/torus3d, or
//   read from an ASTRA-sim network YAML file.
// Each .et file: a GlobalMetadata (version "1.0.0", attributes producer, tacos_version,
// collective, size_bytes, chunk_bytes, chunks_per_npu, npus, root/members when they apply, seed,
// synthesizer, link_model, collective_time_ps), then the rank's nodes (ids 0.. in time order).
// Transfer u -> v: COMM_SEND_NODE on u and COMM_RECV_NODE on v with comm_src, comm_dst,
// comm_tag (int32), comm_size (int64 bytes), msg_chunk_cnt, msg_chunk_idx, total_chunk_cnt,
// is_cpu_op false, tacos_chunks (int64 list) and tacos_reduce (bool); a reduce transfer adds a
// COMP_NODE on v after the receive. comm_tag = the message's position (0, 1, ...) in the
// synthesized order of its link u -> v, so it is unique per (link, chunk) and equal on both ends.
// Data dependencies follow the simulator's rules (simulation/simulator.h): a send waits for the
// node that made each chunk it carries present at u. The output is built in a temporary
// directory inside OUT and moved into place only when complete (replacing OUT/chakra and
// OUT/astra). Throws Error on transfers the format cannot express.
void write_chakra(const Algorithm& algorithm, const Topology& topology, const std::string& out_dir,
                  const ChakraOptions& options = {});

// The ASTRA-sim network YAML of a topology (see write_chakra): the text of the ASTRA-sim file it
// was read from, else one written from its shape (Topology::shape) with bandwidth and latency
// per dimension taken from its links (with or without switches unwound); nullopt when the shape
// is not an ASTRA-sim network (mesh, uniring, hypercube, dgx, fat-trees, links files) or the
// links are not what the shape's generator builds.
std::optional<std::string> astra_network_yaml(const Topology& topology);

// ASTRA-sim's system-config key for the native implementations of a collective kind
// ("all-reduce-implementation"; the custom one adds "-custom"), or nullopt for the kinds its
// workload layer does not run (only All-Reduce, All-Gather, Reduce-Scatter and All-to-All).
std::optional<std::string> astra_implementation_key(CollectiveKind kind);

// ---------------------------------------------------------------------------------------------
// Reading.

// Chakra NodeType values.
enum class EtNodeType : int {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kSend = 5,
  kRecv = 6,
  kColl = 7,
};
std::string to_string(EtNodeType type);  // "COMM_SEND_NODE", ...

struct EtNode {
  std::uint64_t id = 0;
  std::string name;
  EtNodeType type = EtNodeType::kInvalid;
  std::vector<std::uint32_t> data_deps;  // indices into EtRank::nodes
  std::vector<std::uint32_t> ctrl_deps;  // indices into EtRank::nodes
  std::uint64_t duration_micros = 0;
  // Sends and receives.
  std::int32_t peer = -1;           // send: comm_dst; receive: comm_src
  std::int32_t tag = 0;             // comm_tag (0 when absent)
  Bytes comm_size = -1;             // -1: absent (the size then comes from the chunk counts)
  std::int32_t msg_chunk_cnt = -1;  // -1: absent
  std::int32_t msg_chunk_idx = -1;
  std::int32_t total_chunk_cnt = -1;
  std::int32_t match = -1;  // index of the matching receive / send in the peer rank's nodes
  // Collective (workload) nodes: comm_type (a CollectiveCommType), -1 when absent.
  std::int64_t comm_type = -1;
  // Compute nodes of a workload, as ASTRA-sim's roofline reads them: num_ops and tensor_size
  // (-1 when absent), and is_cpu_op (absent: false, ASTRA-sim's default).
  std::int64_t num_ops = -1;
  std::int64_t tensor_size = -1;
  bool cpu_op = false;
  // tacos's own attributes: the chunks a message carries and whether it is a partial sum.
  bool has_chunks = false;
  std::vector<ChunkId> chunks;
  bool reduce = false;
};

struct EtAttribute {
  std::string name;
  std::string value;  // printable: numbers in decimal, lists comma-separated
};

struct EtRank {
  std::string file;
  std::string version;  // GlobalMetadata.version ("" when absent)
  std::vector<EtAttribute> metadata;
  std::vector<EtNode> nodes;  // file order
};

// What tacos records in its own files' GlobalMetadata (enough to rebuild the Collective).
struct EtTacosInfo {
  CollectiveKind kind = CollectiveKind::kAllGather;
  int topology_npus = 0;
  Bytes size = 0;
  Bytes chunk_bytes = 0;
  int chunks_per_npu = 1;
  std::vector<NpuId> members;  // empty: every NPU
  NpuId root = 0;
  std::uint64_t seed = 0;
  std::string synthesizer;
  std::string link_model;
  Time collective_time = 0;
};

struct EtTrace {
  std::string prefix;                // DIR/NAME: files are NAME.0.et .. NAME.(N-1).et in DIR
  std::vector<EtRank> ranks;         // rank r = file PREFIX.r.et
  std::optional<EtTacosInfo> tacos;  // present for tacos's own files (rank 0's metadata)
  std::int64_t messages = 0;         // matched send/receive pairs
  int npus() const { return static_cast<int>(ranks.size()); }
};

// Reads PREFIX.0.et .. PREFIX.(N-1).et. `prefix_or_dir` is a prefix path (DIR/NAME), one of the
// files (DIR/NAME.3.et), a directory holding exactly one such set, or a tacos output directory
// (its chakra/ is used). Accepts files from other producers: GlobalMetadata without version,
// integer attributes of any integer type, comm_size absent. Checks, each failure one line
// naming the file and the place: missing rank files, truncated or garbage messages, duplicate
// node ids, dependencies on missing ids, sends/receives without a valid peer, a send with no
// matching receive on its peer (or the reverse), a rank without a dependency-free node.
// Sends match receives by (src, dst, tag, size) in file order (size: comm_size, or
// msg_chunk_cnt when comm_size is absent).
EtTrace read_chakra(const std::string& prefix_or_dir);

// ---------------------------------------------------------------------------------------------
// Simulation.

struct EtMessage {
  int src = 0;
  int dst = 0;
  std::uint32_t send = 0;  // node index on src
  std::uint32_t recv = 0;  // node index on dst
  Bytes bytes = 0;
  int hops = 0;    // links crossed
  Time start = 0;  // entered its first link
  Time end = 0;    // reached dst
};

struct EtRunResult {
  Time collective_time = 0;       // when the last node of any rank finished (ps)
  std::vector<Time> rank_finish;  // per rank: its last node's finish
  std::int64_t messages = 0;      // send/receive pairs
  std::int64_t message_hops = 0;  // link traversals (> messages when routed over several hops)
  std::int64_t compute_nodes = 0;
  Time compute_ps = 0;                // sum of compute node durations
  std::int64_t other_nodes = 0;       // metadata / memory nodes (run in zero time)
  std::vector<EtMessage> by_message;  // in order of the sends (rank, then node index)
};

// Runs the trace ASTRA-sim style on `topology` (its NPU count must equal the rank count):
// every node whose data and control dependencies are done is issued at once; a send's message
// goes over the link src -> dst, or, without one, hop by hop along a shortest path (fewest
// hops, store-and-forward); each link is a FIFO, except that a link leaving a switch serves the
// messages that reached the switch at one instant by (source, destination, first chunk), as
// simulate() does (simulation/simulator.h). Under kAstra a message occupies a link for
// size/bandwidth and reaches the next device latency + size/bandwidth after it started; under
// kTacos the link is busy for the whole latency + size/bandwidth. A send finishes when its
// message reaches dst (as in ASTRA-sim), a receive when it is issued and its message has
// arrived, a COMP_NODE after duration_micros (under kAstra a 0 us node takes 1 ns, as in
// ASTRA-sim). Message size: comm_size, else `size` (the collective's size; tacos files carry
// it) / total_chunk_cnt * msg_chunk_cnt. Throws Error on a rank count mismatch, unknown sizes,
// workload (COMM_COLL_NODE) files, unreachable peers, and deadlocks (naming a stuck node).
// `one_send_in_flight`: a rank starts a send only when its previous one has arrived, as
// ASTRA-sim does when the per-rank algorithm ETs are its workload (how rooted collectives run).
// `congestion` false: links never queue (every hop takes latency + size/bandwidth from when the
// message reaches it), as ASTRA-sim's congestion-unaware backend times multi-dimensional
// networks. `whole_ns` (kAstra): each link crossing's times cut to whole ns, as ASTRA-sim's
// congestion-aware backend does, so the result is what ASTRA-sim prints.
EtRunResult simulate_chakra(const EtTrace& trace, const Topology& topology, LinkModel model,
                            std::optional<Bytes> size = std::nullopt,
                            bool one_send_in_flight = false, bool congestion = true,
                            bool whole_ns = false);

// tacos's own files back to an Algorithm: the transfers with the times simulate_chakra gives
// (start: the message entered its link; end: it arrived), so verify_algorithm can check the
// semantics. `topology` is the one the algorithm was made for: every message needs a direct
// link or a path through switches. Throws Error when the files carry no chunk identity
// (tacos_chunks / tacos metadata), naming the first node without it.
Algorithm chakra_to_algorithm(const EtTrace& trace, const Topology& topology, LinkModel model);

}  // namespace tacos
