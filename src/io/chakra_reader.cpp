// Chakra ET set -> EtTrace (see tacos/io/chakra.h).
//
// Each file is read whole and walked message by message: a varint32 length (decoded here, so
// a cut-off prefix is reported precisely), then the message parsed with the generated
// ChakraProtoMsg classes. Errors are one line: "FILE: byte OFFSET: message K: what" for the
// encoding, "FILE: node ID ('NAME'): what" for the graph.
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "../common/read_file.h"
#include "chakra_messages.h"
#include "proto/et_def.pb.h"
#include "tacos/common/error.h"
#include "tacos/common/time_limit.h"
#include "tacos/io/chakra.h"

namespace tacos {
namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;
using detail::integer_value;
using detail::length_prefix;

// NAME.RANK.et -> (NAME, RANK); false when the file name is not of that form.
bool split_et_name(const std::string& file, std::string& name, std::int64_t& rank) {
  constexpr std::string_view kExt = ".et";
  if (file.size() <= kExt.size() || file.compare(file.size() - kExt.size(), kExt.size(), kExt))
    return false;
  const std::string stem = file.substr(0, file.size() - kExt.size());
  const std::size_t dot = stem.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == stem.size()) return false;
  const std::string_view digits(stem.data() + dot + 1, stem.size() - dot - 1);
  if (digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  std::from_chars(digits.data(), digits.data() + digits.size(), rank);
  name = stem.substr(0, dot);
  return true;
}

// Every NAME with a NAME.RANK.et file in `dir`, and the ranks of `wanted` (when not empty).
std::map<std::string, std::vector<std::int64_t>> scan(const fs::path& dir) {
  std::map<std::string, std::vector<std::int64_t>> sets;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (!it->is_regular_file(ec2)) continue;
    std::string name;
    std::int64_t rank = 0;
    if (split_et_name(it->path().filename().string(), name, rank)) sets[name].push_back(rank);
  }
  if (ec) throw Error(dir.string() + ": cannot list the directory (" + ec.message() + ")");
  return sets;
}

std::string file_of(const std::string& prefix, std::int64_t rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

// Resolves the argument to (prefix, rank count).
std::pair<std::string, int> resolve(const std::string& arg) {
  std::error_code ec;
  std::string prefix;
  std::string name;
  std::map<std::string, std::vector<std::int64_t>> sets;
  if (fs::is_directory(arg, ec)) {
    fs::path dir(arg);
    sets = scan(dir);
    if (sets.empty() && fs::is_directory(dir / "chakra", ec)) {
      dir /= "chakra";
      sets = scan(dir);
    }
    if (sets.empty()) throw Error(arg + ": no Chakra ET files (NAME.RANK.et) in this directory");
    if (sets.size() > 1) {
      std::string names;
      for (const auto& [n, ranks] : sets) names += (names.empty() ? "" : ", ") + n;
      throw Error(arg + ": holds more than one ET set (" + names + "); name one as DIR/NAME");
    }
    name = sets.begin()->first;
    prefix = (dir / name).string();
  } else {
    const fs::path p(arg);
    const fs::path parent = p.parent_path();
    std::int64_t rank = 0;
    if (!(split_et_name(p.filename().string(), name, rank) && fs::is_regular_file(p, ec)))
      name = p.filename().string();
    if (name.empty()) throw Error(arg + ": expected a prefix such as DIR/NAME or a directory");
    const fs::path dir = parent.empty() ? fs::path(".") : parent;
    if (!fs::is_directory(dir, ec)) throw Error(arg + ": no such directory '" + dir.string() + "'");
    prefix = parent.empty() ? name : (parent / name).string();
    sets = scan(dir);
    if (!sets.count(name))
      throw Error(file_of(prefix, 0) + ": no such file (expected " + prefix +
                  ".RANK.et files, RANK = 0, 1, ...)");
  }
  std::vector<std::int64_t> ranks = sets[name];
  std::sort(ranks.begin(), ranks.end());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0 && ranks[i] == ranks[i - 1])
      throw Error(prefix + ": rank " + std::to_string(ranks[i]) +
                  " has two files (leading zeros?)");
    if (ranks[i] != static_cast<std::int64_t>(i))
      throw Error(file_of(prefix, static_cast<std::int64_t>(i)) + ": missing (found " +
                  std::to_string(ranks.size()) + " files up to rank " +
                  std::to_string(ranks.back()) + "; ranks must be 0.." +
                  std::to_string(ranks.size() - 1) + ")");
  }
  return {prefix, static_cast<int>(ranks.size())};
}

// ---------------------------------------------------------------------------------------------
// Attribute values.

template <typename List>
void append_values(const List& list, std::vector<std::int64_t>& out) {
  for (auto v : list.values()) out.push_back(static_cast<std::int64_t>(v));
}

bool integer_list(const pb::AttributeProto& a, std::vector<std::int64_t>& out) {
  using V = pb::AttributeProto::ValueCase;
  out.clear();
  switch (a.value_case()) {
    case V::kInt32List:
      append_values(a.int32_list(), out);
      return true;
    case V::kInt64List:
      append_values(a.int64_list(), out);
      return true;
    case V::kUint32List:
      append_values(a.uint32_list(), out);
      return true;
    case V::kUint64List:
      append_values(a.uint64_list(), out);
      return true;
    case V::kSint32List:
      append_values(a.sint32_list(), out);
      return true;
    case V::kSint64List:
      append_values(a.sint64_list(), out);
      return true;
    case V::kFixed32List:
      append_values(a.fixed32_list(), out);
      return true;
    case V::kFixed64List:
      append_values(a.fixed64_list(), out);
      return true;
    case V::kSfixed32List:
      append_values(a.sfixed32_list(), out);
      return true;
    case V::kSfixed64List:
      append_values(a.sfixed64_list(), out);
      return true;
    default: {
      std::int64_t single = 0;
      if (!integer_value(a, single)) return false;
      out.push_back(single);
      return true;
    }
  }
}

template <typename List>
std::string join(const List& list) {
  std::string text;
  for (const auto& v : list.values()) {
    if (!text.empty()) text += ',';
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>)
      text += v;
    else
      text += std::to_string(v);
  }
  return text;
}

std::string printable(const pb::AttributeProto& a) {
  using V = pb::AttributeProto::ValueCase;
  std::int64_t i = 0;
  if (integer_value(a, i)) return std::to_string(i);
  switch (a.value_case()) {
    case V::kUint64Val:
      return std::to_string(a.uint64_val());
    case V::kFixed64Val:
      return std::to_string(a.fixed64_val());
    case V::kDoubleVal:
      return std::to_string(a.double_val());
    case V::kFloatVal:
      return std::to_string(a.float_val());
    case V::kBoolVal:
      return a.bool_val() ? "true" : "false";
    case V::kStringVal:
      return a.string_val();
    case V::kBytesVal:
      return a.bytes_val();
    case V::kDoubleList:
      return join(a.double_list());
    case V::kFloatList:
      return join(a.float_list());
    case V::kInt32List:
      return join(a.int32_list());
    case V::kInt64List:
      return join(a.int64_list());
    case V::kUint32List:
      return join(a.uint32_list());
    case V::kUint64List:
      return join(a.uint64_list());
    case V::kSint32List:
      return join(a.sint32_list());
    case V::kSint64List:
      return join(a.sint64_list());
    case V::kFixed32List:
      return join(a.fixed32_list());
    case V::kFixed64List:
      return join(a.fixed64_list());
    case V::kSfixed32List:
      return join(a.sfixed32_list());
    case V::kSfixed64List:
      return join(a.sfixed64_list());
    case V::kBoolList:
      return join(a.bool_list());
    case V::kStringList:
      return join(a.string_list());
    case V::kBytesList:
      return join(a.bytes_list());
    default:
      return "";
  }
}

// ---------------------------------------------------------------------------------------------
// One file.

std::string describe(const std::string& file, const EtNode& node) {
  return file + ": node " + std::to_string(node.id) +
         (node.name.empty() ? std::string() : " ('" + node.name + "')");
}

// A sends' or receives' matching key part that stands for its size.
std::int64_t size_key(const EtNode& n) {
  if (n.comm_size > 0) return n.comm_size;
  return n.msg_chunk_cnt >= 0 ? -2 - static_cast<std::int64_t>(n.msg_chunk_cnt) : -1;
}

std::string size_text(const EtNode& n) {
  if (n.comm_size > 0) return std::to_string(n.comm_size) + " bytes";
  if (n.msg_chunk_cnt >= 0) return std::to_string(n.msg_chunk_cnt) + " chunk(s), no comm_size";
  return "no size";
}

// comm_src and comm_dst as written; the rank checks come after every attribute is read.
struct CommEnds {
  std::int64_t src = -1, dst = -1;
  bool has_src = false, has_dst = false;
};

// The attributes tacos reads into `n`; `list` is scratch.
CommEnds read_attributes(const pb::Node& node, const std::string& file, EtNode& n,
                         std::vector<std::int64_t>& list) {
  CommEnds ends;
  for (const auto& a : node.attr()) {
    const std::string& key = a.name();
    auto need_int = [&](std::int64_t lo, std::int64_t hi) {
      std::int64_t v = 0;
      if (!integer_value(a, v))
        throw Error(describe(file, n) + ": attribute '" + key + "': expected an integer");
      if (v < lo || v > hi)
        throw Error(describe(file, n) + ": attribute '" + key + "': " + std::to_string(v) +
                    " is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
      return v;
    };
    constexpr std::int64_t kI32 = std::numeric_limits<std::int32_t>::max();
    constexpr std::int64_t kI64 = std::numeric_limits<std::int64_t>::max();
    if (key == "comm_src") {
      ends.src = need_int(std::numeric_limits<std::int32_t>::min(), kI32);
      ends.has_src = true;
    } else if (key == "comm_dst") {
      ends.dst = need_int(std::numeric_limits<std::int32_t>::min(), kI32);
      ends.has_dst = true;
    } else if (key == "comm_tag") {
      n.tag = static_cast<std::int32_t>(need_int(std::numeric_limits<std::int32_t>::min(), kI32));
    } else if (key == "comm_size") {
      n.comm_size = need_int(0, kI64);
      if (n.comm_size == 0) n.comm_size = -1;  // 0: left to the simulator, like absent
    } else if (key == "msg_chunk_cnt") {
      n.msg_chunk_cnt = static_cast<std::int32_t>(need_int(-1, kI32));
    } else if (key == "msg_chunk_idx") {
      n.msg_chunk_idx = static_cast<std::int32_t>(need_int(-1, kI32));
    } else if (key == "total_chunk_cnt") {
      n.total_chunk_cnt = static_cast<std::int32_t>(need_int(-1, kI32));
    } else if (key == "comm_type") {
      n.comm_type = need_int(std::numeric_limits<std::int64_t>::min(), kI64);
    } else if (key == "num_ops") {
      n.num_ops = need_int(0, kI64);
    } else if (key == "tensor_size") {
      n.tensor_size = need_int(0, kI64);
    } else if (key == "is_cpu_op") {
      // A bool, or an integer from producers that write one (ASTRA-sim's feeder converts).
      std::int64_t v = 0;
      if (a.value_case() == pb::AttributeProto::kBoolVal)
        n.cpu_op = a.bool_val();
      else if (integer_value(a, v))
        n.cpu_op = v != 0;
      else
        throw Error(describe(file, n) + ": attribute 'is_cpu_op': expected a bool");
    } else if (key == "tacos_chunks") {
      if (!integer_list(a, list))
        throw Error(describe(file, n) +
                    ": attribute 'tacos_chunks': expected a list of "
                    "integers");
      n.has_chunks = true;
      n.chunks.clear();
      for (std::int64_t c : list) {
        if (c < 0 || c > kI32)
          throw Error(describe(file, n) + ": attribute 'tacos_chunks': chunk " + std::to_string(c) +
                      " is out of range");
        n.chunks.push_back(static_cast<ChunkId>(c));
      }
    } else if (key == "tacos_reduce") {
      if (a.value_case() != pb::AttributeProto::kBoolVal)
        throw Error(describe(file, n) + ": attribute 'tacos_reduce': expected a bool");
      n.reduce = a.bool_val();
    }
  }
  return ends;
}

// A send or receive of rank `rank`: its peer (comm_dst of a send, comm_src of a receive) is
// another rank, and its own end, when written, is this rank.
void check_ends(const std::string& file, int rank, int npus, const CommEnds& ends, EtNode& n) {
  const bool send = n.type == EtNodeType::kSend;
  const char* peer_attr = send ? "comm_dst" : "comm_src";
  if (send ? !ends.has_dst : !ends.has_src)
    throw Error(describe(file, n) + ": " + to_string(n.type) + " without '" + peer_attr +
                "' (the peer rank)");
  n.peer = static_cast<std::int32_t>(send ? ends.dst : ends.src);
  if (n.peer < 0 || n.peer >= npus)
    throw Error(describe(file, n) + ": '" + peer_attr + "' is rank " + std::to_string(n.peer) +
                ", outside 0.." + std::to_string(npus - 1));
  if (n.peer == rank)
    throw Error(describe(file, n) + ": '" + peer_attr + "' is this file's own rank " +
                std::to_string(rank));
  const bool has_own = send ? ends.has_src : ends.has_dst;
  const std::int64_t own = send ? ends.src : ends.dst;
  if (has_own && own != rank)
    throw Error(describe(file, n) + ": '" + (send ? "comm_src" : "comm_dst") + "' is " +
                std::to_string(own) + " but this file is rank " + std::to_string(rank));
  if (n.has_chunks && n.chunks.empty())
    throw Error(describe(file, n) + ": attribute 'tacos_chunks' is empty");
}

// One parsed Node as an EtNode, its dependencies still ids (the caller keeps them).
EtNode read_node(const pb::Node& node, const std::string& where, const std::string& file, int rank,
                 int npus, std::vector<std::int64_t>& list) {
  if (node.type() < 0 || node.type() > 7)
    throw Error(where + ": node " + std::to_string(node.id()) + ": unknown node type " +
                std::to_string(node.type()));
  EtNode n;
  n.id = node.id();
  n.name = node.name();
  n.type = static_cast<EtNodeType>(node.type());
  n.duration_micros = node.duration_micros();
  // One node may take at most 2^50 ps, as one message may: the replay adds such durations to
  // 64-bit picosecond clocks (a value near 2^64 used to read as -1 us).
  if (n.duration_micros > static_cast<std::uint64_t>(kMaxStepTime / kPicosPerMicro))
    throw Error(where + ": node " + std::to_string(node.id()) + ": duration_micros " +
                std::to_string(n.duration_micros) + " is more than the " +
                std::to_string(kMaxStepTime / kPicosPerMicro) + " us (2^50 ps) one node may take");
  const CommEnds ends = read_attributes(node, file, n, list);
  if (n.type == EtNodeType::kSend || n.type == EtNodeType::kRecv)
    check_ends(file, rank, npus, ends, n);
  return n;
}

// Dependencies from node ids to indices into out.nodes; then at least one node must be free to
// start.
void resolve_dependencies(const std::string& file,
                          const std::vector<std::vector<std::uint64_t>>& data_ids,
                          const std::vector<std::vector<std::uint64_t>>& ctrl_ids, EtRank& out) {
  std::unordered_map<std::uint64_t, std::uint32_t> index_of;
  index_of.reserve(out.nodes.size());
  for (std::size_t i = 0; i < out.nodes.size(); ++i) {
    const auto [it, inserted] = index_of.emplace(out.nodes[i].id, static_cast<std::uint32_t>(i));
    if (!inserted)
      throw Error(describe(file, out.nodes[i]) + ": the id is used twice (also by node '" +
                  out.nodes[it->second].name + "')");
  }
  bool root = false;
  for (std::size_t i = 0; i < out.nodes.size(); ++i) {
    EtNode& n = out.nodes[i];
    for (int kind = 0; kind < 2; ++kind) {
      const auto& ids = kind == 0 ? data_ids[i] : ctrl_ids[i];
      auto& deps = kind == 0 ? n.data_deps : n.ctrl_deps;
      deps.reserve(ids.size());
      for (std::uint64_t id : ids) {
        const auto it = index_of.find(id);
        if (it == index_of.end())
          throw Error(describe(file, n) + ": " + (kind == 0 ? "data" : "control") +
                      " dependency on node " + std::to_string(id) + ", which is not in the file");
        if (it->second == i) throw Error(describe(file, n) + ": depends on itself");
        deps.push_back(it->second);
      }
    }
    root = root || (n.data_deps.empty() && n.ctrl_deps.empty());
  }
  if (out.nodes.empty())
    throw Error(file +
                ": no nodes after the GlobalMetadata (an idle rank needs one node, e.g. a "
                "COMP_NODE)");
  if (!root) throw Error(file + ": every node has a dependency, so none can start");
}

void read_rank(const std::string& file, int rank, int npus, EtRank& out) {
  // A message that fails to parse is reported below as one line of ours; libprotobuf would log
  // its own line first (e.g. invalid UTF-8 in a string field).
  const google::protobuf::LogSilencer quiet;
  out.file = file;
  const std::string data = detail::read_file(file);
  if (data.empty()) throw Error(file + ": empty file (expected a GlobalMetadata message first)");

  const auto* bytes = reinterpret_cast<const std::uint8_t*>(data.data());
  const std::size_t size = data.size();
  std::size_t pos = 0;
  std::int64_t index = 0;
  pb::Node node;
  std::vector<std::vector<std::uint64_t>> data_ids, ctrl_ids;
  std::vector<std::int64_t> list;
  while (pos < size) {
    const std::size_t at = pos;
    const std::string where =
        file + ": byte " + std::to_string(at) + ": message " + std::to_string(index);
    const std::uint64_t length = length_prefix(bytes, size, pos, where);
    const void* body = bytes + pos;
    const int body_size = static_cast<int>(length);
    pos += length;
    if (index++ == 0) {
      pb::GlobalMetadata meta;
      if (!meta.ParseFromArray(body, body_size))
        throw Error(where + ": not a valid GlobalMetadata (garbage, or not a Chakra ET file)");
      out.version = meta.version();
      for (const auto& a : meta.attr()) out.metadata.push_back(EtAttribute{a.name(), printable(a)});
      continue;
    }
    if (length == 0)
      throw Error(where + ": empty message (Chakra's Python reader stops at an empty message)");
    node.Clear();
    if (!node.ParseFromArray(body, body_size))
      throw Error(where + ": not a valid Chakra Node (garbage, or a truncated message)");
    out.nodes.push_back(read_node(node, where, file, rank, npus, list));
    data_ids.emplace_back(node.data_deps().begin(), node.data_deps().end());
    ctrl_ids.emplace_back(node.ctrl_deps().begin(), node.ctrl_deps().end());
    if (out.nodes.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
      throw Error(file + ": too many nodes");
  }
  resolve_dependencies(file, data_ids, ctrl_ids, out);
}

// Sends and receives matched by (src, dst, tag, size) in file order.
void match(EtTrace& trace) {
  struct Key {
    std::int32_t src, dst, tag;
    std::int64_t size;
    std::int32_t rank;  // the file it is in
    std::uint32_t index;
    bool operator<(const Key& o) const {
      if (src != o.src) return src < o.src;
      if (dst != o.dst) return dst < o.dst;
      if (tag != o.tag) return tag < o.tag;
      if (size != o.size) return size < o.size;
      return index < o.index;
    }
    bool same(const Key& o) const {
      return src == o.src && dst == o.dst && tag == o.tag && size == o.size;
    }
  };
  std::vector<Key> sends, recvs;
  for (int r = 0; r < trace.npus(); ++r) {
    const auto& nodes = trace.ranks[r].nodes;
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
      const EtNode& n = nodes[i];
      if (n.type == EtNodeType::kSend)
        sends.push_back(Key{r, n.peer, n.tag, size_key(n), r, i});
      else if (n.type == EtNodeType::kRecv)
        recvs.push_back(Key{n.peer, r, n.tag, size_key(n), r, i});
    }
  }
  std::sort(sends.begin(), sends.end());
  std::sort(recvs.begin(), recvs.end());
  auto unmatched_send = [&](const Key& k) {
    const EtNode& n = trace.ranks[k.rank].nodes[k.index];
    return Error(describe(trace.ranks[k.rank].file, n) + ": send to rank " + std::to_string(k.dst) +
                 " (tag " + std::to_string(k.tag) + ", " + size_text(n) +
                 ") has no matching receive in " + trace.ranks[k.dst].file);
  };
  auto unmatched_recv = [&](const Key& k) {
    const EtNode& n = trace.ranks[k.rank].nodes[k.index];
    return Error(describe(trace.ranks[k.rank].file, n) + ": receive from rank " +
                 std::to_string(k.src) + " (tag " + std::to_string(k.tag) + ", " + size_text(n) +
                 ") has no matching send in " + trace.ranks[k.src].file);
  };
  // Walk both sorted lists; report the unmatched node that comes first in the key order.
  std::size_t s = 0, r = 0;
  auto less_key = [](const Key& a, const Key& b) {
    if (a.src != b.src) return a.src < b.src;
    if (a.dst != b.dst) return a.dst < b.dst;
    if (a.tag != b.tag) return a.tag < b.tag;
    return a.size < b.size;
  };
  while (s < sends.size() || r < recvs.size()) {
    if (r == recvs.size()) throw unmatched_send(sends[s]);
    if (s == sends.size()) throw unmatched_recv(recvs[r]);
    const Key& a = sends[s];
    const Key& b = recvs[r];
    if (a.same(b)) {
      trace.ranks[a.rank].nodes[a.index].match = static_cast<std::int32_t>(b.index);
      trace.ranks[b.rank].nodes[b.index].match = static_cast<std::int32_t>(a.index);
      ++s;
      ++r;
      continue;
    }
    // The smaller key has no partner left on the other side.
    if (less_key(a, b)) throw unmatched_send(a);
    throw unmatched_recv(b);
  }
  trace.messages = static_cast<std::int64_t>(sends.size());
}

const EtAttribute* find_attr(const EtRank& rank, std::string_view name) {
  for (const EtAttribute& a : rank.metadata)
    if (a.name == name) return &a;
  return nullptr;
}

std::int64_t metadata_int(const EtRank& rank, const char* name, std::int64_t lo, std::int64_t hi) {
  const EtAttribute* a = find_attr(rank, name);
  if (a == nullptr)
    throw Error(rank.file + ": GlobalMetadata: tacos attribute '" + std::string(name) +
                "' is missing");
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(a->value.data(), a->value.data() + a->value.size(), v);
  if (a->value.empty() || ec != std::errc() || ptr != a->value.data() + a->value.size() || v < lo ||
      v > hi)
    throw Error(rank.file + ": GlobalMetadata: attribute '" + std::string(name) +
                "': expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
                ", got '" + a->value + "'");
  return v;
}

// tacos's own GlobalMetadata (producer "tacos"), else nullopt.
std::optional<EtTacosInfo> tacos_info(const EtRank& rank) {
  const EtAttribute* producer = find_attr(rank, "producer");
  if (producer == nullptr || producer->value != "tacos") return std::nullopt;
  constexpr std::int64_t kI32 = std::numeric_limits<std::int32_t>::max();
  constexpr std::int64_t kI64 = std::numeric_limits<std::int64_t>::max();
  EtTacosInfo info;
  const EtAttribute* coll = find_attr(rank, "collective");
  if (coll == nullptr)
    throw Error(rank.file + ": GlobalMetadata: tacos attribute 'collective' is missing");
  try {
    info.kind = parse_collective_kind(coll->value);
  } catch (const Error&) {
    throw Error(rank.file + ": GlobalMetadata: attribute 'collective': unknown collective '" +
                coll->value + "'");
  }
  info.topology_npus = static_cast<int>(metadata_int(rank, "npus", 1, kI32));
  info.size = metadata_int(rank, "size_bytes", 1, kI64);
  info.chunk_bytes = metadata_int(rank, "chunk_bytes", 1, kI64);
  info.chunks_per_npu = static_cast<int>(metadata_int(rank, "chunks_per_npu", 1, kI32));
  if (const EtAttribute* members = find_attr(rank, "members")) {
    std::string_view text = members->value;
    while (!text.empty()) {
      const std::size_t comma = text.find(',');
      const std::string_view item = text.substr(0, comma);
      std::int64_t v = 0;
      const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || v < 0 ||
          v >= info.topology_npus)
        throw Error(rank.file + ": GlobalMetadata: attribute 'members': bad NPU '" +
                    std::string(item) + "'");
      info.members.push_back(static_cast<NpuId>(v));
      if (comma == std::string_view::npos) break;
      text.remove_prefix(comma + 1);
    }
  }
  if (has_root(info.kind))
    info.root = static_cast<NpuId>(metadata_int(rank, "root", 0, info.topology_npus - 1));
  if (const EtAttribute* seed = find_attr(rank, "seed")) {
    const auto [ptr, ec] =
        std::from_chars(seed->value.data(), seed->value.data() + seed->value.size(), info.seed);
    (void)ptr;
    (void)ec;
  }
  if (const EtAttribute* a = find_attr(rank, "synthesizer")) info.synthesizer = a->value;
  if (const EtAttribute* a = find_attr(rank, "link_model")) info.link_model = a->value;
  if (find_attr(rank, "collective_time_ps"))
    info.collective_time = metadata_int(rank, "collective_time_ps", 0, kI64);
  return info;
}

}  // namespace

EtTrace read_chakra(const std::string& prefix_or_dir) {
  const auto [prefix, npus] = resolve(prefix_or_dir);
  EtTrace trace;
  trace.prefix = prefix;
  trace.ranks.resize(npus);
  for (int r = 0; r < npus; ++r) read_rank(file_of(prefix, r), r, npus, trace.ranks[r]);
  match(trace);
  trace.tacos = tacos_info(trace.ranks[0]);
  return trace;
}

std::string to_string(EtNodeType type) {
  // Chakra's NodeType names, indexed by their values.
  static constexpr const char* kNames[] = {"INVALID_NODE",   "METADATA_NODE", "MEM_LOAD_NODE",
                                           "MEM_STORE_NODE", "COMP_NODE",     "COMM_SEND_NODE",
                                           "COMM_RECV_NODE", "COMM_COLL_NODE"};
  const auto index = static_cast<std::size_t>(type);
  return index < std::size(kNames) ? kNames[index] : "UNKNOWN_NODE";
}

}  // namespace tacos
