#pragma once
// MSCCL-IR XML: the algorithm files the MSCCL executor (msccl-executor-nccl, RCCL) loads and that
// MSCCLang, SCCL and TACCL produce. The facts about the format are in docs/formats.md,
// "MSCCL-IR XML: the format"; how
// tacos maps its Algorithm onto the format is documented here and at the top of
// src/io/msccl_writer.cpp and src/io/msccl_reader.cpp.
//
// Ranks are the collective's members, which must be all NPUs of the topology (MSCCL has no relay
// ranks: a rank outside the collective would have to call the collective too), so rank r is NPU
// r. Offsets count MSCCL chunks of (buffer bytes / nchunksperloop).
//
// Chunk numbering (tacos's numbering is Collective::make's; N = ngpus, c = chunks per rank =
// nchunksperloop / N, or nchunksperloop for broadcast and reduce):
//   allgather      tacos chunk g*c+k = rank g's i[k] = every rank's o[g*c+k]
//   reducescatter  tacos chunk j*c+k = the sum over ranks of i[j*c+k], ending in rank j's o[k]
//   allreduce      tacos chunk x = the sum over ranks of i[x], ending in every rank's o[x]
//                  (in place: o is i). A file whose nchunksperloop C is not a multiple of N is
//                  read with m = N / gcd(N, C) tacos chunks per MSCCL chunk: x -> x*m .. x*m+m-1
//   alltoall       tacos chunk (g*N+j)*c+k = rank g's i[j*c+k] = rank j's o[g*c+k]
//   broadcast      tacos chunk k = the root's i[k] = every rank's o[k] (the root by a local cpy)
//   reduce         tacos chunk k = the sum over ranks of i[k], ending in the root's o[k]
//   gather         tacos chunk g*c+k = rank g's i[k] = the root's o[g*c+k]
//   scatter        tacos chunk j*c+k = the root's i[j*c+k] = rank j's o[k]
// In place: allreduce, broadcast, reduce and alltoall alias o to i; allgather and gather alias
// rank r's i[k] to o[r*c+k]; reducescatter and scatter alias rank r's o[k] to i[r*c+k].
// The root of broadcast, reduce, gather and scatter is the root attribute tacos_root (tacos
// writes it), else rank 0.
#include <optional>
#include <string>
#include <string_view>

#include "tacos/algorithm/algorithm.h"
#include "tacos/collective/collective.h"
#include "tacos/common/link_model.h"
#include "tacos/common/types.h"
#include "tacos/topology/topology.h"

namespace tacos {

// The executor's protocols (the `proto` root attribute).
enum class MscclProtocol { kSimple, kLL, kLL128 };
std::string to_string(MscclProtocol protocol);  // "Simple", "LL", "LL128"
// Parses "Simple", "LL" or "LL128" (also lower case); Error naming the choices otherwise.
MscclProtocol parse_msccl_protocol(std::string_view text);

// What the writer must fit. msccl-executor-nccl is built with MSCCL_MAX_NUM_STEPS = 64 by
// default (makefiles/common.mk; the older msccl runtime has 256): a thread block may hold at most
// `max_steps` steps, nops included, so long links are split over channels.
struct MscclWriteOptions {
  int max_steps = 64;  // 2 .. 256 (the writer needs room for a nop before a step)
  MscclProtocol protocol = MscclProtocol::kSimple;
};

// Writes the algorithm as MSCCL-IR XML (atomically: a temporary file renamed into place). The
// collective's members must be every NPU of its topology and every transfer must go between two
// NPUs; otherwise Error. Also throws Error when the schedule does not fit the executor's limits
// (32 channels, 32 thread blocks per channel, 216 thread blocks per GPU, `max_steps` steps per
// thread block, thread blocks named by a dependency numbered <= 127: the executor keeps depid in
// an int8). All-Reduce and Reduce are written for both in-place and out-of-place calls
// (inplace="1" outofplace="1": results go to the output buffer, and a result that would
// overwrite its own input in place waits for every reader of that input), or out of place only
// when those waits would name more than 128 thread blocks of a GPU; the other collectives out of
// place. `name` is the algo name attribute. Equal algorithms give byte-identical files.
//
// With the `topology` the algorithm runs on, messages from one GPU to different peers that share
// its first link (a switch port) also keep the schedule's order on that link: a send whose data
// is ready before the previous message on the port starts waits for that send, so that the file
// replays (read_msccl_xml on the same topology) to the schedule's times. Should those waits name
// more than 128 thread blocks of a GPU, the file is written without them (root attribute
// tacos_port_order="0": the executor then orders each port) and may take another time. Without
// a topology every NPU pair is taken to have a link of its own.
void write_msccl_xml(const Algorithm& algorithm, const std::string& path, const std::string& name,
                     const MscclWriteOptions& options = {});
void write_msccl_xml(const Algorithm& algorithm, const Topology& topology, const std::string& path,
                     const std::string& name, const MscclWriteOptions& options = {});
std::string algorithm_to_msccl_xml(const Algorithm& algorithm, const std::string& name,
                                   const MscclWriteOptions& options = {});
std::string algorithm_to_msccl_xml(const Algorithm& algorithm, const Topology& topology,
                                   const std::string& name, const MscclWriteOptions& options = {});

// Reads an MSCCL-IR XML file (MSCCLang, SCCL, TACCL or tacos) and executes its steps
// symbolically on `topology` (which must have exactly ngpus NPUs and a link or a path through
// switches for every pair of ranks that exchange data; through switches a message crosses the
// simulator's route hop by hop, store-and-forward, timed as simulate() times it) to produce an
// Algorithm in tacos's chunk numbering whose times are the execution's under `model`. A file marked
// for both in-place and out-of-place calls is executed both ways: the out-of-place run is returned,
// the in-place run must also be complete and pass verify (else Error naming the in-place call). The
// collective size is the file's tacos_size_bytes when it has one, else `size` (then required).
// Errors are one line, "FILE:LINE: what is wrong" (the line of the offending element), e.g. a
// missing attribute, a dependency on a missing thread block or step, ngpus not matching the
// topology, an unknown step type, a receive without a matching send (deadlock), or a schedule
// tacos's one-value-per-NPU-and-chunk model cannot express.
Algorithm read_msccl_xml(const std::string& path, const Topology& topology, LinkModel model,
                         std::optional<Bytes> size);
// The same from text in memory; `source_name` stands for FILE in error messages.
Algorithm algorithm_from_msccl_xml(std::string_view text, const std::string& source_name,
                                   const Topology& topology, LinkModel model,
                                   std::optional<Bytes> size);

// The MSCCL spelling of a collective ("allgather", "reducescatter", ...) and back (also accepts
// "reduce_scatter", "all_gather", "all_reduce", "all_to_all"); std::nullopt when unknown.
std::string msccl_collective_name(CollectiveKind kind);
std::optional<CollectiveKind> parse_msccl_collective_name(std::string_view text);

// A buffer position: buffer 'i' (input), 'o' (output) or 's' (scratch) and an offset in chunks.
struct MscclSlot {
  char buffer = 'i';
  int offset = 0;
  bool operator==(const MscclSlot&) const = default;
};

// The buffer layout above, in MSCCL chunk units (chunks per loop C, chunks per rank c).
class MscclLayout {
 public:
  // `chunks_per_loop` is nchunksperloop; Error when the collective needs it to be a multiple
  // of ngpus and it is not (allreduce never needs it).
  MscclLayout(CollectiveKind kind, int ngpus, int chunks_per_loop, NpuId root, bool in_place);

  CollectiveKind kind() const { return kind_; }
  int ngpus() const { return ngpus_; }
  int chunks_per_loop() const { return chunks_per_loop_; }
  int chunks_per_rank() const { return per_rank_; }
  bool in_place() const { return in_place_; }
  NpuId root() const { return root_; }
  // How many chunks a rank's input and output buffers have (i_chunks, o_chunks).
  int input_chunks() const;
  int output_chunks() const;
  // The slot where `rank` holds chunk `chunk` at the start (copies: the chunk; reductions: its
  // own contribution), or nullopt when it does not; after aliasing (see canonical()).
  std::optional<MscclSlot> input_slot(int rank, int chunk) const;
  // The slot where `rank` must hold chunk `chunk` at the end, or nullopt when it is not one of
  // the chunk's destinations; after aliasing.
  std::optional<MscclSlot> output_slot(int rank, int chunk) const;
  // The chunk whose data (or contribution) input offset `offset` of `rank` holds at the start,
  // or -1 (e.g. a non-root rank's input in broadcast).
  int initial_chunk(int rank, int offset) const;
  // In place, the slot a named slot stands for (o -> i, or i -> o[r*c + k], ...); out of place
  // the slot itself.
  MscclSlot canonical(int rank, MscclSlot slot) const;

 private:
  CollectiveKind kind_;
  int ngpus_;
  int chunks_per_loop_;
  int per_rank_;
  NpuId root_;
  bool in_place_;
};

}  // namespace tacos
