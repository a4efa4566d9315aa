// MSCCL-IR XML writer: an Algorithm -> every GPU's thread blocks and steps.
//
// Ranks are NPUs (the collective must span every NPU of its topology; transfers must go between
// NPUs). Buffers follow docs/formats.md ("MSCCL-IR XML: the format") and
// include/tacos/io/msccl_xml.h. All-Reduce and
// Reduce are written for both calls (inplace="1" outofplace="1"): the file's layout is out of
// place (inputs are only read, results go to the output), and because an in-place call makes
// o[x] the same memory as i[x], a result written to o[x] waits for every step that reads i[x]
// (write-after-read), exactly as a file written in place would. The executor picks a file by
// the call's kind (in place or not), so a file marked for one kind only is skipped by the other
// (NCCL then runs its own algorithm). The other collectives are written out of place: their
// in-place aliases (e.g. All-Gather's i[k] = o[r*c+k]) would turn the rank's own local `cpy`
// into a copy onto itself while other thread blocks read it. A rank that is a chunk's source and
// destination (All-Gather, All-to-All, Broadcast root, Gather root, Scatter root) copies it to
// its output with a local `cpy` in a thread block of its own (send="-1" recv="-1", channel 0).
//
// How the schedule becomes steps. The transfers are replayed in time order (arrivals before
// starts at equal times, then transfer index), tracking per (GPU, chunk) the slot holding the
// GPU's current value of the chunk (its "version") and the step that wrote it:
//  - a transfer is one message (more than 71 chunks: several, cnt < 72): on the sender an `s`
//    step reading the current versions (when they are not contiguous in one buffer, `cpy` steps
//    first gather them into contiguous scratch); on the receiver a receive step;
//  - a copy transfer stores with `r`; a reduce transfer with `rrc` (received + current version,
//    stored as a new version), or `r` when the receiver holds nothing of the chunk yet. A copy
//    arriving where a copy already arrived (a transfer the synthesizer wasted) is received into
//    scratch and otherwise ignored, as the simulator does;
//  - every new version goes to fresh scratch, except a destination's last one, which goes
//    straight to its output slot. Versions never overwrite each other, so the only dependencies
//    are read-after-write ones (a step waits for the step that wrote the version it reads), and
//    the one overwrite left, an All-Reduce or Reduce result that replaces the input in an
//    in-place call, waits for every earlier reader of the input (write-after-read);
//  - multi-chunk messages whose slots are not contiguous receive into scratch and fix up with
//    `re` (reduce) and `cpy` steps in the same thread block.
//  - given the topology, messages from one GPU to different peers that share its first link (a
//    switch port) keep the schedule's order there: a send whose data is ready no later than the
//    start of the port's previous message waits for that send (a send completes as its message
//    starts), which a replay would otherwise let overtake it. Dropped (and the root marked
//    tacos_port_order="0") when the waits would name more than 128 thread blocks of a GPU.
// Dependencies point from later to earlier times, so the file cannot deadlock.
//
// Thread blocks: one per (link, direction, channel): the sender's has send=peer recv=-1 and the
// receiver's send=-1 recv=peer, both on the same channel, holding the link's messages in start
// order, which is also the order of their arrivals: both ends issue them in the same order. A
// link whose messages need more than max_steps steps (nops included) on either end continues on
// further channels (segment j of a link in channel group g uses channel j*G + g); the first send
// of a segment waits for the last send of the previous one, so messages keep their order on the
// link. Links are put in channel groups so that no channel has more than 32 thread blocks on any
// GPU. A step with several dependencies is preceded by `nop` steps carrying all but the last
// (several on one thread block: only its latest step, which completes last). Thread block
// ids are dense from 0 per GPU: first the thread blocks that some step waits on (a step keeps its
// dependency's thread block id in an int8, so these must be numbered <= 127; more is an error),
// then the others, each part sorted by (send, recv, channel) as MSCCLang does.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include "../algorithm/transfer_check.h"
#include "tacos/common/atomic_file.h"
#include "tacos/common/error.h"
#include "tacos/common/xml_escape.h"
#include "tacos/io/msccl_xml.h"
#include "tacos/topology/switch_routes.h"

namespace tacos {
namespace {

constexpr int kMaxCount = 71;     // cnt < 72
constexpr int kMaxNamedTb = 127;  // int8_t dependentBid[] in the executor
constexpr int kMaxChannels = 32;
constexpr int kMaxTbsPerChannel = 32;
constexpr int kMaxTbs = 216;

[[noreturn]] void fail(const std::string& what) { throw Error("MSCCL-IR XML: " + what); }

// More thread blocks named by dependencies than an int8 holds.
struct TooManyNamedThreadBlocks : Error {
  using Error::Error;
};

enum class OpType : std::uint8_t { kSend, kRecv, kRecvReduceCopy, kCopy, kReduce };

// MSCCL-IR's step types, indexed by OpType.
const char* type_name(OpType type) {
  static constexpr const char* kNames[] = {"s", "r", "rrc", "cpy", "re"};
  return kNames[static_cast<std::size_t>(type)];
}

struct Op {
  OpType type = OpType::kSend;
  MscclSlot src{'i', -1};
  MscclSlot dst{'o', -1};
  int cnt = 1;
  std::vector<int> deps;  // op ids on the same GPU
  int tb = -1;            // thread block id
  int step = -1;          // the op's own step index (after its nops)
  int position = -1;      // index among its thread block's ops
  bool hasdep = false;
};

struct Message {
  int link = 0;
  Time ready = 0;    // when the sender holds every chunk it carries (the schedule's times)
  int send_op = -1;  // the `s` step
  int recv_op = -1;  // the receive step
  std::vector<int> send_ops;
  std::vector<int> recv_ops;
  int segment = 0;
};

// What a GPU holds of one chunk.
struct Version {
  bool has = false;
  bool from_copy = false;  // a finished copy (copies of it arriving later are wasted)
  bool tracked = false;    // the start slot is also the output slot (in place)
  bool output_written = false;
  MscclSlot slot{};
  int writer = -1;                   // op that wrote it; -1: held from the start
  Time time = 0;                     // when the schedule's arrival wrote it
  std::vector<int> initial_readers;  // ops reading the start value (tracked only)
};

std::uint64_t key(int gpu, ChunkId chunk) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(gpu)) << 32) |
         static_cast<std::uint32_t>(chunk);
}

void put_int(std::string& out, std::int64_t value) {
  char buffer[24];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  (void)ec;
  out.append(std::string_view(buffer, static_cast<std::size_t>(end - buffer)));
}

void put_attr(std::string& out, const char* name, std::int64_t value) {
  out += ' ';
  out += name;
  out += "=\"";
  put_int(out, value);
  out += '"';
}

void put_attr(std::string& out, const char* name, std::string_view value) {
  out += ' ';
  out += name;
  out += "=\"";
  out += xml_escape(std::string(value));
  out += '"';
}

bool consecutive(const std::vector<MscclSlot>& slots) {
  for (std::size_t k = 1; k < slots.size(); ++k)
    if (slots[k].buffer != slots[0].buffer ||
        slots[k].offset != slots[0].offset + static_cast<int>(k))
      return false;
  return true;
}

class Writer {
 public:
  // `both_calls`: write All-Reduce and Reduce for in-place and out-of-place calls.
  Writer(const Algorithm& algorithm, const Topology* topology, const std::string& name,
         const MscclWriteOptions& options, bool both_calls, bool port_order)
      : algorithm_(algorithm),
        topology_(topology),
        port_order_(topology != nullptr && port_order),
        collective_(algorithm.collective()),
        name_(name),
        n_(collective_.num_members()),
        reduction_(is_reduction(collective_.kind())),
        both_calls_(both_calls && (collective_.kind() == CollectiveKind::kAllReduce ||
                                   collective_.kind() == CollectiveKind::kReduce)),
        max_steps_(options.max_steps),
        protocol_(options.protocol),
        layout_(make_layout()) {
    if (max_steps_ < 2 || max_steps_ > 256)
      fail("the steps per thread block must be 2 .. 256, got " + std::to_string(max_steps_));
  }

  std::string run() {
    check_members();
    check_algorithm();
    replay();
    final_copies();
    assign_channels();
    build_thread_blocks();
    return emit();
  }

 private:
  // Before the layout, which numbers ranks: MSCCL ranks are NPU ids only when every NPU is one.
  void check_members() const {
    if (collective_.num_members() != collective_.topology_npus())
      fail("the " + to_string(collective_.kind()) + " runs on " + std::to_string(n_) + " of the " +
           std::to_string(collective_.topology_npus()) +
           " NPUs of its topology, but MSCCL has no relay ranks (every rank of the communicator "
           "takes part in the collective): synthesize it for a topology of exactly its NPUs");
  }

  MscclLayout make_layout() const {
    check_members();
    const CollectiveKind kind = collective_.kind();
    const bool per_buffer = kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce;
    const int k = collective_.chunks_per_npu();
    const int per_loop = per_buffer ? k : n_ * k;
    const NpuId root = has_root(kind) ? collective_.root() : 0;
    return MscclLayout(kind, n_, per_loop, root, /*in_place=*/false);
  }

  void check_algorithm() {
    if (topology_ != nullptr && topology_->npus() != collective_.topology_npus())
      fail("the algorithm is for " + std::to_string(collective_.topology_npus()) +
           " NPUs but the topology has " + std::to_string(topology_->npus()));
    const auto& transfers = algorithm_.transfers();
    for (std::size_t i = 0; i < transfers.size(); ++i) {
      const Transfer& t = transfers[i];
      auto where = [&] {
        return "transfer " + std::to_string(i) + " (" + std::to_string(t.src) + " -> " +
               std::to_string(t.dst) + ")";
      };
      for (DeviceId d : {t.src, t.dst})
        if (topology_ != nullptr && d >= n_ && d < topology_->devices() &&
            topology_->is_reducing(d))
          fail(where() + " sends to or from switch " + std::to_string(d) +
               ", which reduces in the network: MSCCL-IR has no switch ranks to express it "
               "(write --format json, or synthesize on the fabric without :nvls / :sharp)");
        else if (d < 0 || d >= n_)
          fail(where() + " goes through device " + std::to_string(d) +
               ", which is not an NPU: MSCCL connects GPUs directly and has no switch or relay "
               "ranks (unwind switches first)");
      if (t.src == t.dst) fail(where() + " sends from an NPU to itself");
      // Without a topology every NPU pair has a link of its own: only the chunks to check.
      const std::string error = topology_ != nullptr
                                    ? detail::check_transfer(algorithm_, *topology_, i).error
                                    : detail::check_transfer_chunks(algorithm_, i);
      if (!error.empty()) fail(error);
      if (t.reduce && !reduction_)
        fail(where() + " is a reduce transfer in a " + to_string(collective_.kind()));
    }
  }

  Version& version(int gpu, ChunkId chunk) {
    auto [it, inserted] = versions_.try_emplace(key(gpu, chunk));
    Version& v = it->second;
    if (inserted) {
      const auto in = layout_.input_slot(gpu, chunk);
      if (in) {
        v.has = true;
        v.from_copy = !reduction_;
        v.slot = *in;
        // Both calls: o[x] is i[x] in an in-place call, so the result overwrites the start
        // value there (the file's own layout keeps them apart: the output is not written yet).
        const auto out = layout_.output_slot(gpu, chunk);
        v.tracked = both_calls_ && out && out->offset == in->offset;
      }
    }
    return v;
  }

  int new_op(int /*gpu*/, OpType type) {
    ops_.push_back(Op{});
    ops_.back().type = type;
    return static_cast<int>(ops_.size()) - 1;
  }

  int alloc_scratch(int gpu, int count) {
    const int base = scratch_[gpu];
    scratch_[gpu] += count;
    return base;
  }

  int link_index(int src, int dst) {
    auto [it, inserted] = link_ids_.try_emplace(key(src, dst), static_cast<int>(links_.size()));
    if (inserted) {
      links_.push_back({src, dst});
      link_messages_.emplace_back();
    }
    return it->second;
  }

  struct Event {
    Time time;
    int kind;  // 0 arrival, 1 start
    std::uint32_t index;
  };

  std::vector<Event> events() const {
    const auto& transfers = algorithm_.transfers();
    std::vector<Event> events;
    events.reserve(transfers.size() * 2);
    for (std::size_t i = 0; i < transfers.size(); ++i) {
      events.push_back({transfers[i].start, 1, static_cast<std::uint32_t>(i)});
      events.push_back({transfers[i].end, 0, static_cast<std::uint32_t>(i)});
    }
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
      if (a.time != b.time) return a.time < b.time;
      if (a.kind != b.kind) return a.kind < b.kind;
      return a.index < b.index;
    });
    return events;
  }

  // Which arrival last changes each (GPU, chunk)'s version: (transfer, position in it).
  void find_last_changes(const std::vector<Event>& events) {
    struct State {
      bool has, from_copy;
    };
    std::unordered_map<std::uint64_t, State> state;
    const auto& transfers = algorithm_.transfers();
    for (const Event& e : events) {
      if (e.kind != 0) continue;
      const Transfer& t = transfers[e.index];
      const auto chunks = algorithm_.chunks(t);
      for (std::size_t k = 0; k < chunks.size(); ++k) {
        auto [it, inserted] = state.try_emplace(key(t.dst, chunks[k]));
        if (inserted) it->second = {layout_.input_slot(t.dst, chunks[k]).has_value(), !reduction_};
        State& s = it->second;
        if (!t.reduce && s.has && s.from_copy) continue;  // wasted
        s.has = true;
        s.from_copy = !t.reduce;
        last_change_[key(t.dst, chunks[k])] = {e.index, static_cast<std::uint32_t>(k)};
      }
    }
  }

  void replay() {
    const auto& transfers = algorithm_.transfers();
    scratch_.assign(n_, 0);
    const std::vector<Event> order = events();
    find_last_changes(order);
    first_message_.assign(transfers.size(), 0);
    for (const Event& e : order) {
      const Transfer& t = transfers[e.index];
      const auto chunks = algorithm_.chunks(t);
      const int pieces = (t.num_chunks + kMaxCount - 1) / kMaxCount;
      if (e.kind == 1) {
        first_message_[e.index] = static_cast<int>(messages_.size());
        const int link = link_index(t.src, t.dst);
        for (int p = 0; p < pieces; ++p) {
          const int begin = p * kMaxCount;
          const int end = std::min<int>(t.num_chunks, begin + kMaxCount);
          messages_.push_back(Message{});
          messages_.back().link = link;
          link_messages_[link].push_back(static_cast<int>(messages_.size()) - 1);
          send_side(e.index, chunks.subspan(begin, end - begin), messages_.back());
          keep_port_order(t, messages_.back());
        }
      } else {
        for (int p = 0; p < pieces; ++p) {
          const int begin = p * kMaxCount;
          const int end = std::min<int>(t.num_chunks, begin + kMaxCount);
          receive_side(e.index, begin, chunks.subspan(begin, end - begin),
                       messages_[first_message_[e.index] + p]);
        }
      }
    }
  }

  // Messages from one NPU to different peers through a switch share the NPU's port, but sit in
  // different thread blocks, so a replay would start them as their data arrives, not in the
  // schedule's order on the port. A message whose data is there before the port's previous
  // message starts waits for that send (a send step completes as its message starts); one whose
  // data comes later cannot overtake it and needs no dependency.
  void keep_port_order(const Transfer& t, const Message& message) {
    if (!port_order_) return;
    const LinkId port = topology_->switch_routes().route(t.src, t.dst)[0];
    auto [it, inserted] = port_last_.try_emplace(port, std::pair<int, Time>{-1, 0});
    if (!inserted && message.ready <= it->second.second)
      ops_[message.send_op].deps.push_back(it->second.first);
    it->second = {message.send_op, t.start};
  }

  void send_side(std::uint32_t index, std::span<const ChunkId> chunks, Message& message) {
    const Transfer& t = algorithm_.transfers()[index];
    const int gpu = t.src;
    std::vector<MscclSlot> slots;
    std::vector<int> writers;
    for (ChunkId c : chunks) {
      Version& v = version(gpu, c);
      if (!v.has)
        fail("transfer " + std::to_string(index) + " (" + std::to_string(t.src) + " -> " +
             std::to_string(t.dst) + ") sends chunk " + std::to_string(c) + " from NPU " +
             std::to_string(gpu) + ", which does not hold it then (run verify)");
      slots.push_back(v.slot);
      writers.push_back(v.writer);
      message.ready = std::max(message.ready, v.time);
    }
    auto note_reader = [&](ChunkId c, int op) {
      Version& v = version(gpu, c);
      if (v.tracked && v.writer < 0) v.initial_readers.push_back(op);
    };
    const int n = static_cast<int>(chunks.size());
    MscclSlot from = slots[0];
    if (!consecutive(slots)) {
      const int base = alloc_scratch(gpu, n);
      for (int k = 0; k < n; ++k) {
        const int op = new_op(gpu, OpType::kCopy);
        ops_[op].src = slots[k];
        ops_[op].dst = {'s', base + k};
        if (writers[k] >= 0) ops_[op].deps.push_back(writers[k]);
        note_reader(chunks[k], op);
        message.send_ops.push_back(op);
      }
      from = {'s', base};
      writers.clear();
    }
    const int op = new_op(gpu, OpType::kSend);
    ops_[op].src = from;
    ops_[op].cnt = n;
    for (int w : writers)
      if (w >= 0) ops_[op].deps.push_back(w);
    if (writers.size() == chunks.size())
      for (ChunkId c : chunks) note_reader(c, op);
    message.send_ops.push_back(op);
    message.send_op = op;
  }

  void receive_side(std::uint32_t index, int first, std::span<const ChunkId> chunks,
                    Message& message) {
    const Transfer& t = algorithm_.transfers()[index];
    const int gpu = t.dst;
    const int n = static_cast<int>(chunks.size());
    enum class Action { kJunk, kStore, kCombine };
    std::vector<Action> actions(n);
    std::vector<char> final(n, 0);
    std::vector<MscclSlot> outputs(n), current(n);
    std::vector<int> current_writer(n, -1);
    bool all_store = true, all_combine = true, any_final = false, all_final = true;
    for (int k = 0; k < n; ++k) {
      Version& v = version(gpu, chunks[k]);
      if (!t.reduce)
        actions[k] = v.has && v.from_copy ? Action::kJunk : Action::kStore;
      else
        actions[k] = v.has ? Action::kCombine : Action::kStore;
      if (actions[k] == Action::kCombine) {
        current[k] = v.slot;
        current_writer[k] = v.writer;
      }
      if (actions[k] != Action::kJunk) {
        auto it = last_change_.find(key(gpu, chunks[k]));
        const auto out = layout_.output_slot(gpu, chunks[k]);
        if (out && it != last_change_.end() && it->second.first == index &&
            static_cast<int>(it->second.second) == first + k) {
          final[k] = 1;
          outputs[k] = *out;
        }
      }
      all_store = all_store && actions[k] != Action::kCombine;
      all_combine = all_combine && actions[k] == Action::kCombine;
      any_final = any_final || final[k];
      all_final = all_final && final[k];
    }
    // Write-after-read: a final value overwriting the start value waits for its readers.
    // (tracked: the output slot is the start slot, so a final value overwrites the start value).
    auto war_deps = [&](int k, std::vector<int>& deps) {
      const Version& v = version(gpu, chunks[k]);
      if (final[k] && v.tracked)
        deps.insert(deps.end(), v.initial_readers.begin(), v.initial_readers.end());
    };
    auto settle = [&](int k, MscclSlot slot, int writer) {
      Version& v = version(gpu, chunks[k]);
      if (v.tracked && v.writer < 0 && actions[k] == Action::kCombine)
        v.initial_readers.push_back(writer);
      v.has = true;
      v.from_copy = !t.reduce;
      v.slot = slot;
      v.writer = writer;
      v.time = t.end;
      if (final[k]) v.output_written = true;
    };

    std::vector<MscclSlot> targets(n);
    bool single = false;
    if ((all_store || all_combine) && (!any_final || (all_final && consecutive(outputs))) &&
        (!all_combine || consecutive(current))) {
      single = true;
      if (any_final) {
        targets = outputs;
      } else {
        const int base = alloc_scratch(gpu, n);
        for (int k = 0; k < n; ++k) targets[k] = {'s', base + k};
      }
    }
    const MscclSlot sent_from = ops_[message.send_op].src;
    if (single) {
      const int op = new_op(gpu, all_combine ? OpType::kRecvReduceCopy : OpType::kRecv);
      ops_[op].cnt = n;
      ops_[op].dst = targets[0];
      ops_[op].src = all_combine ? current[0] : sent_from;
      std::vector<int> deps;
      for (int k = 0; k < n; ++k) {
        if (all_combine && current_writer[k] >= 0) deps.push_back(current_writer[k]);
        war_deps(k, deps);
      }
      ops_[op].deps = std::move(deps);
      for (int k = 0; k < n; ++k)
        if (actions[k] != Action::kJunk) settle(k, targets[k], op);
      message.recv_ops.push_back(op);
      message.recv_op = op;
    } else {
      const int base = alloc_scratch(gpu, n);
      const int op = new_op(gpu, OpType::kRecv);
      ops_[op].cnt = n;
      ops_[op].dst = {'s', base};
      ops_[op].src = sent_from;
      message.recv_ops.push_back(op);
      message.recv_op = op;
      for (int k = 0; k < n; ++k) {
        if (actions[k] == Action::kJunk) continue;
        const MscclSlot here{'s', base + k};
        int writer = op;
        if (actions[k] == Action::kCombine) {
          writer = new_op(gpu, OpType::kReduce);
          ops_[writer].src = current[k];
          ops_[writer].dst = here;
          if (current_writer[k] >= 0) ops_[writer].deps.push_back(current_writer[k]);
          message.recv_ops.push_back(writer);
        }
        if (final[k]) {
          const int copy = new_op(gpu, OpType::kCopy);
          ops_[copy].src = here;
          ops_[copy].dst = outputs[k];
          war_deps(k, ops_[copy].deps);
          message.recv_ops.push_back(copy);
        }
        settle(k, here, writer);
      }
    }
    ops_[message.send_op].dst = ops_[message.recv_op].dst;
  }

  // Destinations whose value never reached their output slot (held from the start, e.g. an
  // All-Gather rank's own chunks) get a local cpy.
  void final_copies() {
    local_ops_.assign(n_, {});
    struct Pending {
      MscclSlot from, to;
      std::vector<int> deps;
    };
    for (int gpu = 0; gpu < n_; ++gpu) {
      std::vector<Pending> pending;
      for (ChunkId c = 0; c < collective_.num_chunks(); ++c) {
        const auto out = layout_.output_slot(gpu, c);
        if (!out) continue;
        Version& v = version(gpu, c);
        if (!v.has)
          fail("NPU " + std::to_string(gpu) + " never receives chunk " + std::to_string(c) +
               ", which it must hold at the end (the algorithm is incomplete; run verify)");
        if (v.output_written || v.slot == *out) continue;
        Pending p{v.slot, *out, {}};
        if (v.writer >= 0) p.deps.push_back(v.writer);
        if (v.tracked)
          p.deps.insert(p.deps.end(), v.initial_readers.begin(), v.initial_readers.end());
        pending.push_back(std::move(p));
      }
      for (std::size_t k = 0; k < pending.size();) {
        std::size_t run = 1;
        while (k + run < pending.size() && run < static_cast<std::size_t>(kMaxCount) &&
               pending[k + run].deps.empty() && pending[k].deps.empty() &&
               pending[k + run].from.buffer == pending[k].from.buffer &&
               pending[k + run].from.offset == pending[k].from.offset + static_cast<int>(run) &&
               pending[k + run].to.buffer == pending[k].to.buffer &&
               pending[k + run].to.offset == pending[k].to.offset + static_cast<int>(run))
          ++run;
        const int op = new_op(gpu, OpType::kCopy);
        ops_[op].src = pending[k].from;
        ops_[op].dst = pending[k].to;
        ops_[op].cnt = static_cast<int>(run);
        ops_[op].deps = pending[k].deps;
        local_ops_[gpu].push_back(op);
        k += run;
      }
    }
  }

  int cost(const std::vector<int>& ops, int extra_dep_op) const {
    int steps = 0;
    // An upper bound: deps inside the thread block and repeated ones cost nothing in the end.
    std::vector<int> deps;
    for (int op : ops) {
      deps = ops_[op].deps;
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      steps += std::max<int>(1, static_cast<int>(deps.size()) + (op == extra_dep_op));
    }
    return steps;
  }

  void assign_channels() {
    // Local thread blocks per GPU (channel 0).
    local_tbs_.assign(n_, 0);
    local_split_.assign(n_, {});
    for (int gpu = 0; gpu < n_; ++gpu) {
      int steps = 0;
      for (std::size_t k = 0; k < local_ops_[gpu].size(); ++k) {
        const int c = cost({local_ops_[gpu][k]}, -1);
        if (c > max_steps_)
          fail("a local copy on NPU " + std::to_string(gpu) + " waits for " + std::to_string(c) +
               " steps, more than the " + std::to_string(max_steps_) +
               " steps a thread block may have (raise --msccl-max-steps)");
        if (k == 0 || steps + c > max_steps_) {
          local_split_[gpu].push_back(k);
          steps = 0;
        }
        steps += c;
      }
      local_tbs_[gpu] = static_cast<int>(local_split_[gpu].size());
    }
    // Segments per link.
    segments_.assign(links_.size(), 1);
    for (std::size_t l = 0; l < links_.size(); ++l) {
      int send_steps = 0, recv_steps = 0, segment = 0, previous_send = -1;
      bool first_in_segment = true;
      for (int m : link_messages_[l]) {
        Message& message = messages_[m];
        auto costs = [&](bool with_extra) {
          const int extra = with_extra ? message.send_op : -1;
          return std::pair<int, int>(cost(message.send_ops, extra), cost(message.recv_ops, -1));
        };
        auto [s, r] = costs(segment > 0 && first_in_segment);
        if (!first_in_segment && (send_steps + s > max_steps_ || recv_steps + r > max_steps_)) {
          ++segment;
          send_steps = recv_steps = 0;
          first_in_segment = true;
          std::tie(s, r) = costs(true);
        }
        if (s > max_steps_ || r > max_steps_)
          fail("one message on link " + std::to_string(links_[l].first) + " -> " +
               std::to_string(links_[l].second) + " needs " + std::to_string(std::max(s, r)) +
               " steps, more than the " + std::to_string(max_steps_) +
               " a thread block may have (raise --msccl-max-steps)");
        if (segment > 0 && first_in_segment) ops_[message.send_op].deps.push_back(previous_send);
        message.segment = segment;
        send_steps += s;
        recv_steps += r;
        first_in_segment = false;
        previous_send = message.send_op;
      }
      segments_[l] = segment + 1;
    }
    // Channel groups: no GPU gets more than 32 thread blocks in one channel.
    std::vector<std::size_t> order(links_.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return links_[a] < links_[b]; });
    std::vector<std::vector<int>> per_group(n_);
    group_.assign(links_.size(), 0);
    int groups = 1;
    for (std::size_t l : order) {
      const auto [u, v] = links_[l];
      int g = 0;
      for (;; ++g) {
        auto fits = [&](int gpu) {
          if (static_cast<int>(per_group[gpu].size()) <= g) per_group[gpu].resize(g + 1, 0);
          return per_group[gpu][g] < kMaxTbsPerChannel - (g == 0 ? local_tbs_[gpu] : 0);
        };
        const bool fu = fits(u), fv = fits(v);
        if (fu && fv) break;
      }
      ++per_group[u][g];
      ++per_group[v][g];
      group_[l] = g;
      groups = std::max(groups, g + 1);
    }
    for (int gpu = 0; gpu < n_; ++gpu)
      if (local_tbs_[gpu] > kMaxTbsPerChannel)
        fail("NPU " + std::to_string(gpu) + " needs " + std::to_string(local_tbs_[gpu]) +
             " thread blocks of local copies, more than fit in a channel");
    groups_ = groups;
    for (std::size_t l = 0; l < links_.size(); ++l) {
      const int last_channel = (segments_[l] - 1) * groups_ + group_[l];
      if (last_channel >= kMaxChannels)
        fail("link " + std::to_string(links_[l].first) + " -> " + std::to_string(links_[l].second) +
             " carries " + std::to_string(link_messages_[l].size()) + " messages, which need " +
             std::to_string(segments_[l]) + " thread blocks of at most " +
             std::to_string(max_steps_) + " steps; with " + std::to_string(groups_) +
             " channel group(s) that takes channel " + std::to_string(last_channel) +
             ", but MSCCL has " + std::to_string(kMaxChannels) +
             " channels (use fewer chunks per NPU or raise --msccl-max-steps)");
    }
  }

  struct Tb {
    int send = -1, recv = -1, chan = 0, local = 0;
    std::vector<int> ops;
  };

  void build_thread_blocks() {
    tbs_.assign(n_, {});
    for (int gpu = 0; gpu < n_; ++gpu)
      for (int t = 0; t < local_tbs_[gpu]; ++t) {
        Tb tb;
        tb.local = t;
        const auto& split = local_split_[gpu];
        const auto begin = local_ops_[gpu].begin() + static_cast<std::ptrdiff_t>(split[t]);
        const auto end = t + 1 < local_tbs_[gpu]
                             ? local_ops_[gpu].begin() + static_cast<std::ptrdiff_t>(split[t + 1])
                             : local_ops_[gpu].end();
        tb.ops.assign(begin, end);
        tbs_[gpu].push_back(std::move(tb));
      }
    for (std::size_t l = 0; l < links_.size(); ++l) {
      const auto [u, v] = links_[l];
      const std::size_t send_first = tbs_[u].size(), recv_first = tbs_[v].size();
      for (int j = 0; j < segments_[l]; ++j) {
        Tb s, r;
        s.send = v;
        r.recv = u;
        s.chan = r.chan = j * groups_ + group_[l];
        tbs_[u].push_back(std::move(s));
        tbs_[v].push_back(std::move(r));
      }
      for (int m : link_messages_[l]) {
        const Message& message = messages_[m];
        auto& s = tbs_[u][send_first + message.segment].ops;
        auto& r = tbs_[v][recv_first + message.segment].ops;
        s.insert(s.end(), message.send_ops.begin(), message.send_ops.end());
        r.insert(r.end(), message.recv_ops.begin(), message.recv_ops.end());
      }
    }
    for (int gpu = 0; gpu < n_; ++gpu) {
      auto& tbs = tbs_[gpu];
      std::sort(tbs.begin(), tbs.end(), [](const Tb& a, const Tb& b) {
        if (a.send != b.send) return a.send < b.send;
        if (a.recv != b.recv) return a.recv < b.recv;
        if (a.chan != b.chan) return a.chan < b.chan;
        return a.local < b.local;
      });
      if (static_cast<int>(tbs.size()) > kMaxTbs)
        fail("NPU " + std::to_string(gpu) + " needs " + std::to_string(tbs.size()) +
             " thread blocks, more than the " + std::to_string(kMaxTbs) +
             " the MSCCL executor allows");
      for (std::size_t id = 0; id < tbs.size(); ++id)
        for (std::size_t k = 0; k < tbs[id].ops.size(); ++k) {
          ops_[tbs[id].ops[k]].tb = static_cast<int>(id);
          ops_[tbs[id].ops[k]].position = static_cast<int>(k);
        }
    }
    // Step indices: deps on ops of the same thread block are dropped (steps run in order), and
    // of several deps on one thread block only the latest is kept (it completes after the
    // others: a thread block signals its steps in order).
    filtered_.assign(ops_.size(), {});
    for (int gpu = 0; gpu < n_; ++gpu)
      for (Tb& tb : tbs_[gpu]) {
        int step = 0;
        for (int op : tb.ops) {
          std::vector<int>& deps = filtered_[op];
          for (int d : ops_[op].deps)
            if (ops_[d].tb != ops_[op].tb) deps.push_back(d);
          std::sort(deps.begin(), deps.end(), [&](int a, int b) {
            return std::pair(ops_[a].tb, -ops_[a].position) <
                   std::pair(ops_[b].tb, -ops_[b].position);
          });
          deps.erase(std::unique(deps.begin(), deps.end(),
                                 [&](int a, int b) { return ops_[a].tb == ops_[b].tb; }),
                     deps.end());
          step += std::max<int>(0, static_cast<int>(deps.size()) - 1);
          ops_[op].step = step++;
          for (int d : deps) ops_[d].hasdep = true;
        }
        if (step > max_steps_)
          fail("internal: a thread block of NPU " + std::to_string(gpu) + " has " +
               std::to_string(step) + " steps");
      }
    number_named_first();
  }

  // Thread blocks that a dependency names come first: the executor keeps depid in an int8.
  void number_named_first() {
    for (int gpu = 0; gpu < n_; ++gpu) {
      auto& tbs = tbs_[gpu];
      std::vector<char> named(tbs.size(), 0);
      for (const Tb& tb : tbs)
        for (int op : tb.ops)
          for (int d : filtered_[op]) named[ops_[d].tb] = 1;
      const auto count = std::count(named.begin(), named.end(), 1);
      if (count > kMaxNamedTb + 1)
        throw TooManyNamedThreadBlocks(
            "MSCCL-IR XML: NPU " + std::to_string(gpu) + " has " + std::to_string(count) +
            " thread blocks that other steps wait on, but the executor keeps a dependency's "
            "thread block id in an int8 (ids 0 .. " +
            std::to_string(kMaxNamedTb) +
            "): the schedule has too many peers per GPU for MSCCL (use a sparser topology)");
      std::vector<int> order(tbs.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_partition(order.begin(), order.end(), [&](int t) { return named[t] != 0; });
      std::vector<int> new_id(tbs.size());
      std::vector<Tb> sorted;
      sorted.reserve(tbs.size());
      for (std::size_t k = 0; k < order.size(); ++k) {
        new_id[order[k]] = static_cast<int>(k);
        sorted.push_back(std::move(tbs[order[k]]));
      }
      tbs = std::move(sorted);
      for (const Tb& tb : tbs)
        for (int op : tb.ops) ops_[op].tb = new_id[ops_[op].tb];
    }
  }

  std::string emit() const {
    const CollectiveKind kind = collective_.kind();
    int channels = 1;
    for (int gpu = 0; gpu < n_; ++gpu)
      for (const Tb& tb : tbs_[gpu]) channels = std::max(channels, tb.chan + 1);
    std::string out;
    out.reserve(256 + ops_.size() * 150);
    out += "<algo";
    put_attr(out, "name", name_);
    put_attr(out, "proto", to_string(protocol_));
    put_attr(out, "nchannels", channels);
    put_attr(out, "nchunksperloop", layout_.chunks_per_loop());
    put_attr(out, "ngpus", n_);
    put_attr(out, "coll", msccl_collective_name(kind));
    put_attr(out, "inplace", both_calls_ ? 1 : 0);
    put_attr(out, "outofplace", 1);
    put_attr(out, "minBytes", 0);
    put_attr(out, "maxBytes", 0);
    put_attr(out, "tacos_size_bytes", collective_.size());
    put_attr(out, "tacos_chunk_bytes", collective_.chunk_bytes());
    if (has_root(kind)) put_attr(out, "tacos_root", collective_.root());
    put_attr(out, "tacos_synthesizer", algorithm_.synthesizer);
    put_attr(out, "tacos_seed", std::to_string(algorithm_.seed));
    // Readers (tacos synthesize's note) learn that the ports' order was left to the executor.
    if (topology_ != nullptr && !port_order_) put_attr(out, "tacos_port_order", 0);
    out += ">\n";
    for (int gpu = 0; gpu < n_; ++gpu) {
      out += "  <gpu";
      put_attr(out, "id", gpu);
      put_attr(out, "i_chunks", layout_.input_chunks());
      put_attr(out, "o_chunks", layout_.output_chunks());
      put_attr(out, "s_chunks", scratch_[gpu]);
      out += ">\n";
      for (std::size_t id = 0; id < tbs_[gpu].size(); ++id) {
        const Tb& tb = tbs_[gpu][id];
        out += "    <tb";
        put_attr(out, "id", static_cast<std::int64_t>(id));
        put_attr(out, "send", tb.send);
        put_attr(out, "recv", tb.recv);
        put_attr(out, "chan", tb.chan);
        out += ">\n";
        int step = 0;
        for (int o : tb.ops) {
          const Op& op = ops_[o];
          const std::vector<int>& deps = filtered_[o];
          for (std::size_t d = 0; d + 1 < deps.size(); ++d) {
            out += "      <step";
            put_attr(out, "s", step++);
            put_attr(out, "type", "nop");
            put_attr(out, "srcbuf", "i");
            put_attr(out, "srcoff", -1);
            put_attr(out, "dstbuf", "o");
            put_attr(out, "dstoff", -1);
            put_attr(out, "cnt", 0);
            put_attr(out, "depid", ops_[deps[d]].tb);
            put_attr(out, "deps", ops_[deps[d]].step);
            put_attr(out, "hasdep", 0);
            out += "/>\n";
          }
          out += "      <step";
          put_attr(out, "s", step++);
          put_attr(out, "type", type_name(op.type));
          put_attr(out, "srcbuf", std::string_view(&op.src.buffer, 1));
          put_attr(out, "srcoff", op.src.offset);
          put_attr(out, "dstbuf", std::string_view(&op.dst.buffer, 1));
          put_attr(out, "dstoff", op.dst.offset);
          put_attr(out, "cnt", op.cnt);
          put_attr(out, "depid", deps.empty() ? -1 : ops_[deps.back()].tb);
          put_attr(out, "deps", deps.empty() ? -1 : ops_[deps.back()].step);
          put_attr(out, "hasdep", op.hasdep ? 1 : 0);
          out += "/>\n";
        }
        out += "    </tb>\n";
      }
      out += "  </gpu>\n";
    }
    out += "</algo>\n";
    return out;
  }

  const Algorithm& algorithm_;
  const Topology* topology_;  // null: every NPU pair has a link of its own
  bool port_order_;           // sends keep the schedule's order on each shared first link
  const Collective& collective_;
  std::string name_;
  int n_;
  bool reduction_;
  bool both_calls_;  // written for in-place and out-of-place calls
  int max_steps_;
  MscclProtocol protocol_;
  MscclLayout layout_;

  std::vector<Op> ops_;
  std::vector<std::vector<int>> filtered_;
  std::vector<Message> messages_;
  std::vector<int> first_message_;
  std::unordered_map<std::uint64_t, Version> versions_;
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>> last_change_;
  std::vector<int> scratch_;
  std::unordered_map<std::uint64_t, int> link_ids_;
  std::unordered_map<LinkId, std::pair<int, Time>> port_last_;  // its last send op and start
  std::vector<std::pair<int, int>> links_;
  std::vector<std::vector<int>> link_messages_;
  std::vector<std::vector<int>> local_ops_;
  std::vector<int> local_tbs_;
  std::vector<std::vector<std::size_t>> local_split_;  // first op of each local thread block
  std::vector<int> segments_;
  std::vector<int> group_;
  int groups_ = 1;
  std::vector<std::vector<Tb>> tbs_;
};

}  // namespace

std::string to_string(MscclProtocol protocol) {
  if (protocol == MscclProtocol::kLL) return "LL";
  return protocol == MscclProtocol::kLL128 ? "LL128" : "Simple";
}

MscclProtocol parse_msccl_protocol(std::string_view text) {
  if (text == "Simple" || text == "simple") return MscclProtocol::kSimple;
  if (text == "LL" || text == "ll") return MscclProtocol::kLL;
  if (text == "LL128" || text == "ll128") return MscclProtocol::kLL128;
  throw Error("unknown MSCCL protocol '" + std::string(text) + "' (expected Simple, LL or LL128)");
}

namespace {

std::string to_xml(const Algorithm& algorithm, const Topology* topology, const std::string& name,
                   const MscclWriteOptions& options) {
  // The in-place call's write-after-read dependencies name the send thread blocks too; out of
  // place only, they are not needed (e.g. All-Reduce on fc:72: 142 named, then 71). The ports'
  // order names send thread blocks as well (All-to-All at K = 128 on dgx-a100:2: 153); without
  // it the file is still right, only slower than the schedule.
  for (const bool port_order : {true, false})
    for (const bool both_calls : {true, false}) {
      try {
        return Writer(algorithm, topology, name, options, both_calls, port_order).run();
      } catch (const TooManyNamedThreadBlocks&) {
        if (!port_order && !both_calls) throw;
      }
    }
  return {};
}

void write_xml(const Algorithm& algorithm, const Topology* topology, const std::string& path,
               const std::string& name, const MscclWriteOptions& options) {
  std::string text;
  try {
    text = to_xml(algorithm, topology, name, options);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  write_file_atomically(path, text);
}

}  // namespace

std::string algorithm_to_msccl_xml(const Algorithm& algorithm, const std::string& name,
                                   const MscclWriteOptions& options) {
  return to_xml(algorithm, nullptr, name, options);
}

std::string algorithm_to_msccl_xml(const Algorithm& algorithm, const Topology& topology,
                                   const std::string& name, const MscclWriteOptions& options) {
  return to_xml(algorithm, &topology, name, options);
}

void write_msccl_xml(const Algorithm& algorithm, const std::string& path, const std::string& name,
                     const MscclWriteOptions& options) {
  write_xml(algorithm, nullptr, path, name, options);
}

void write_msccl_xml(const Algorithm& algorithm, const Topology& topology, const std::string& path,
                     const std::string& name, const MscclWriteOptions& options) {
  write_xml(algorithm, &topology, path, name, options);
}

}  // namespace tacos
