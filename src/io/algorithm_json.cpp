// algorithm.json: tacos's own file for one Algorithm.
//
// One JSON object; the writer emits the keys in this order, integers only (times in
// picoseconds, sizes in bytes), one transfer per line, and a final newline, so equal algorithms
// give byte-identical files that diff well:
//
//   {
//     "format": "tacos-algorithm",        required, exactly this string
//     "version": 1,                       required, exactly 1
//     "collective": "all-gather",         required: all-gather, reduce-scatter, all-reduce,
//                                         broadcast, reduce, gather, scatter, all-to-all
//     "topology_npus": 4,                 required: NPUs of the topology (ids 0..N-1)
//     "npus": [0, 1, 2, 3],               NPUs taking part, ascending (absent: all of them)
//     "root": null,                       root NPU for broadcast, reduce, gather and scatter
//                                         (required there); null (or absent) for the others
//     "size_bytes": 1048576,              required: the collective's buffer per NPU
//     "chunks_per_npu": 1,                required: K
//     "chunk_bytes": 262144,              optional on input; must match the collective
//     "num_chunks": 4,                    optional on input; must match the collective
//     "synthesizer": "tacos",             optional: who made it
//     "seed": 1,                          optional: non-negative integer (64 bits)
//     "link_model": "tacos",              optional: "tacos" or "astra", the model of the times
//     "collective_time_ps": 16148439,     optional: the producer's claim (absent: the last end)
//     "transfers": [                      required: the messages, in the algorithm's order
//       [0, 1, 0, 5382813, [0]],          [src, dst, start_ps, end_ps, [chunk, ...]]
//       [1, 2, 0, 5382813, [1, 2], 1],    an optional 6th element 1 marks a reduce transfer
//                                         (partial sums reduced at dst); 0 means a copy
//       [0, 2, 0, 9000000, [0], 0, 3]     a copy may take a 7th element: its multicast group
//     ]                                   (Transfer::multicast; absent: unicast)
//   }
//
// src and dst are device ids of the topology (NPUs 0..N-1, then switches); chunk ids are
// 0..num_chunks-1 in the order Collective::make defines (all-gather: member-major, K pieces per
// member); a message of n chunks moves n * chunk_bytes bytes; end_ps > start_ps. Unknown
// top-level keys are ignored on input; every malformed known field is a one-line error
// "FILE: field 'transfers[12][2]': expected ..." and bad JSON syntax "FILE:LINE: invalid JSON:
// ...". The reader streams the transfers (SAX), so files with millions of transfers need no JSON
// tree.
#include "tacos/io/algorithm_json.h"

#include <charconv>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <sstream>
#include <vector>

#include "../common/read_file.h"
#include "tacos/collective/collective.h"
#include "tacos/common/atomic_file.h"
#include "tacos/common/error.h"
#include "tacos/common/link_model.h"
#include "tacos/common/time_limit.h"

namespace tacos {
namespace {

using json = nlohmann::json;

void put_int(std::string& out, std::int64_t value) {
  char buffer[24];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  (void)ec;
  out.append(buffer, end);
}

void put_uint(std::string& out, std::uint64_t value) {
  char buffer[24];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  (void)ec;
  out.append(buffer, end);
}

void put_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20) {
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += ch;
    }
  }
  out += '"';
}

// ---------------------------------------------------------------------------------------------
// Reading.

constexpr std::int64_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();

struct RawTransfer {
  Time start = 0, end = 0;
  std::int32_t src = 0, dst = 0;
  std::uint32_t first_chunk = 0, num_chunks = 0;
  bool reduce = false;
  std::int32_t multicast = -1;
};

// What each known top-level scalar must be; "npus" and "transfers" are arrays.
const std::map<std::string, std::string, std::less<>> kScalarFields = {
    {"format", "the string \"tacos-algorithm\""},
    {"version", "the integer 1"},
    {"collective", "a collective name such as \"all-gather\""},
    {"topology_npus", "a positive integer"},
    {"root", "an NPU id (integer) or null"},
    {"size_bytes", "a positive integer"},
    {"chunks_per_npu", "a positive integer"},
    {"chunk_bytes", "a positive integer"},
    {"num_chunks", "a positive integer"},
    {"synthesizer", "a string"},
    {"seed", "a non-negative integer"},
    {"link_model", "\"tacos\" or \"astra\""},
    {"collective_time_ps", "a non-negative integer"},
};
constexpr const char* kTransferShape =
    "[src, dst, start_ps, end_ps, [chunk, ...]] with an optional 6th element 1 (reduce)";
constexpr const char* kElementNames[] = {"src",    "dst",    "start_ps", "end_ps",
                                         "chunks", "reduce", "multicast"};
constexpr const char* kMulticastShape =
    "[src, dst, start_ps, end_ps, [chunk, ...], 0, multicast_group] (a copy in a multicast "
    "group)";

class Reader : public nlohmann::json_sax<json> {
 public:
  Reader(std::string name, std::string_view text) : name_(std::move(name)), text_(text) {}

  std::map<std::string, json, std::less<>> scalars;
  bool has_npus = false;
  std::vector<std::int64_t> npus;
  bool has_transfers = false;
  std::vector<RawTransfer> transfers;
  std::vector<ChunkId> chunk_pool;

  [[noreturn]] void fail(const std::string& field, const std::string& expected) const {
    throw Error(name_ + ": field '" + field + "': " + expected);
  }

  bool null() override { return scalar(json(nullptr), "null"); }
  bool boolean(bool value) override { return scalar(json(value), "a boolean"); }
  bool number_integer(number_integer_t value) override {
    return integer(value, false) || scalar(json(value), std::to_string(value));
  }
  bool number_unsigned(number_unsigned_t value) override {
    const bool fits = value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    return integer(fits ? static_cast<std::int64_t>(value) : 0, !fits) ||
           scalar(json(value), std::to_string(value));
  }
  bool number_float(number_float_t value, const string_t& text) override {
    return scalar(json(value), text);
  }
  bool string(string_t& value) override { return scalar(json(value), "a string"); }
  bool binary(binary_t&) override { return scalar(json(), "binary data"); }

  bool start_object(std::size_t) override {
    switch (mode_) {
      case Mode::kStart:
        mode_ = Mode::kTop;
        return true;
      case Mode::kTop:
        return open_top("an object");
      case Mode::kSkip:
        ++skip_depth_;
        return true;
      default:
        return unexpected("an object");
    }
  }
  bool start_array(std::size_t) override {
    switch (mode_) {
      case Mode::kStart:
        throw Error(name_ + ": expected a JSON object at the top level");
      case Mode::kTop:
        if (key_ == "npus") {
          has_npus = true;
          mode_ = Mode::kNpus;
          return true;
        }
        if (key_ == "transfers") {
          has_transfers = true;
          mode_ = Mode::kTransfers;
          return true;
        }
        return open_top("an array");
      case Mode::kSkip:
        ++skip_depth_;
        return true;
      case Mode::kTransfers:
        mode_ = Mode::kTransfer;
        element_ = 0;
        if (chunk_pool.size() >= static_cast<std::size_t>(kMaxInt32))
          throw Error(name_ + ": too many chunk ids in 'transfers'");
        transfers.push_back(RawTransfer{});
        transfers.back().first_chunk = static_cast<std::uint32_t>(chunk_pool.size());
        return true;
      case Mode::kTransfer:
        if (element_ != 4) return unexpected("an array");
        mode_ = Mode::kChunks;
        return true;
      default:
        return unexpected("an array");
    }
  }
  bool key(string_t& key) override {
    if (mode_ == Mode::kTop) {
      if (!seen_.insert(key).second) fail(key, "appears twice");
      key_ = key;
    }
    return true;
  }
  bool end_object() override {
    if (mode_ == Mode::kSkip) return close_skip();
    mode_ = Mode::kDone;
    return true;
  }
  bool end_array() override {
    switch (mode_) {
      case Mode::kSkip:
        return close_skip();
      case Mode::kNpus:
      case Mode::kTransfers:
        mode_ = Mode::kTop;
        return true;
      case Mode::kChunks:
        if (transfers.back().num_chunks == 0)
          fail(transfer_field(4), "expected at least one chunk");
        mode_ = Mode::kTransfer;
        ++element_;
        return true;
      case Mode::kTransfer:
        if (element_ < 5) fail(transfer_field(), std::string("expected ") + kTransferShape);
        mode_ = Mode::kTransfers;
        return true;
      default:
        return true;
    }
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    const std::size_t upto = std::min(position, text_.size());
    std::size_t line = 1;
    for (std::size_t i = 0; i + 1 < upto; ++i) line += text_[i] == '\n';
    std::string what = ex.what();
    if (const auto bracket = what.find("] "); bracket != std::string::npos)
      what = what.substr(bracket + 2);
    if (const auto column = what.find("column "); column != std::string::npos)
      if (const auto colon = what.find(": ", column); colon != std::string::npos)
        what = what.substr(colon + 2);
    throw Error(name_ + ":" + std::to_string(line) + ": invalid JSON: " + what);
  }

 private:
  enum class Mode { kStart, kTop, kSkip, kNpus, kTransfers, kTransfer, kChunks, kDone };

  std::string transfer_field(int element = -1) const {
    std::string field = "transfers[";
    field += std::to_string(transfers.size() - 1);
    field += ']';
    if (element >= 0) {
      field += '[';
      field += std::to_string(element);
      field += ']';
    }
    return field;
  }

  // A top-level key whose value is an object or array: an error for a known scalar field,
  // skipped for unknown keys.
  bool open_top(const char* what) {
    if (key_ == "npus" || key_ == "transfers") return unexpected(what);
    if (auto it = kScalarFields.find(key_); it != kScalarFields.end())
      fail(key_, "expected " + it->second + ", got " + what);
    mode_ = Mode::kSkip;
    skip_depth_ = 1;
    return true;
  }
  bool close_skip() {
    if (--skip_depth_ == 0) mode_ = Mode::kTop;
    return true;
  }

  // Something other than an integer where the mode allows no such value.
  bool unexpected(const std::string& what) {
    const std::string got = what.empty() ? "" : ", got " + what;
    switch (mode_) {
      case Mode::kStart:
        throw Error(name_ + ": expected a JSON object at the top level");
      case Mode::kTop:
        if (key_ == "npus") fail(key_, "expected an array of NPU ids" + got);
        if (key_ == "transfers") fail(key_, "expected an array of transfers" + got);
        return true;
      case Mode::kNpus:
        fail("npus[" + std::to_string(npus.size()) + "]", "expected an NPU id (integer)" + got);
      case Mode::kTransfers:
        transfers.push_back(RawTransfer{});
        fail(transfer_field(), std::string("expected ") + kTransferShape + got);
      case Mode::kTransfer:
        if (element_ >= 7 || (element_ == 6 && transfers.back().reduce))
          fail(transfer_field(),
               element_ == 6
                   ? std::string("expected ") + kTransferShape + ", got more than 6 elements"
                   : std::string("expected ") + kMulticastShape + ", got more than 7 elements");
        if (element_ == 6)
          fail(transfer_field(6), "expected a multicast group id (non-negative integer)" + got);
        if (element_ == 4) fail(transfer_field(4), "expected the chunk list [chunk, ...]" + got);
        fail(transfer_field(element_),
             std::string(element_ == 5 ? "expected reduce: 1 (reduce) or 0 (copy)"
                                       : std::string("expected ") + kElementNames[element_] +
                                             " (a non-negative integer)") +
                 got);
      case Mode::kChunks:
        fail(transfer_field(4) + "[" + std::to_string(transfers.back().num_chunks) + "]",
             "expected a chunk id (non-negative integer)" + got);
      default:
        return true;
    }
  }

  // An integer value; false when the current mode does not take integers (then scalar()).
  bool integer(std::int64_t value, bool too_large) {
    auto got = [&] {
      return too_large ? std::string("a too large integer") : std::to_string(value);
    };
    switch (mode_) {
      case Mode::kNpus:
        if (too_large || value < 0 || value > kMaxInt32)
          fail("npus[" + std::to_string(npus.size()) + "]", "expected an NPU id, got " + got());
        npus.push_back(value);
        return true;
      case Mode::kTransfer: {
        RawTransfer& t = transfers.back();
        if (element_ >= 7 || element_ == 4 || (element_ == 6 && t.reduce)) return unexpected(got());
        if (element_ == 6) {
          if (too_large || value < 0 || value > kMaxInt32)
            fail(transfer_field(element_),
                 "expected a multicast group id (non-negative integer), got " + got());
          t.multicast = static_cast<std::int32_t>(value);
        } else if (element_ == 5) {
          if (too_large || (value != 0 && value != 1))
            fail(transfer_field(element_), "expected reduce: 1 (reduce) or 0 (copy), got " + got());
          t.reduce = value == 1;
        } else {
          const std::int64_t limit =
              element_ < 2 ? kMaxInt32 : std::numeric_limits<std::int64_t>::max();
          if (too_large || value < 0 || value > limit)
            fail(transfer_field(element_),
                 std::string("expected ") + kElementNames[element_] +
                     (element_ < 2 ? " (a device id)" : " (a non-negative integer)") + ", got " +
                     got());
          // Times stay below 2^60 ps so that replays can add a link's time without overflow.
          if (element_ >= 2 && value > kMaxScheduleTime)
            fail(transfer_field(element_),
                 std::string("expected ") + kElementNames[element_] + " of at most 2^60 ps (" +
                     std::to_string(kMaxScheduleTime) + "), got " + got());
          if (element_ == 0) t.src = static_cast<std::int32_t>(value);
          if (element_ == 1) t.dst = static_cast<std::int32_t>(value);
          if (element_ == 2) t.start = value;
          if (element_ == 3) t.end = value;
        }
        ++element_;
        return true;
      }
      case Mode::kChunks: {
        RawTransfer& t = transfers.back();
        if (too_large || value < 0 || value > kMaxInt32)
          fail(transfer_field(4) + "[" + std::to_string(t.num_chunks) + "]",
               "expected a chunk id, got " + got());
        chunk_pool.push_back(static_cast<ChunkId>(value));
        ++t.num_chunks;
        return true;
      }
      default:
        return false;
    }
  }

  bool scalar(json value, const std::string& what) {
    switch (mode_) {
      case Mode::kTop:
        if (key_ == "npus" || key_ == "transfers") return unexpected(what);
        if (kScalarFields.count(key_)) scalars[key_] = std::move(value);
        return true;
      case Mode::kSkip:
      case Mode::kDone:
        return true;
      default:
        return unexpected(what);
    }
  }

  std::string name_;
  std::string_view text_;
  Mode mode_ = Mode::kStart;
  int skip_depth_ = 0;
  int element_ = 0;
  std::string key_;
  std::set<std::string> seen_;
};

class Fields {
 public:
  Fields(const std::string& name, const std::map<std::string, json, std::less<>>& scalars)
      : name_(name), scalars_(scalars) {}

  [[noreturn]] void fail(const std::string& field, const std::string& expected) const {
    throw Error(name_ + ": field '" + field + "': " + expected);
  }
  const json* find(const std::string& field) const {
    auto it = scalars_.find(field);
    return it == scalars_.end() ? nullptr : &it->second;
  }
  const json& require(const std::string& field) const {
    const json* value = find(field);
    if (value == nullptr) fail(field, "missing (expected " + kScalarFields.at(field) + ")");
    return *value;
  }
  std::int64_t integer(const std::string& field, const json& value, std::int64_t min,
                       std::int64_t max) const {
    const std::string expected = "expected " + kScalarFields.at(field);
    if (!value.is_number_integer()) fail(field, expected + ", got " + value.dump());
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(field, expected + ", got " + value.dump());
    const auto v = value.get<std::int64_t>();
    if (v < min || v > max) fail(field, expected + ", got " + value.dump());
    return v;
  }
  std::int64_t required_integer(const std::string& field, std::int64_t min,
                                std::int64_t max) const {
    return integer(field, require(field), min, max);
  }
  std::string string(const std::string& field, const json& value) const {
    if (!value.is_string())
      fail(field, "expected " + kScalarFields.at(field) + ", got " + value.dump());
    return value.get<std::string>();
  }

 private:
  const std::string& name_;
  const std::map<std::string, json, std::less<>>& scalars_;
};

}  // namespace

std::string algorithm_to_json(const Algorithm& algorithm) {
  const Collective& c = algorithm.collective();
  const auto& transfers = algorithm.transfers();
  std::string out;
  out.reserve(512 + c.members().size() * 8 + transfers.size() * 40 +
              algorithm.chunk_pool().size() * 8);
  out += "{\n  \"format\": \"tacos-algorithm\",\n  \"version\": 1,\n  \"collective\": ";
  put_string(out, to_string(c.kind()));
  out += ",\n  \"topology_npus\": ";
  put_int(out, c.topology_npus());
  out += ",\n  \"npus\": [";
  for (std::size_t i = 0; i < c.members().size(); ++i) {
    if (i) out += ", ";
    put_int(out, c.members()[i]);
  }
  out += "],\n  \"root\": ";
  if (has_root(c.kind()))
    put_int(out, c.root());
  else
    out += "null";
  out += ",\n  \"size_bytes\": ";
  put_int(out, c.size());
  out += ",\n  \"chunks_per_npu\": ";
  put_int(out, c.chunks_per_npu());
  out += ",\n  \"chunk_bytes\": ";
  put_int(out, c.chunk_bytes());
  out += ",\n  \"num_chunks\": ";
  put_int(out, c.num_chunks());
  out += ",\n  \"synthesizer\": ";
  put_string(out, algorithm.synthesizer);
  out += ",\n  \"seed\": ";
  put_uint(out, algorithm.seed);
  out += ",\n  \"link_model\": ";
  put_string(out, to_string(algorithm.link_model));
  out += ",\n  \"collective_time_ps\": ";
  put_int(out, algorithm.collective_time);
  out += ",\n  \"transfers\": [";
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    out += i ? ",\n    [" : "\n    [";
    put_int(out, t.src);
    out += ", ";
    put_int(out, t.dst);
    out += ", ";
    put_int(out, t.start);
    out += ", ";
    put_int(out, t.end);
    out += ", [";
    const auto chunks = algorithm.chunks(t);
    for (std::size_t k = 0; k < chunks.size(); ++k) {
      if (k) out += ", ";
      put_int(out, chunks[k]);
    }
    if (t.multicast >= 0) {
      out += "], ";
      out += t.reduce ? "1, " : "0, ";
      put_int(out, t.multicast);
      out += "]";
    } else {
      out += t.reduce ? "], 1]" : "]]";
    }
  }
  out += transfers.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

void write_algorithm_json(const Algorithm& algorithm, const std::string& path) {
  write_file_atomically(path, algorithm_to_json(algorithm));
}

Algorithm algorithm_from_json(std::string_view text, const std::string& name) {
  Reader reader(name, text);
  json::sax_parse(text, &reader);
  const Fields fields(name, reader.scalars);

  if (const json& format = fields.require("format");
      !format.is_string() || format.get<std::string>() != "tacos-algorithm")
    fields.fail("format", "expected \"tacos-algorithm\", got " + format.dump());
  if (const json& version = fields.require("version");
      !version.is_number_integer() || version.get<std::int64_t>() != 1)
    fields.fail("version", "expected 1 (this tacos reads version 1), got " + version.dump());

  const std::string kind_name = fields.string("collective", fields.require("collective"));
  CollectiveKind kind = CollectiveKind::kAllGather;
  try {
    kind = parse_collective_kind(kind_name);
  } catch (const Error&) {
    fields.fail("collective",
                "expected one of all-gather, reduce-scatter, all-reduce, broadcast, reduce, "
                "gather, scatter, all-to-all, got \"" +
                    kind_name + "\"");
  }
  const auto topology_npus =
      static_cast<int>(fields.required_integer("topology_npus", 1, kMaxInt32));
  const Bytes size = fields.required_integer("size_bytes", 1, std::numeric_limits<Bytes>::max());
  const auto chunks_per_npu =
      static_cast<int>(fields.required_integer("chunks_per_npu", 1, kMaxInt32));
  NpuId root = 0;
  if (has_root(kind)) {
    const json* value = fields.find("root");
    if (value == nullptr || !value->is_number_integer() || value->get<std::int64_t>() < 0 ||
        value->get<std::int64_t>() > kMaxInt32)
      fields.fail("root", "expected the root NPU id (" + kind_name + " has a root), got " +
                              (value ? value->dump() : std::string("nothing")));
    root = static_cast<NpuId>(value->get<std::int64_t>());
  } else if (const json* value = fields.find("root"); value != nullptr && !value->is_null()) {
    fields.fail("root", "expected null (" + kind_name + " has no root), got " + value->dump());
  }
  std::vector<NpuId> members(reader.npus.begin(), reader.npus.end());
  if (reader.has_npus && members.empty()) fields.fail("npus", "expected at least 2 NPU ids");
  if (!reader.has_transfers) fields.fail("transfers", "missing (expected an array of transfers)");

  Collective collective;
  try {
    collective = Collective::make(kind, topology_npus, size, chunks_per_npu, members, root);
  } catch (const Error& e) {
    throw Error(name +
                ": fields 'collective', 'topology_npus', 'npus', 'root', 'size_bytes' "
                "and 'chunks_per_npu' describe no valid collective: " +
                std::string(e.what()));
  }
  if (const json* value = fields.find("chunk_bytes"))
    if (fields.integer("chunk_bytes", *value, 1, std::numeric_limits<Bytes>::max()) !=
        collective.chunk_bytes())
      fields.fail("chunk_bytes", "expected " + std::to_string(collective.chunk_bytes()) +
                                     " (size_bytes and chunks_per_npu give that), got " +
                                     value->dump());
  if (const json* value = fields.find("num_chunks"))
    if (fields.integer("num_chunks", *value, 1, std::numeric_limits<std::int64_t>::max()) !=
        collective.num_chunks())
      fields.fail("num_chunks", "expected " + std::to_string(collective.num_chunks()) +
                                    " (the collective has that many chunks), got " + value->dump());

  Algorithm algorithm(std::move(collective));
  if (const json* value = fields.find("synthesizer"))
    algorithm.synthesizer = fields.string("synthesizer", *value);
  if (const json* value = fields.find("seed")) {
    if (!value->is_number_unsigned() &&
        !(value->is_number_integer() && value->get<std::int64_t>() >= 0))
      fields.fail("seed", "expected a non-negative integer, got " + value->dump());
    algorithm.seed = value->get<std::uint64_t>();
  }
  if (const json* value = fields.find("link_model")) {
    const std::string model = fields.string("link_model", *value);
    if (model != "tacos" && model != "astra")
      fields.fail("link_model", "expected \"tacos\" or \"astra\", got \"" + model + "\"");
    algorithm.link_model = parse_link_model(model);
  }

  const int num_chunks = algorithm.collective().num_chunks();
  algorithm.reserve(reader.transfers.size());
  Time last_end = 0;
  for (std::size_t i = 0; i < reader.transfers.size(); ++i) {
    const RawTransfer& t = reader.transfers[i];
    auto field = [&] { return "transfers[" + std::to_string(i) + "]"; };
    // A message of bytes takes at least 1 ps (units.h); a zero-length transfer would arrive
    // before it starts, which the writers' event orders cannot represent.
    if (t.end <= t.start)
      fields.fail(field() + "[3]", "expected end_ps after start_ps " + std::to_string(t.start) +
                                       " (a message takes at least 1 ps), got " +
                                       std::to_string(t.end));
    const std::span<const ChunkId> chunks(reader.chunk_pool.data() + t.first_chunk, t.num_chunks);
    for (std::size_t k = 0; k < chunks.size(); ++k)
      if (chunks[k] >= num_chunks)
        fields.fail(field() + "[4][" + std::to_string(k) + "]",
                    "expected a chunk id 0.." + std::to_string(num_chunks - 1) + ", got " +
                        std::to_string(chunks[k]));
    if (t.multicast >= 0 && static_cast<std::size_t>(t.multicast) >= reader.transfers.size())
      fields.fail(field() + "[6]", "expected a multicast group id 0.." +
                                       std::to_string(reader.transfers.size() - 1) + ", got " +
                                       std::to_string(t.multicast));
    algorithm.add_transfer(t.src, t.dst, t.start, t.end, chunks, t.reduce, t.multicast);
    last_end = std::max(last_end, t.end);
  }
  algorithm.collective_time = last_end;
  if (const json* value = fields.find("collective_time_ps"))
    algorithm.collective_time = fields.integer("collective_time_ps", *value, 0, kMaxScheduleTime);
  return algorithm;
}

Algorithm read_algorithm_json(const std::string& path) {
  const std::string text = detail::read_file(path);
  return algorithm_from_json(text, path);
}

}  // namespace tacos
