// MSCCL-IR XML reader: executes a file's steps symbolically and records its messages as an
// Algorithm (the chunk numbering is in include/tacos/io/msccl_xml.h).
//
// Accepted input: the <algo> root needs ngpus, coll and nchunksperloop (the executor's other
// required attributes are checked by it, not needed here; unknown attributes and elements are
// ignored); <gpu> needs id, i_chunks, o_chunks, s_chunks; <tb> needs id, send, recv, chan; <step>
// needs type, and srcbuf/srcoff when it reads a local source (s, rrs, rrc, rrcs, cpy, re),
// dstbuf/dstoff when it stores (r, rcs, rrc, rrcs, cpy, re); SCCL's newer buf/off stand in for
// either. cnt defaults to 1, depid/deps to -1, hasdep to 0. Steps are numbered by their position
// in the thread block, as the executor counts them (the s attribute is not needed). coll may be
// spelled reducescatter or reduce_scatter.
//
// Execution (times in picoseconds on `topology`, under the given link model):
//  - each thread block runs its steps in order; a step starts when the previous one is done and
//    its dependency has signalled. As in the executor, depid/deps = (tb, s) waits until thread
//    block tb completes a step with index >= s that has hasdep="1" (nop steps never signal);
//  - a send (s, or the send half of rcs/rrs/rrcs) queues its message on the first link of its
//    route src -> dst (the direct link, or up the sender's port to a switch: SwitchRoutes, as
//    the simulator routes it); each link sends one message at a time, first queued first; the
//    message starts when the link is free, reads its source then, and crosses each link in
//    latency + bytes / bandwidth; the link is busy for all of that (tacos model) or for
//    bytes / bandwidth (astra). At a switch it queues for its next link, store-and-forward,
//    served in the simulator's order (the port engine, simulation/port_engine.h). The send step
//    is done when its message starts;
//  - a receive takes the next message of its (peer, channel) in FIFO order and is done when that
//    message has arrived; rcs/rrs/rrcs then send on;
//  - local steps (cpy, re, nop) take no time.
// Every message becomes one transfer (cnt chunks; m tacos chunks each, see the header) from its
// start to its arrival at the receiver.
//
// Values: every buffer slot holds a chunk (copies) or a chunk's partial sum and its contributor
// set (reductions). A transfer is a reduce transfer when its receive step reduces (rrs, rrc,
// rrcs); a plain receive (r, rcs) of a partial is a copy when it overwrites data of the same
// chunk or the partial overlaps what the receiver holds, and a reduce transfer when it stages a
// disjoint partial into a slot holding nothing of that chunk (MSCCLang's all-pairs All-Reduce
// reduces such staged partials locally with `re`). tacos's model changes when a message
// arrives, the slots when its receive step runs. tacos keeps one value per NPU and chunk (verify's
// model); the reader tracks that model alongside and throws when the file departs from it (a
// message carrying a partial that differs from the sender's tacos value, or a destination whose
// output slot and tacos value disagree on being complete), so that verify_algorithm judges the file
// itself. What the model agrees on but is incomplete (e.g. a lost contribution) is left for
// verify to report.
#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <pugixml.hpp>
#include <span>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../common/read_file.h"
#include "../simulation/port_engine.h"
#include "tacos/algorithm/verify.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/msccl_xml.h"
#include "tacos/topology/switch_routes.h"

namespace tacos {
namespace {

enum class StepType : std::uint8_t {
  kSend,
  kRecv,
  kRecvCopySend,
  kRecvReduceSend,
  kRecvReduceCopy,
  kRecvReduceCopySend,
  kCopy,
  kReduce,
  kNop
};

struct TypeInfo {
  std::string_view name;
  StepType type;
  bool recv, send, reads_src, writes_dst, reduces;
};

constexpr TypeInfo kTypes[] = {
    {"s", StepType::kSend, false, true, true, false, false},
    {"r", StepType::kRecv, true, false, false, true, false},
    {"rcs", StepType::kRecvCopySend, true, true, false, true, false},
    {"rrs", StepType::kRecvReduceSend, true, true, true, false, true},
    {"rrc", StepType::kRecvReduceCopy, true, false, true, true, true},
    {"rrcs", StepType::kRecvReduceCopySend, true, true, true, true, true},
    {"cpy", StepType::kCopy, false, false, true, true, false},
    {"re", StepType::kReduce, false, false, true, true, true},
    {"nop", StepType::kNop, false, false, false, false, false},
};

using Bits = std::vector<std::uint64_t>;

// A slot's content. chunk -1: nothing (never written, or the output before anything arrives).
struct Value {
  int chunk = -1;                   // copies: tacos chunk; reductions: MSCCL chunk
  std::shared_ptr<const Bits> set;  // reductions: contributors
  bool dup = false;                 // reductions: some contribution counted twice
};

struct Step {
  const TypeInfo* info = nullptr;
  int gpu = 0, tb = 0, index = 0;  // tb: global thread block index
  int line = 0;
  MscclSlot src, dst;              // canonical slots of the first chunk
  MscclSlot src_named, dst_named;  // as written
  int cnt = 1;
  int depid = -1, deps = -1;
  bool hasdep = false;
  int wait_step = -1;  // global step whose completion satisfies the dependency
  int send_msg = -1, recv_msg = -1;
  Time done = -1;
};

struct ThreadBlock {
  int gpu = 0, id = 0, send = -1, recv = -1, chan = 0, line = 0;
  int first_step = 0, num_steps = 0;
  int pc = 0;
  bool in_send = false;  // its current step's message waits for the link
};

struct Message {
  int send_step = -1, recv_step = -1;
  int src = 0, dst = 0, chan = 0, cnt = 1;
  std::span<const LinkId> route;  // first hop, then links leaving switches
  bool payload_set = false, arrived = false, reduce = false;
  std::vector<Value> payload;
  Time start = 0, end = 0;
};

// The reader's own event (id: thread block); links and switch ports are the port engine's.
constexpr std::uint32_t kResume = detail::PortEngine::kFirstCallerKind;

std::string slot_name(MscclSlot slot) {
  return std::string(1, slot.buffer) + "[" + std::to_string(slot.offset) + "]";
}

std::string us(Time ps) { return format_micros(ps) + " us"; }

class Reader final : private detail::PortEngine::Client {
 public:
  // `in_place`: execute as an in-place call even when the file allows out-of-place calls.
  Reader(std::string_view text, std::string name, const Topology& topology, LinkModel model,
         std::optional<Bytes> size, bool in_place = false)
      : text_(text),
        name_(std::move(name)),
        topology_(topology),
        model_(model),
        size_(size),
        force_in_place_(in_place) {}

  // The file allows both kinds of call (inplace="1" outofplace="1"); known after run().
  bool both_calls() const { return both_calls_; }

  Algorithm run() {
    parse();
    match_messages();
    resolve_dependencies();
    init_values();
    execute();
    check_finals();
    return build();
  }

 private:
  // ---- errors and attributes --------------------------------------------------------------

  // 1-based line of a byte offset (line starts are indexed once).
  int line_at(std::ptrdiff_t offset) {
    if (line_starts_.empty()) {
      line_starts_.push_back(0);
      for (std::size_t i = 0; i < text_.size(); ++i)
        if (text_[i] == '\n') line_starts_.push_back(i + 1);
    }
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(),
                                     static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, offset)));
    return static_cast<int>(it - line_starts_.begin());
  }
  int line_of(const pugi::xml_node& node) {
    const std::ptrdiff_t offset = node.offset_debug();
    return offset < 0 ? 0 : line_at(offset);
  }
  std::string at(int line) const {
    return line > 0 ? name_ + ":" + std::to_string(line) + ": " : name_ + ": ";
  }
  [[noreturn]] void fail_at(int line, const std::string& what) const {
    throw Error(at(line) + what);
  }
  std::string where(const Step& s) const {
    const ThreadBlock& tb = tbs_[s.tb];
    return "gpu " + std::to_string(s.gpu) + " tb " + std::to_string(tb.id) + " step " +
           std::to_string(s.index) + " (" + std::string(s.info->name) + ")";
  }
  [[noreturn]] void fail_step(const Step& s, const std::string& what) const {
    fail_at(s.line, where(s) + ": " + what);
  }

  static std::string element(const pugi::xml_node& node) {
    return "<" + std::string(node.name()) + ">";
  }
  const char* attr(const pugi::xml_node& node, const char* name, const char* fallback,
                   bool required) {
    const pugi::xml_attribute a = node.attribute(name);
    if (a) return a.value();
    if (fallback) {
      const pugi::xml_attribute b = node.attribute(fallback);
      if (b) return b.value();
    }
    if (required)
      fail_at(line_of(node), element(node) + " lacks the required attribute '" + name + "'");
    return nullptr;
  }
  std::int64_t integer(const pugi::xml_node& node, const char* name, bool required,
                       std::int64_t fallback_value, std::int64_t min, std::int64_t max,
                       const char* fallback = nullptr) {
    const char* text = attr(node, name, fallback, required);
    if (text == nullptr) return fallback_value;
    std::string_view v(text);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
    std::int64_t value = 0;
    bool ok = !v.empty();
    std::size_t i = 0;
    bool negative = false;
    if (ok && (v[0] == '-' || v[0] == '+')) {
      negative = v[0] == '-';
      i = 1;
      ok = v.size() > 1;
    }
    for (; ok && i < v.size(); ++i) {
      if (v[i] < '0' || v[i] > '9' || value > (std::int64_t{1} << 58)) {
        ok = false;
        break;
      }
      value = value * 10 + (v[i] - '0');
    }
    if (negative) value = -value;
    if (!ok || value < min || value > max)
      fail_at(line_of(node), element(node) + " attribute '" + name + "': expected an integer" +
                                 (min > std::numeric_limits<std::int64_t>::min()
                                      ? " in " + std::to_string(min) + ".." + std::to_string(max)
                                      : std::string()) +
                                 ", got '" + text + "'");
    return value;
  }

  // ---- parsing -----------------------------------------------------------------------------

  void parse() {
    const pugi::xml_parse_result result =
        doc_.load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!result)
      fail_at(line_at(result.offset), std::string("invalid XML: ") + result.description());
    const pugi::xml_node algo = doc_.child("algo");
    if (!algo) {
      const pugi::xml_node first = doc_.first_child();
      fail_at(first ? line_of(first) : 0,
              "expected an MSCCL-IR <algo> element at the top level" +
                  (first ? ", got <" + std::string(first.name()) + ">" : std::string()));
    }
    algo_line_ = line_of(algo);
    ngpus_ = static_cast<int>(integer(algo, "ngpus", true, 0, 1, 1 << 20));
    if (ngpus_ != topology_.npus())
      fail_at(algo_line_, "ngpus=\"" + std::to_string(ngpus_) + "\" but the topology has " +
                              std::to_string(topology_.npus()) +
                              " NPUs (MSCCL ranks are the topology's NPUs)");
    const std::string coll = attr(algo, "coll", nullptr, true);
    const auto kind = parse_msccl_collective_name(coll);
    if (!kind)
      fail_at(algo_line_, "unknown coll \"" + coll +
                              "\" (expected allgather, reducescatter, allreduce, alltoall, "
                              "broadcast, reduce, gather or scatter)");
    kind_ = *kind;
    reduction_ = is_reduction(kind_);
    chunks_per_loop_ = static_cast<int>(integer(algo, "nchunksperloop", true, 0, 1, 1 << 24));
    const bool inplace = integer(algo, "inplace", false, 0, 0, 1) == 1;
    const bool outofplace = integer(algo, "outofplace", false, 0, 0, 1) == 1;
    root_ = static_cast<NpuId>(integer(algo, "tacos_root", false, 0, 0, ngpus_ - 1));
    try {
      both_calls_ = inplace && outofplace;
      layout_.emplace(kind_, ngpus_, chunks_per_loop_, root_,
                      force_in_place_ || (inplace && !outofplace));
    } catch (const Error& e) {
      fail_at(algo_line_, e.what());
    }
    if (const char* t = attr(algo, "tacos_size_bytes", nullptr, false); t != nullptr)
      file_size_ = integer(algo, "tacos_size_bytes", true, 0, 1,
                           std::numeric_limits<std::int64_t>::max() / 4);
    if (attr(algo, "tacos_chunk_bytes", nullptr, false) != nullptr)
      file_chunk_bytes_ = integer(algo, "tacos_chunk_bytes", true, 0, 1,
                                  std::numeric_limits<std::int64_t>::max() / 4);
    if (const char* s = attr(algo, "tacos_synthesizer", nullptr, false)) synthesizer_ = s;
    if (const char* s = attr(algo, "tacos_seed", nullptr, false)) {
      try {
        seed_ = std::stoull(s);
      } catch (...) {
        fail_at(algo_line_, "<algo> attribute 'tacos_seed': expected an unsigned integer, got '" +
                                std::string(s) + "'");
      }
    }

    gpu_tbs_.assign(ngpus_, {});
    buffer_counts_.assign(ngpus_, {0, 0, 0});
    std::vector<int> gpu_line(ngpus_, 0);
    for (const pugi::xml_node gpu : algo.children("gpu")) {
      const int line = line_of(gpu);
      const int id = static_cast<int>(integer(gpu, "id", true, 0, 0, ngpus_ - 1));
      if (gpu_line[id] != 0)
        fail_at(line, "<gpu id=\"" + std::to_string(id) + "\"> appears twice (also at line " +
                          std::to_string(gpu_line[id]) + ")");
      gpu_line[id] = line;
      buffer_counts_[id] = {static_cast<int>(integer(gpu, "i_chunks", true, 0, 0, 1 << 24)),
                            static_cast<int>(integer(gpu, "o_chunks", true, 0, 0, 1 << 24)),
                            static_cast<int>(integer(gpu, "s_chunks", true, 0, 0, 1 << 24))};
      std::vector<int>& ids = gpu_tbs_[id];
      for (const pugi::xml_node tbx : gpu.children("tb")) parse_tb(id, tbx, ids);
      // Dense ids from 0.
      std::vector<int> by_id;
      for (int t : ids) {
        const int tid = tbs_[t].id;
        if (tid >= static_cast<int>(by_id.size())) by_id.resize(tid + 1, -1);
        if (by_id[tid] >= 0)
          fail_at(tbs_[t].line, "gpu " + std::to_string(id) + ": threadblock id " +
                                    std::to_string(tid) + " appears twice (also at line " +
                                    std::to_string(tbs_[by_id[tid]].line) + ")");
        by_id[tid] = t;
      }
      for (std::size_t k = 0; k < by_id.size(); ++k)
        if (by_id[k] < 0)
          fail_at(line, "gpu " + std::to_string(id) +
                            ": threadblock ids must be dense from 0, "
                            "but " +
                            std::to_string(k) + " is missing");
      ids = std::move(by_id);
    }
  }

  void parse_tb(int gpu, const pugi::xml_node& tbx, std::vector<int>& ids) {
    ThreadBlock tb;
    tb.gpu = gpu;
    tb.line = line_of(tbx);
    tb.id = static_cast<int>(integer(tbx, "id", true, 0, 0, 1 << 20));
    tb.send = static_cast<int>(integer(tbx, "send", true, 0, -1, ngpus_ - 1));
    tb.recv = static_cast<int>(integer(tbx, "recv", true, 0, -1, ngpus_ - 1));
    tb.chan = static_cast<int>(integer(tbx, "chan", true, 0, 0, 1 << 20));
    if (tb.send == gpu || tb.recv == gpu)
      fail_at(tb.line, "gpu " + std::to_string(gpu) + " tb " + std::to_string(tb.id) +
                           ": send/recv peer " + std::to_string(gpu) + " is the gpu itself");
    tb.first_step = static_cast<int>(steps_.size());
    const int tb_index = static_cast<int>(tbs_.size());
    int index = 0;
    for (const pugi::xml_node sx : tbx.children("step")) {
      Step s;
      s.gpu = gpu;
      s.tb = tb_index;
      s.index = index;
      s.line = line_of(sx);
      const std::string type = attr(sx, "type", nullptr, true);
      for (const TypeInfo& info : kTypes)
        if (info.name == type) s.info = &info;
      if (s.info == nullptr)
        fail_at(s.line, "gpu " + std::to_string(gpu) + " tb " + std::to_string(tb.id) + " step " +
                            std::to_string(index) + ": unknown step type '" + type +
                            "' (expected s, r, rcs, rrs, rrc, rrcs, cpy, re or nop)");
      const TypeInfo& info = *s.info;
      if (info.type != StepType::kNop)
        s.cnt = static_cast<int>(integer(sx, "cnt", false, 1, 1, 1 << 20));
      s.depid = static_cast<int>(integer(sx, "depid", false, -1, -1, 1 << 20));
      s.deps = static_cast<int>(integer(sx, "deps", false, -1, -1, 1 << 20));
      s.hasdep = integer(sx, "hasdep", false, 0, 0, 1) == 1;
      if (reduction_ == false && info.reduces)
        fail_at(s.line, "gpu " + std::to_string(gpu) + " tb " + std::to_string(tb.id) + " step " +
                            std::to_string(index) + ": type '" + type + "' reduces, but " +
                            msccl_collective_name(kind_) + " is not a reduction");
      if ((info.send || info.recv) && info.type != StepType::kNop) {
        if (info.send && tb.send < 0)
          fail_at(s.line, "gpu " + std::to_string(gpu) + " tb " + std::to_string(tb.id) + " step " +
                              std::to_string(index) + ": type '" + type +
                              "' sends, but the threadblock has send=\"-1\"");
        if (info.recv && tb.recv < 0)
          fail_at(s.line, "gpu " + std::to_string(gpu) + " tb " + std::to_string(tb.id) + " step " +
                              std::to_string(index) + ": type '" + type +
                              "' receives, but the threadblock has recv=\"-1\"");
      }
      auto parse_slot = [&](const char* buf, const char* off, const char* what) {
        const char* b = attr(sx, buf, "buf", true);
        const std::string bs(b);
        if (bs != "i" && bs != "o" && bs != "s")
          fail_at(s.line, "<step> attribute '" + std::string(buf) + "': expected i, o or s, got '" +
                              bs + "'");
        MscclSlot named{bs[0], static_cast<int>(integer(sx, off, true, 0, 0, 1 << 24, "off"))};
        const auto& counts = buffer_counts_[gpu];
        const int size = named.buffer == 'i'   ? counts[0]
                         : named.buffer == 'o' ? counts[1]
                                               : counts[2];
        if (named.offset + s.cnt > size)
          fail_at(s.line, "gpu " + std::to_string(gpu) + " tb " + std::to_string(tb.id) + " step " +
                              std::to_string(index) + ": " + what + " " + slot_name(named) +
                              (s.cnt > 1 ? " (cnt " + std::to_string(s.cnt) + ")" : "") +
                              " is past the end of buffer " + std::string(1, named.buffer) + " (" +
                              std::to_string(size) + " chunks)");
        return named;
      };
      if (info.reads_src) {
        s.src_named = parse_slot("srcbuf", "srcoff", "source");
        s.src = layout_->canonical(gpu, s.src_named);
      }
      if (info.writes_dst) {
        s.dst_named = parse_slot("dstbuf", "dstoff", "destination");
        s.dst = layout_->canonical(gpu, s.dst_named);
      }
      steps_.push_back(s);
      ++index;
    }
    tb.num_steps = index;
    tbs_.push_back(tb);
    ids.push_back(tb_index);
  }

  // ---- static structure --------------------------------------------------------------------

  static std::uint64_t pair_key(int a, int b, int chan) {
    return (static_cast<std::uint64_t>(a) << 42) | (static_cast<std::uint64_t>(b) << 21) |
           static_cast<std::uint64_t>(chan);
  }

  void match_messages() {
    // One thread block per (peer, channel, direction).
    std::unordered_map<std::uint64_t, int> sender, receiver;
    for (std::size_t t = 0; t < tbs_.size(); ++t) {
      const ThreadBlock& tb = tbs_[t];
      auto claim = [&](std::unordered_map<std::uint64_t, int>& owners, int peer, const char* dir) {
        auto [it, inserted] =
            owners.try_emplace(pair_key(tb.gpu, peer, tb.chan), static_cast<int>(t));
        if (!inserted)
          fail_at(tb.line, "gpu " + std::to_string(tb.gpu) + " tb " + std::to_string(tb.id) +
                               ": threadblock " + std::to_string(tbs_[it->second].id) +
                               " already " + dir + " gpu " + std::to_string(peer) + " on channel " +
                               std::to_string(tb.chan) +
                               " (one threadblock per peer, channel and direction)");
      };
      if (tb.send >= 0) claim(sender, tb.send, "sends to");
      if (tb.recv >= 0) claim(receiver, tb.recv, "receives from");
    }
    // Pair the k-th send of (u -> v, channel) with the k-th receive.
    for (const ThreadBlock& stb : tbs_) {
      if (stb.send < 0) continue;
      const auto rit = receiver.find(pair_key(stb.send, stb.gpu, stb.chan));
      std::vector<int> sends, recvs;
      for (int i = 0; i < stb.num_steps; ++i)
        if (steps_[stb.first_step + i].info->send) sends.push_back(stb.first_step + i);
      if (rit != receiver.end()) {
        const ThreadBlock& rtb = tbs_[rit->second];
        for (int i = 0; i < rtb.num_steps; ++i)
          if (steps_[rtb.first_step + i].info->recv) recvs.push_back(rtb.first_step + i);
      }
      if (sends.size() > recvs.size()) {
        const Step& s = steps_[sends[recvs.size()]];
        fail_step(s, "sends to gpu " + std::to_string(stb.send) + " on channel " +
                         std::to_string(stb.chan) + ", but gpu " + std::to_string(stb.send) +
                         " receives only " + std::to_string(recvs.size()) +
                         " message(s) from gpu " + std::to_string(stb.gpu) +
                         " there (the message is never received)");
      }
      if (!sends.empty()) {
        // Through switches a message takes the simulator's route, hop by hop.
        const std::span<const LinkId> route = topology_.switch_routes().route(stb.gpu, stb.send);
        if (route.empty())
          fail_step(steps_[sends[0]],
                    "sends to gpu " + std::to_string(stb.send) + ", but the topology has no link " +
                        std::to_string(stb.gpu) + " -> " + std::to_string(stb.send) +
                        " and no path through switches (MSCCL transfers go between neighbors)");
        for (std::size_t m = 0; m < sends.size(); ++m) {
          Step& s = steps_[sends[m]];
          Step& r = steps_[recvs[m]];
          if (s.cnt != r.cnt)
            fail_step(r, "receives " + std::to_string(r.cnt) +
                             " chunk(s), but the matching send (" + where(s) + ", line " +
                             std::to_string(s.line) + ") sends " + std::to_string(s.cnt));
          Message msg;
          msg.send_step = sends[m];
          msg.recv_step = recvs[m];
          msg.src = stb.gpu;
          msg.dst = stb.send;
          msg.chan = stb.chan;
          msg.cnt = s.cnt;
          msg.route = route;
          s.send_msg = static_cast<int>(messages_.size());
          r.recv_msg = static_cast<int>(messages_.size());
          messages_.push_back(std::move(msg));
        }
      }
    }
    // Receives without a send.
    for (const Step& s : steps_)
      if (s.info->recv && s.recv_msg < 0) {
        const ThreadBlock& tb = tbs_[s.tb];
        int sent = 0;
        if (auto it = sender.find(pair_key(tb.recv, tb.gpu, tb.chan)); it != sender.end()) {
          const ThreadBlock& stb = tbs_[it->second];
          for (int i = 0; i < stb.num_steps; ++i) sent += steps_[stb.first_step + i].info->send;
        }
        fail_step(s, "receives from gpu " + std::to_string(tb.recv) + " on channel " +
                         std::to_string(tb.chan) + ", but gpu " + std::to_string(tb.recv) +
                         " sends only " + std::to_string(sent) + " message(s) to gpu " +
                         std::to_string(tb.gpu) +
                         " there: a receive without a matching send (deadlock)");
      }
  }

  void resolve_dependencies() {
    for (Step& s : steps_) {
      if (s.depid < 0) continue;
      const ThreadBlock& tb = tbs_[s.tb];
      const std::vector<int>& ids = gpu_tbs_[s.gpu];
      if (s.depid >= static_cast<int>(ids.size()))
        fail_step(s, "depends on threadblock " + std::to_string(s.depid) + ", which gpu " +
                         std::to_string(s.gpu) + " does not have (it has " +
                         std::to_string(ids.size()) + ")");
      const ThreadBlock& producer = tbs_[ids[s.depid]];
      if (s.deps < 0 || s.deps >= producer.num_steps)
        fail_step(s, "depends on step " + std::to_string(s.deps) + " of threadblock " +
                         std::to_string(s.depid) + ", which has " +
                         std::to_string(producer.num_steps) + " step(s)");
      // The executor signals only after steps with hasdep="1" (nops never signal), and a waiter
      // for step k is released by any signal from a step >= k.
      int signal = -1;
      for (int k = s.deps; k < producer.num_steps && signal < 0; ++k) {
        const Step& p = steps_[producer.first_step + k];
        if (p.hasdep && p.info->type != StepType::kNop) signal = producer.first_step + k;
      }
      if (signal < 0)
        fail_step(s, "depends on step " + std::to_string(s.deps) + " of threadblock " +
                         std::to_string(s.depid) +
                         ", but neither that step nor a later one of "
                         "that threadblock has hasdep=\"1\", so it "
                         "never signals (deadlock)");
      if (ids[s.depid] == s.tb && signal >= tb.first_step + s.index)
        fail_step(s, "depends on step " + std::to_string(signal - tb.first_step) +
                         " of its own threadblock, which comes after it (deadlock)");
      s.wait_step = signal;
    }
  }

  // ---- values ------------------------------------------------------------------------------

  std::vector<Value>& buffer(int gpu, char b) {
    return b == 'i' ? inputs_[gpu] : b == 'o' ? outputs_[gpu] : scratch_[gpu];
  }
  Value& slot(int gpu, MscclSlot s, int k = 0) {
    const MscclSlot named{s.buffer, s.offset + k};
    return buffer(gpu, named.buffer)[named.offset];
  }
  // The canonical slot of the k-th chunk of a step's source or destination.
  MscclSlot canon(int gpu, MscclSlot named, int k) const {
    return layout_->canonical(gpu, {named.buffer, named.offset + k});
  }

  void init_values() {
    words_ = (ngpus_ + 63) / 64;
    {
      Bits bits(words_, 0);
      for (int r = 0; r < ngpus_; ++r) bits[r / 64] |= std::uint64_t{1} << (r % 64);
      full_ = std::make_shared<Bits>(std::move(bits));
    }
    inputs_.assign(ngpus_, {});
    outputs_.assign(ngpus_, {});
    scratch_.assign(ngpus_, {});
    for (int g = 0; g < ngpus_; ++g) {
      const auto& counts = buffer_counts_[g];
      inputs_[g].resize(std::max(counts[0], layout_->input_chunks()));
      outputs_[g].resize(std::max(counts[1], layout_->output_chunks()));
      scratch_[g].resize(counts[2]);
    }
    // Aliasing (in place) may map a named slot elsewhere: make room for every slot a step uses.
    auto room = [&](int gpu, MscclSlot c) {
      std::vector<Value>& b = buffer(gpu, c.buffer);
      if (c.offset >= static_cast<int>(b.size())) b.resize(c.offset + 1);
    };
    for (const Step& s : steps_)
      for (int k : {0, s.cnt - 1}) {
        if (s.info->reads_src) room(s.gpu, canon(s.gpu, s.src_named, k));
        if (s.info->writes_dst) room(s.gpu, canon(s.gpu, s.dst_named, k));
      }
    for (int g = 0; g < ngpus_; ++g)
      for (int k = 0; k < layout_->input_chunks(); ++k) {
        const int chunk = layout_->initial_chunk(g, k);
        if (chunk < 0) continue;
        const MscclSlot c = layout_->canonical(g, {'i', k});
        room(g, c);
        slot(g, c) = initial_value(g, chunk);
      }
    for (int g = 0; g < ngpus_; ++g)
      for (int ch = 0; ch < layout_chunks(); ++ch)
        if (const auto out = layout_->output_slot(g, ch)) room(g, *out);
  }

  // Chunks in the layout's numbering (tacos's, or MSCCL chunks for reductions).
  int layout_chunks() const {
    return kind_ == CollectiveKind::kAllToAll ? ngpus_ * chunks_per_loop_ : chunks_per_loop_;
  }

  Value initial_value(int gpu, int chunk) const {
    Value v;
    v.chunk = chunk;
    if (reduction_) {
      auto bits = std::make_shared<Bits>(words_, 0);
      (*bits)[gpu / 64] |= std::uint64_t{1} << (gpu % 64);
      v.set = std::move(bits);
    }
    return v;
  }

  static bool overlaps(const Bits& a, const Bits& b) {
    for (std::size_t w = 0; w < a.size(); ++w)
      if (a[w] & b[w]) return true;
    return false;
  }

  std::string describe(const Value& v) const {
    if (v.chunk < 0) return "nothing";
    if (!reduction_) return "chunk " + std::to_string(v.chunk);
    return "chunk " + std::to_string(v.chunk) + " with " + describe_set(*v.set, v.dup);
  }
  std::string describe_set(const Bits& bits, bool dup) const {
    std::vector<int> members;
    for (int r = 0; r < ngpus_; ++r)
      if (bits[r / 64] >> (r % 64) & 1) members.push_back(r);
    std::string text;
    if (members.empty()) {
      text = "no contributions";
    } else if (static_cast<int>(members.size()) == ngpus_) {
      text = "every rank's contribution";
    } else {
      text = "the contributions of rank";
      text += members.size() > 1 ? "s " : " ";
      for (std::size_t k = 0; k < members.size() && k < 12; ++k)
        text += (k ? ", " : "") + std::to_string(members[k]);
      if (members.size() > 12) text += ", ... (" + std::to_string(members.size()) + ")";
    }
    if (dup) text += " (some counted twice)";
    return text;
  }

  // a + b for reductions (the caller checks both hold data).
  Value combine(const Step& s, const Value& local, MscclSlot local_slot, const Value& other) const {
    if (local.chunk != other.chunk)
      fail_step(s, "reduces " + describe(other) + " with " + describe(local) + " in " +
                       slot_name(local_slot) + ": partial sums of different chunks");
    Value v;
    v.chunk = local.chunk;
    auto bits = std::make_shared<Bits>(*local.set);
    for (std::size_t w = 0; w < bits->size(); ++w) (*bits)[w] |= (*other.set)[w];
    v.set = std::move(bits);
    v.dup = local.dup || other.dup || overlaps(*local.set, *other.set);
    return v;
  }

  const Value& read(const Step& s, MscclSlot named, int k, Time now) {
    const MscclSlot c = canon(s.gpu, named, k);
    const Value& v = slot(s.gpu, c);
    if (v.chunk < 0)
      fail_step(s, "reads " + slot_name({named.buffer, named.offset + k}) +
                       ", which holds no data at " + us(now) +
                       " (is a dependency on the step that writes it missing?)");
    return v;
  }

  // ---- tacos's model: one value per (NPU, chunk) ---------------------------------------------

  struct Model {
    std::shared_ptr<const Bits> set;  // reductions
    bool dup = false;
    bool present = false;  // copies
  };
  static std::uint64_t key(int gpu, int chunk) {
    return (static_cast<std::uint64_t>(gpu) << 32) | static_cast<std::uint32_t>(chunk);
  }
  Model& model(int gpu, int chunk) {
    auto [it, inserted] = model_state_.try_emplace(key(gpu, chunk));
    if (inserted) {
      const bool source = layout_->input_slot(gpu, chunk).has_value();
      it->second.present = source;
      if (reduction_) {
        auto bits = std::make_shared<Bits>(words_, 0);
        if (source) (*bits)[gpu / 64] |= std::uint64_t{1} << (gpu % 64);
        it->second.set = std::move(bits);
      }
    }
    return it->second;
  }
  static bool same(const Bits& a, const Bits& b) { return a == b; }

  // ---- execution ---------------------------------------------------------------------------

  void push(Time t, std::uint32_t kind, int id) {
    engine_->post(t, kind, static_cast<std::uint32_t>(id));
  }

  void step_done(Step& s, Time now) {
    s.done = now;
    auto it = waiters_.find(static_cast<int>(&s - steps_.data()));
    if (it == waiters_.end()) return;
    for (int tb : it->second) push(now, kResume, tb);
    waiters_.erase(it);
  }

  void enqueue(int msg, Time now) { engine_->send(static_cast<std::uint32_t>(msg), now); }

  void advance(int t, Time now) {
    ThreadBlock& tb = tbs_[t];
    while (tb.pc < tb.num_steps && !tb.in_send) {
      Step& s = steps_[tb.first_step + tb.pc];
      if (s.wait_step >= 0 && steps_[s.wait_step].done < 0) {
        auto& w = waiters_[s.wait_step];
        if (std::find(w.begin(), w.end(), t) == w.end()) w.push_back(t);
        return;
      }
      const TypeInfo& info = *s.info;
      if (info.recv) {
        Message& m = messages_[s.recv_msg];
        if (!m.arrived) return;  // the arrival resumes this thread block
        receive(s, m, now);
        if (!info.send) {
          step_done(s, now);
          ++tb.pc;
          continue;
        }
        Message& out = messages_[s.send_msg];
        out.payload = std::move(forward_);
        out.payload_set = true;
        tb.in_send = true;
        enqueue(s.send_msg, now);
        return;
      }
      if (info.send) {
        tb.in_send = true;
        enqueue(s.send_msg, now);
        return;
      }
      local(s, now);
      step_done(s, now);
      ++tb.pc;
    }
  }

  void local(const Step& s, Time now) {
    if (s.info->type == StepType::kNop) return;
    std::vector<Value> values;
    for (int k = 0; k < s.cnt; ++k) values.push_back(read(s, s.src_named, k, now));
    for (int k = 0; k < s.cnt; ++k) {
      Value& dst = slot(s.gpu, canon(s.gpu, s.dst_named, k));
      if (s.info->type == StepType::kCopy) {
        dst = values[k];
      } else {  // re: dst += src
        if (dst.chunk < 0)
          fail_step(s, "reduces into " + slot_name({s.dst_named.buffer, s.dst_named.offset + k}) +
                           ", which holds no data at " + us(now));
        dst = combine(s, dst, {s.dst_named.buffer, s.dst_named.offset + k}, values[k]);
      }
    }
  }

  // The receive half of a step: stores and computes what rcs/rrs/rrcs send on (forward_).
  void receive(const Step& s, Message& m, Time now) {
    forward_.clear();
    for (int k = 0; k < s.cnt; ++k) {
      Value v = m.payload[k];
      if (s.info->reduces) {
        const Value& mine = read(s, s.src_named, k, now);
        v = combine(s, mine, {s.src_named.buffer, s.src_named.offset + k}, v);
      }
      if (s.info->writes_dst) slot(s.gpu, canon(s.gpu, s.dst_named, k)) = v;
      if (s.info->send) forward_.push_back(std::move(v));
    }
  }

  // The message entered its first link now (the engine times its hops): it reads its source.
  void started(detail::PortEngine& engine, std::uint32_t msg, Time now) override {
    Message& m = messages_[msg];
    Step& s = steps_[m.send_step];
    if (!m.payload_set) {
      m.payload.clear();
      for (int k = 0; k < m.cnt; ++k) m.payload.push_back(read(s, s.src_named, k, now));
      m.payload_set = true;
    }
    // The value must be what tacos's model says the sender holds.
    for (int k = 0; k < m.cnt && reduction_; ++k) {
      const Value& v = m.payload[k];
      Model& held = model(m.src, v.chunk);
      if (!same(*held.set, *v.set))
        fail_step(s, "sends " + describe(v) + " at " + us(now) + ", but in tacos's model (one " +
                         "partial sum per NPU and chunk, as verify replays it) NPU " +
                         std::to_string(m.src) + " then holds " +
                         describe_set(*held.set, held.dup) +
                         ": the schedule keeps several partials of a chunk on one GPU, which a "
                         "tacos Algorithm cannot express");
    }
    m.start = now;
    engine.set_chunk(msg, first_chunk(m));
    // The send step is done; its thread block goes on.
    ThreadBlock& tb = tbs_[s.tb];
    tb.in_send = false;
    step_done(s, now);
    ++tb.pc;
    push(now, kResume, s.tb);
  }

  void event(detail::PortEngine&, std::uint32_t, std::uint32_t tb, Time now) override {
    advance(static_cast<int>(tb), now);
  }

  // The tacos chunk the message's transfer lists first (the simulator's tie-break at switches).
  ChunkId first_chunk(const Message& m) const {
    const int chunk = m.payload.empty() ? 0 : m.payload[0].chunk;
    return reduction_ ? chunk * per_msccl_chunk_ : chunk;
  }

  void arrived(detail::PortEngine&, std::uint32_t msg, Time now) override {
    Message& m = messages_[msg];
    m.arrived = true;
    m.end = now;
    const Step& r = steps_[m.recv_step];
    // Copy or reduce transfer, and tacos's model of the receiver.
    if (!reduction_) {
      m.reduce = false;
      for (const Value& v : m.payload) model(m.dst, v.chunk).present = true;
    } else {
      bool reduce = r.info->reduces;
      if (!reduce) {
        bool overwrite = false, disjoint = true;
        for (int k = 0; k < m.cnt; ++k) {
          const Value& v = m.payload[k];
          const Value& there = slot(m.dst, canon(m.dst, r.dst_named, k));
          overwrite = overwrite || there.chunk == v.chunk;
          disjoint = disjoint && !overlaps(*model(m.dst, v.chunk).set, *v.set);
        }
        reduce = !overwrite && disjoint;
      }
      m.reduce = reduce;
      for (const Value& v : m.payload) {
        Model& held = model(m.dst, v.chunk);
        if (reduce) {
          auto bits = std::make_shared<Bits>(*held.set);
          held.dup = held.dup || v.dup || overlaps(*bits, *v.set);
          for (std::size_t w = 0; w < bits->size(); ++w) (*bits)[w] |= (*v.set)[w];
          held.set = std::move(bits);
        } else {
          held.set = v.set;
          held.dup = v.dup;
        }
      }
    }
    push(now, kResume, r.tb);
  }

  void execute() {
    // Size and chunk numbering.
    const int c = chunks_per_loop_;
    per_msccl_chunk_ = 1;
    int chunks_per_npu = layout_->chunks_per_rank();
    if (kind_ == CollectiveKind::kAllReduce) {
      per_msccl_chunk_ = ngpus_ / std::gcd(ngpus_, c);
      chunks_per_npu = c * per_msccl_chunk_ / ngpus_;
    } else if (kind_ == CollectiveKind::kBroadcast || kind_ == CollectiveKind::kReduce) {
      chunks_per_npu = c;
    }
    Bytes size = 0;
    if (file_size_)
      size = *file_size_;
    else if (size_)
      size = *size_;
    else
      fail_at(algo_line_, "the file carries no sizes (no tacos_size_bytes); give --size");
    try {
      collective_ = Collective::make(kind_, ngpus_, size, chunks_per_npu, {}, root_);
    } catch (const Error& e) {
      fail_at(algo_line_, std::string("no valid collective: ") + e.what());
    }
    chunk_bytes_ = collective_.chunk_bytes();
    if (file_chunk_bytes_ && *file_chunk_bytes_ != chunk_bytes_)
      fail_at(algo_line_, "tacos_chunk_bytes=\"" + std::to_string(*file_chunk_bytes_) +
                              "\" does not match tacos_size_bytes " + std::to_string(size) +
                              " split into " + std::to_string(collective_.num_chunks()) +
                              " chunks (" + std::to_string(chunk_bytes_) + " bytes each)");

    // At one instant: deliveries, messages reaching switches (all queued before a switch link
    // serves one, as the simulator orders them), thread blocks resuming, first hops starting
    // (after every step of the instant, since a start reads the sender's buffer), then switch
    // links serving their queues; in posting order within each.
    detail::PortEngine::Options options;
    options.model = model_;
    options.clock = name_;
    // kArrive, kHop, kLinkFree, kSwitchFree, kServe, kStart, kResume
    options.priority = {0, 1, 3, 4, 4, 3, 2};
    options.start_at_event = true;
    engine_.emplace(topology_, std::move(options), messages_.size(),
                    static_cast<detail::PortEngine::Client&>(*this));
    for (std::size_t i = 0; i < messages_.size(); ++i)
      engine_->set_message(static_cast<std::uint32_t>(i), messages_[i].route,
                           static_cast<Bytes>(messages_[i].cnt) * per_msccl_chunk_ * chunk_bytes_,
                           0);
    for (std::size_t t = 0; t < tbs_.size(); ++t) push(0, kResume, static_cast<int>(t));
    engine_->run();
    // Deadlock: the first thread block that did not finish.
    for (const ThreadBlock& tb : tbs_) {
      if (tb.pc >= tb.num_steps) continue;
      const Step& s = steps_[tb.first_step + tb.pc];
      if (s.wait_step >= 0 && steps_[s.wait_step].done < 0) {
        const Step& p = steps_[s.wait_step];
        fail_step(s, "waits for step " + std::to_string(p.index) + " of threadblock " +
                         std::to_string(tbs_[p.tb].id) +
                         " (depid/deps), which never completes "
                         "(deadlock)");
      }
      if (s.info->recv) {
        const Step& from = steps_[messages_[s.recv_msg].send_step];
        fail_step(s, "waits for its message from gpu " + std::to_string(from.gpu) + " (" +
                         where(from) + ", line " + std::to_string(from.line) +
                         "), which is never sent (deadlock)");
      }
      fail_step(s, "never runs (deadlock)");
    }
  }

  // Every destination's output slot must agree with tacos's model on being complete.
  void check_finals() {
    for (int g = 0; g < ngpus_; ++g)
      for (int ch = 0; ch < layout_chunks(); ++ch) {
        const auto out = layout_->output_slot(g, ch);
        if (!out) continue;
        const Value& v = slot(g, *out);
        Model& held = model(g, ch);
        bool file_done, model_done;
        if (reduction_) {
          file_done = v.chunk == ch && !v.dup && same(*v.set, *full_);
          model_done = !held.dup && same(*held.set, *full_);
        } else {
          file_done = v.chunk == ch;
          model_done = held.present;
        }
        if (file_done == model_done) continue;
        const std::string slot_text = slot_name(*out);
        if (model_done)
          fail_at(gpu_line(g),
                  "gpu " + std::to_string(g) + " ends with " + slot_text + " holding " +
                      describe(v) + ", but the messages it receives complete chunk " +
                      std::to_string(ch) +
                      " there in tacos's model (one value per NPU and chunk): data that arrives "
                      "but does not reach the output cannot be expressed as a tacos Algorithm");
        fail_at(gpu_line(g),
                "gpu " + std::to_string(g) + " ends with " + slot_text + " holding " + describe(v) +
                    ", but in tacos's model (one value per NPU and chunk) it holds " +
                    (reduction_ ? describe_set(*held.set, held.dup) : std::string("nothing")) +
                    ": the schedule cannot be expressed as a tacos Algorithm");
      }
  }

  int gpu_line(int g) const {
    for (const ThreadBlock& tb : tbs_)
      if (tb.gpu == g) return tb.line;
    return algo_line_;
  }

  Algorithm build() {
    Algorithm algorithm(collective_);
    algorithm.synthesizer = synthesizer_;
    algorithm.seed = seed_;
    algorithm.link_model = model_;
    algorithm.reserve(messages_.size());
    std::vector<ChunkId> chunks;
    Time last = 0;
    for (const Message& m : messages_) {
      chunks.clear();
      for (const Value& v : m.payload) {
        if (reduction_)
          for (int q = 0; q < per_msccl_chunk_; ++q)
            chunks.push_back(v.chunk * per_msccl_chunk_ + q);
        else
          chunks.push_back(v.chunk);
      }
      algorithm.add_transfer(m.src, m.dst, m.start, m.end, chunks, m.reduce);
      last = std::max(last, m.end);
    }
    algorithm.sort_by_start();
    algorithm.collective_time = last;
    return algorithm;
  }

  std::string_view text_;
  std::string name_;
  const Topology& topology_;
  LinkModel model_;
  std::optional<Bytes> size_;

  pugi::xml_document doc_;
  std::vector<std::size_t> line_starts_;
  int algo_line_ = 0;
  int ngpus_ = 0;
  CollectiveKind kind_ = CollectiveKind::kAllGather;
  bool reduction_ = false;
  int chunks_per_loop_ = 1;
  NpuId root_ = 0;
  std::optional<MscclLayout> layout_;
  bool force_in_place_ = false;
  bool both_calls_ = false;
  std::optional<Bytes> file_size_, file_chunk_bytes_;
  std::string synthesizer_ = "msccl";
  std::uint64_t seed_ = 0;

  std::vector<std::vector<int>> gpu_tbs_;  // gpu -> thread block id -> index into tbs_
  std::vector<std::array<int, 3>> buffer_counts_;
  std::vector<ThreadBlock> tbs_;
  std::vector<Step> steps_;
  std::vector<Message> messages_;

  int words_ = 1;
  std::shared_ptr<const Bits> full_;
  std::vector<std::vector<Value>> inputs_, outputs_, scratch_;
  std::unordered_map<std::uint64_t, Model> model_state_;
  std::vector<Value> forward_;

  Collective collective_;
  Bytes chunk_bytes_ = 1;
  int per_msccl_chunk_ = 1;

  std::optional<detail::PortEngine> engine_;
  std::unordered_map<int, std::vector<int>> waiters_;
};

}  // namespace

Algorithm algorithm_from_msccl_xml(std::string_view text, const std::string& source_name,
                                   const Topology& topology, LinkModel model,
                                   std::optional<Bytes> size) {
  Reader reader(text, source_name, topology, model, size);
  Algorithm algorithm = reader.run();
  // A file for both kinds of call must also be right when o is i. Checked only when the
  // out-of-place call is right, so that verify reports the file's own first fault.
  if (reader.both_calls() && verify_algorithm(algorithm, topology, model).ok) {
    const std::string call = "as an in-place call (the file says inplace=\"1\"): ";
    try {
      const Algorithm in_place =
          Reader(text, source_name, topology, model, size, /*in_place=*/true).run();
      const VerifyResult verdict = verify_algorithm(in_place, topology, model);
      if (!verdict.ok) throw Error(source_name + ": " + call + verdict.error);
    } catch (const Error& e) {
      const std::string what = e.what();
      if (what.find(call) != std::string::npos) throw;
      throw Error(source_name + ": " + call + what);
    }
  }
  return algorithm;
}

Algorithm read_msccl_xml(const std::string& path, const Topology& topology, LinkModel model,
                         std::optional<Bytes> size) {
  const std::string text = detail::read_file(path);
  return algorithm_from_msccl_xml(text, path, topology, model, size);
}

}  // namespace tacos
