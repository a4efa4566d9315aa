// Algorithm -> Chakra ET (per NPU) and the ASTRA-sim inputs around it (see tacos/io/chakra.h).
//
// How a rank's file is laid out:
//  - message 0: GlobalMetadata, version "1.0.0", attributes describing the collective;
//  - then one Node per event of the rank in time order: a transfer's COMM_RECV_NODE at its
//    recorded end (followed by a COMP_NODE when it is a reduce transfer), its COMM_SEND_NODE at
//    its recorded start; at equal times receives before sends, then by transfer index. Node ids
//    are 0, 1, ... in that order, so dependencies normally name earlier nodes.
//  - comm_tag: the message's position (0, 1, ...) among the messages of its link src -> dst in
//    the synthesized link order (recorded start, then transfer index), the order the simulator's
//    link queues use. Unique per (link, chunk), small, equal on both ends.
//  - data_deps of a send u -> v, per chunk c it carries (the simulator's rules, simulation/
//    simulator.h; deliveries ordered by recorded end, then index):
//      copy collectives: none when u is a source of c, else the receive of the first delivery
//      of c to u;
//      reductions (or any reduce transfer): a copy send after a recorded copy arrival of c at u
//      depends on the first such receive; else every reduce delivery of c to u recorded to end
//      no later than the send's start (their COMP_NODEs); else none when u is a contributor;
//      else the first delivery of any kind (its receive, or its COMP_NODE for a reduce).
//  - ctrl_deps: a send on the previous send of its link, a receive on the previous receive of
//    its link (ChakraOptions::order_in_data_deps moves these into data_deps).
//  - the COMP_NODE of a reduce transfer depends (data) on its receive.
//  - a rank without transfers gets one COMP_NODE "idle" without dependencies.
// Messages are serialized from one reused Node object into a per-rank buffer (varint32 length,
// then the message), so writing is linear in the transfers and does little allocation.
#include <google/protobuf/io/coded_stream.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../algorithm/transfer_check.h"
#include "proto/et_def.pb.h"
#include "tacos/algorithm/verify.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/chakra.h"
#include "tacos/topology/generators.h"
#include "tacos/topology/switch_routes.h"

namespace tacos {
namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

constexpr std::int64_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();

// A number for the network YAML: 12 significant digits (so 25/7*7 prints as 25), always with a
// decimal point.
std::string number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.12g", value);
  std::string text(buffer);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

// ---------------------------------------------------------------------------------------------
// Serialization helpers.

void append_message(std::string& out, const google::protobuf::MessageLite& message) {
  const std::size_t size = message.ByteSizeLong();
  if (size > static_cast<std::size_t>(kMaxInt32))
    throw Error("chakra: a message of " + std::to_string(size) + " bytes is too large");
  const std::size_t old = out.size();
  out.resize(old + 5 + size);
  auto* begin = reinterpret_cast<std::uint8_t*>(out.data() + old);
  std::uint8_t* at = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(
      static_cast<std::uint32_t>(size), begin);
  at = message.SerializeWithCachedSizesToArray(at);
  out.resize(old + static_cast<std::size_t>(at - begin));
}

pb::AttributeProto* attr(pb::Node& node, const char* name) {
  pb::AttributeProto* a = node.add_attr();
  a->set_name(name);
  return a;
}
pb::AttributeProto* attr(pb::GlobalMetadata& meta, const char* name) {
  pb::AttributeProto* a = meta.add_attr();
  a->set_name(name);
  return a;
}

int comm_type_of(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return pb::ALL_REDUCE;
    case CollectiveKind::kReduce:
      return pb::REDUCE;
    case CollectiveKind::kAllGather:
      return pb::ALL_GATHER;
    case CollectiveKind::kGather:
      return pb::GATHER;
    case CollectiveKind::kScatter:
      return pb::SCATTER;
    case CollectiveKind::kBroadcast:
      return pb::BROADCAST;
    case CollectiveKind::kAllToAll:
      return pb::ALL_TO_ALL;
    case CollectiveKind::kReduceScatter:
      return pb::REDUCE_SCATTER;
  }
  return pb::ALL_REDUCE;
}

// The system JSON key that names a custom implementation, or "" when ASTRA-sim has none.
std::string custom_key(CollectiveKind kind) {
  const auto key = astra_implementation_key(kind);
  return key ? *key + "-custom" : std::string();
}

void fill_metadata(pb::GlobalMetadata& meta, const Algorithm& algorithm) {
  const Collective& c = algorithm.collective();
  meta.set_version("1.0.0");
  attr(meta, "producer")->set_string_val("tacos");
  attr(meta, "tacos_version")->set_string_val(TACOS_VERSION);
  attr(meta, "collective")->set_string_val(to_string(c.kind()));
  attr(meta, "size_bytes")->set_int64_val(c.size());
  attr(meta, "chunk_bytes")->set_int64_val(c.chunk_bytes());
  attr(meta, "chunks_per_npu")->set_int64_val(c.chunks_per_npu());
  attr(meta, "num_chunks")->set_int64_val(c.num_chunks());
  attr(meta, "npus")->set_int64_val(c.topology_npus());
  if (c.num_members() != c.topology_npus()) {
    auto* list = attr(meta, "members")->mutable_int64_list();
    for (NpuId m : c.members()) list->add_values(m);
  }
  if (has_root(c.kind())) attr(meta, "root")->set_int64_val(c.root());
  attr(meta, "seed")->set_uint64_val(algorithm.seed);
  attr(meta, "synthesizer")->set_string_val(algorithm.synthesizer);
  attr(meta, "link_model")->set_string_val(to_string(algorithm.link_model));
  attr(meta, "collective_time_ps")->set_int64_val(algorithm.collective_time);
}

// ---------------------------------------------------------------------------------------------
// The per-rank node graphs.

enum class Kind : std::uint8_t { kRecv = 0, kSend = 1 };

struct Event {
  Time time;
  std::uint32_t tx;
  Kind kind;
};

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

struct Delivery {
  DeviceId dst;
  ChunkId chunk;
  Time end;
  std::uint32_t tx;
};

void validate(const Algorithm& algorithm, const Topology& topology) {
  const Collective& c = algorithm.collective();
  if (c.topology_npus() != topology.npus())
    throw Error("chakra: the algorithm's collective is for a topology of " +
                std::to_string(c.topology_npus()) + " NPUs but the topology has " +
                std::to_string(topology.npus()));
  const auto& transfers = algorithm.transfers();
  if (transfers.size() > static_cast<std::size_t>(kMaxInt32))
    throw Error("chakra: too many transfers (" + std::to_string(transfers.size()) + ")");
  const int npus = topology.npus();
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    // Checked before the rest: a Chakra file is per rank, so both ends must be ranks; this
    // names the way out (unwinding) where check_transfer would only say "a switch".
    for (DeviceId d : {t.src, t.dst}) {
      if (d >= npus && d < topology.devices() && topology.is_reducing(d))
        throw Error("chakra: " + describe_transfer(algorithm, i) + ": switch " + std::to_string(d) +
                    " reduces in the network, which Chakra ET cannot express (one graph per NPU "
                    "rank, no switch nodes); write --format json, or synthesize on the fabric "
                    "without :nvls / :sharp");
      if (d < 0 || d >= npus)
        throw Error("chakra: " + describe_transfer(algorithm, i) + ": device " + std::to_string(d) +
                    " is not an NPU; Chakra ranks are NPUs 0.." + std::to_string(npus - 1) +
                    " (synthesize on the topology with switches unwound)");
    }
    if (const detail::TransferCheck check = detail::check_transfer(algorithm, topology, i);
        !check.ok())
      throw Error("chakra: " + check.error);
  }
}

struct RankFiles {
  std::vector<std::string> buffers;  // per rank: the whole .et file
};

// The per-rank node graphs of one algorithm, built in steps: the order of each link's sends
// (tags), the order gates of shared first hops, node ids, the deliveries a send depends on, then
// the nodes rank by rank in event order.
class RankFileBuilder {
 public:
  RankFileBuilder(const Algorithm& algorithm, const Topology& topology,
                  const ChakraOptions& options)
      : algorithm_(algorithm),
        topology_(topology),
        options_(options),
        coll_(algorithm.collective()),
        transfers_(algorithm.transfers()),
        pool_(algorithm.chunk_pool()),
        num_tx_(transfers_.size()),
        npus_(topology.npus()) {}

  RankFiles build() {
    order_links();
    order_uplinks();
    number_nodes();
    index_deliveries();
    // Not size / chunk_bytes, which is smaller where chunks are rounded up.
    total_chunks_ = coll_.chunks_per_buffer();
    if (total_chunks_ > kMaxInt32 || coll_.num_chunks() > kMaxInt32)
      throw Error("chakra: too many chunks for the int32 chunk counts of the format");
    start_files();
    for (const Event& e : events_) {
      data_.clear();
      ctrl_.clear();
      node_.Clear();
      if (e.kind == Kind::kSend)
        write_send(e.tx);
      else
        write_recv(e.tx);
    }
    write_idle_ranks();
    return std::move(files_);
  }

 private:
  // Link order and tags: transfers sorted by (src, dst, start, index).
  void order_links() {
    std::vector<std::uint32_t> by_link(num_tx_);
    for (std::size_t i = 0; i < num_tx_; ++i) by_link[i] = static_cast<std::uint32_t>(i);
    std::sort(by_link.begin(), by_link.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Transfer& x = transfers_[a];
      const Transfer& y = transfers_[b];
      if (x.src != y.src) return x.src < y.src;
      if (x.dst != y.dst) return x.dst < y.dst;
      if (x.start != y.start) return x.start < y.start;
      return a < b;
    });
    tag_.assign(num_tx_, 0);
    prev_on_link_.assign(num_tx_, kNone);
    for (std::size_t k = 1; k < num_tx_; ++k) {
      const std::uint32_t i = by_link[k];
      const std::uint32_t p = by_link[k - 1];
      if (transfers_[p].src == transfers_[i].src && transfers_[p].dst == transfers_[i].dst) {
        tag_[i] = tag_[p] + 1;
        prev_on_link_[i] = p;
      }
    }
  }

  // Order gates (astra link model): sends sharing a first hop (a direct link, or a switch
  // uplink shared by every destination behind it) must enter its FIFO in the synthesized
  // order. ASTRA-sim issues ready sends in no fixed order and counts a send done only when it
  // has arrived, so a dependency on the previous send would hold the link idle for a latency
  // (or, through a switch, for the whole trip). Instead each send with a successor gets a
  // 0 us COMP_NODE with the send's own dependencies: it finishes (1 ns in ASTRA-sim) right
  // after the send was issued, and the successor depends on it.
  void order_uplinks() {
    gates_ = (algorithm_.link_model == LinkModel::kAstra || topology_.switches() > 0) &&
             !options_.order_in_data_deps;
    prev_on_uplink_.assign(num_tx_, kNone);
    has_next_on_uplink_.assign(num_tx_, 0);
    if (!gates_) return;
    const SwitchRoutes& routes = topology_.switch_routes();
    std::vector<LinkId> first_hop(num_tx_, -1);
    for (std::size_t i = 0; i < num_tx_; ++i) {
      const auto route = routes.route(transfers_[i].src, transfers_[i].dst);
      if (!route.empty()) first_hop[i] = route[0];
    }
    std::vector<std::uint32_t> order(num_tx_);
    for (std::size_t i = 0; i < num_tx_; ++i) order[i] = static_cast<std::uint32_t>(i);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      if (first_hop[a] != first_hop[b]) return first_hop[a] < first_hop[b];
      if (transfers_[a].start != transfers_[b].start)
        return transfers_[a].start < transfers_[b].start;
      return a < b;
    });
    for (std::size_t k = 1; k < num_tx_; ++k)
      if (first_hop[order[k]] == first_hop[order[k - 1]] && first_hop[order[k]] >= 0) {
        prev_on_uplink_[order[k]] = order[k - 1];
        has_next_on_uplink_[order[k - 1]] = 1;
      }
  }

  // Node order per rank (events by time, receives first) and node ids.
  void number_nodes() {
    events_.reserve(2 * num_tx_);
    for (std::size_t i = 0; i < num_tx_; ++i) {
      events_.push_back(Event{transfers_[i].end, static_cast<std::uint32_t>(i), Kind::kRecv});
      events_.push_back(Event{transfers_[i].start, static_cast<std::uint32_t>(i), Kind::kSend});
    }
    std::sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
      if (a.time != b.time) return a.time < b.time;
      if (a.kind != b.kind) return a.kind < b.kind;
      return a.tx < b.tx;
    });
    next_id_.assign(npus_, 0);
    send_id_.assign(num_tx_, 0);
    recv_id_.assign(num_tx_, 0);
    comp_id_.assign(num_tx_, 0);
    gate_id_.assign(num_tx_, 0);
    for (const Event& e : events_) {
      const Transfer& t = transfers_[e.tx];
      if (e.kind == Kind::kSend) {
        send_id_[e.tx] = next_id_[t.src]++;
        if (has_next_on_uplink_[e.tx]) gate_id_[e.tx] = next_id_[t.src]++;
      } else {
        recv_id_[e.tx] = next_id_[t.dst]++;
        if (t.reduce) comp_id_[e.tx] = next_id_[t.dst]++;
      }
    }
  }

  // Deliveries of each chunk to each device, by (dst, chunk, recorded end, index).
  void index_deliveries() {
    bool any_reduce = false;
    deliveries_.reserve(pool_.size());
    for (std::size_t i = 0; i < num_tx_; ++i) {
      const Transfer& t = transfers_[i];
      any_reduce = any_reduce || t.reduce;
      for (ChunkId c : algorithm_.chunks(t))
        deliveries_.push_back(Delivery{t.dst, c, t.end, static_cast<std::uint32_t>(i)});
    }
    std::sort(deliveries_.begin(), deliveries_.end(), [](const Delivery& a, const Delivery& b) {
      if (a.dst != b.dst) return a.dst < b.dst;
      if (a.chunk != b.chunk) return a.chunk < b.chunk;
      if (a.end != b.end) return a.end < b.end;
      return a.tx < b.tx;
    });
    reduction_rules_ = any_reduce || is_reduction(coll_.kind());
  }

  using DeliveryIt = std::vector<Delivery>::const_iterator;
  std::pair<DeliveryIt, DeliveryIt> deliveries_of(DeviceId u, ChunkId c) const {
    auto lo = std::lower_bound(deliveries_.begin(), deliveries_.end(), std::pair{u, c},
                               [](const Delivery& d, const std::pair<DeviceId, ChunkId>& k) {
                                 return d.dst != k.first ? d.dst < k.first : d.chunk < k.second;
                               });
    auto hi = lo;
    while (hi != deliveries_.end() && hi->dst == u && hi->chunk == c) ++hi;
    return {lo, hi};
  }
  bool is_source(DeviceId u, ChunkId c) const {
    const auto sources = coll_.sources(c);
    return std::binary_search(sources.begin(), sources.end(), u);
  }
  // The node a delivery makes its chunk present with: the COMP after a reduce, else the receive.
  std::uint64_t made_by(std::uint32_t tx) const {
    return transfers_[tx].reduce ? comp_id_[tx] : recv_id_[tx];
  }

  // Every rank's file starts with the same metadata.
  void start_files() {
    pb::GlobalMetadata meta;
    fill_metadata(meta, algorithm_);
    std::string header;
    append_message(header, meta);
    files_.buffers.assign(npus_, header);
  }

  // data_ += what send `tx` waits for: per chunk, the node that made it present at the sender
  // (none for a chunk the sender starts with).
  void add_send_data_deps(std::uint32_t tx) {
    const Transfer& t = transfers_[tx];
    for (ChunkId c : algorithm_.chunks(t)) {
      const auto [lo, hi] = deliveries_of(t.src, c);
      if (!reduction_rules_) {
        if (is_source(t.src, c)) continue;
        if (lo == hi)
          throw Error("chakra: " + describe_transfer(algorithm_, tx) + " sends chunk " +
                      std::to_string(c) + " from " + describe_device(topology_, t.src) +
                      ", which neither holds it at the start nor receives it");
        data_.push_back(recv_id_[lo->tx]);
        continue;
      }
      if (!t.reduce) {
        auto copy =
            std::find_if(lo, hi, [&](const Delivery& d) { return !transfers_[d.tx].reduce; });
        if (copy != hi && copy->end <= t.start) {
          data_.push_back(recv_id_[copy->tx]);
          continue;
        }
      }
      bool partial = false;
      for (auto d = lo; d != hi && d->end <= t.start; ++d)
        if (transfers_[d->tx].reduce) {
          data_.push_back(comp_id_[d->tx]);
          partial = true;
        }
      if (partial || is_source(t.src, c)) continue;
      if (lo == hi)
        throw Error("chakra: " + describe_transfer(algorithm_, tx) + " sends chunk " +
                    std::to_string(c) + " from " + describe_device(topology_, t.src) +
                    ", which neither holds a part of it at the start nor receives it");
      data_.push_back(made_by(lo->tx));
    }
  }

  void write_send(std::uint32_t tx) {
    const Transfer& t = transfers_[tx];
    add_send_data_deps(tx);
    if (gates_) {
      if (prev_on_uplink_[tx] != kNone) data_.push_back(gate_id_[prev_on_uplink_[tx]]);
    } else if (prev_on_link_[tx] != kNone) {
      (options_.order_in_data_deps ? data_ : ctrl_).push_back(send_id_[prev_on_link_[tx]]);
    }
    node_.set_id(send_id_[tx]);
    node_.set_name(link_name("send", t, tx));
    node_.set_type(pb::COMM_SEND_NODE);
    add_deps();
    comm_attrs(t, tx);
    append_message(files_.buffers[t.src], node_);
    if (!has_next_on_uplink_[tx]) return;
    node_.Clear();
    node_.set_id(gate_id_[tx]);
    node_.set_name(link_name("order", t, tx));
    node_.set_type(pb::COMP_NODE);
    for (std::uint64_t d : data_) node_.add_data_deps(d);
    node_.set_duration_micros(0);
    attr(node_, "is_cpu_op")->set_bool_val(false);
    append_message(files_.buffers[t.src], node_);
  }

  void write_recv(std::uint32_t tx) {
    const Transfer& t = transfers_[tx];
    if (prev_on_link_[tx] != kNone)
      (options_.order_in_data_deps ? data_ : ctrl_).push_back(recv_id_[prev_on_link_[tx]]);
    node_.set_id(recv_id_[tx]);
    node_.set_name(link_name("recv", t, tx));
    node_.set_type(pb::COMM_RECV_NODE);
    add_deps();
    comm_attrs(t, tx);
    append_message(files_.buffers[t.dst], node_);
    if (!t.reduce) return;
    node_.Clear();
    node_.set_id(comp_id_[tx]);
    node_.set_name(link_name("reduce", t, tx));
    node_.set_type(pb::COMP_NODE);
    node_.add_data_deps(recv_id_[tx]);
    node_.set_duration_micros(options_.reduction_micros);
    attr(node_, "is_cpu_op")->set_bool_val(false);
    append_message(files_.buffers[t.dst], node_);
  }

  // A rank without nodes gets one empty COMP_NODE.
  void write_idle_ranks() {
    for (int r = 0; r < npus_; ++r) {
      if (next_id_[r] != 0) continue;
      node_.Clear();
      node_.set_id(0);
      node_.set_name("idle");
      node_.set_type(pb::COMP_NODE);
      attr(node_, "is_cpu_op")->set_bool_val(false);
      append_message(files_.buffers[r], node_);
    }
  }

  void add_deps() {
    std::sort(data_.begin(), data_.end());
    data_.erase(std::unique(data_.begin(), data_.end()), data_.end());
    for (std::uint64_t d : data_) node_.add_data_deps(d);
    for (std::uint64_t d : ctrl_) node_.add_ctrl_deps(d);
  }
  void comm_attrs(const Transfer& t, std::uint32_t tx) {
    attr(node_, "is_cpu_op")->set_bool_val(false);
    attr(node_, "comm_src")->set_int32_val(t.src);
    attr(node_, "comm_dst")->set_int32_val(t.dst);
    attr(node_, "comm_tag")->set_int32_val(tag_[tx]);
    attr(node_, "comm_size")->set_int64_val(algorithm_.transfer_bytes(t));
    attr(node_, "msg_chunk_cnt")->set_int32_val(t.num_chunks);
    attr(node_, "msg_chunk_idx")
        ->set_int32_val(static_cast<std::int32_t>(pool_[t.first_chunk] % total_chunks_));
    attr(node_, "total_chunk_cnt")->set_int32_val(static_cast<std::int32_t>(total_chunks_));
    auto* list = attr(node_, "tacos_chunks")->mutable_int64_list();
    for (ChunkId c : algorithm_.chunks(t)) list->add_values(c);
    attr(node_, "tacos_reduce")->set_bool_val(t.reduce);
  }
  const std::string& link_name(const char* what, const Transfer& t, std::uint32_t tx) {
    name_ = what;
    name_ += ' ';
    name_ += std::to_string(t.src);
    name_ += "->";
    name_ += std::to_string(t.dst);
    name_ += " tag ";
    name_ += std::to_string(tag_[tx]);
    return name_;
  }

  const Algorithm& algorithm_;
  const Topology& topology_;
  const ChakraOptions& options_;
  const Collective& coll_;
  const std::vector<Transfer>& transfers_;
  const std::vector<ChunkId>& pool_;
  const std::size_t num_tx_;
  const int npus_;
  std::int64_t total_chunks_ = 0;

  std::vector<std::int32_t> tag_;            // per transfer: its rank among its link's sends
  std::vector<std::uint32_t> prev_on_link_;  // the send before it on its link, or kNone
  bool gates_ = false;                       // order_uplinks
  std::vector<std::uint32_t> prev_on_uplink_;
  std::vector<char> has_next_on_uplink_;
  std::vector<Event> events_;
  std::vector<std::uint64_t> next_id_;  // per rank: nodes so far
  std::vector<std::uint64_t> send_id_, recv_id_, comp_id_, gate_id_;
  std::vector<Delivery> deliveries_;
  bool reduction_rules_ = false;

  RankFiles files_;
  pb::Node node_;                           // the node being written, reused
  std::vector<std::uint64_t> data_, ctrl_;  // its dependencies
  std::string name_;
};

RankFiles build_rank_files(const Algorithm& algorithm, const Topology& topology,
                           const ChakraOptions& options) {
  return RankFileBuilder(algorithm, topology, options).build();
}

// ---------------------------------------------------------------------------------------------
// ASTRA-sim inputs.

std::string workload_file(const Algorithm& algorithm) {
  const Collective& c = algorithm.collective();
  pb::GlobalMetadata meta;
  meta.set_version("1.0.0");
  attr(meta, "producer")->set_string_val("tacos");
  attr(meta, "collective")->set_string_val(to_string(c.kind()));
  std::string out;
  append_message(out, meta);
  pb::Node node;
  node.set_id(0);
  node.set_name("tacos_" + to_string(c.kind()));
  node.set_type(pb::COMM_COLL_NODE);
  attr(node, "is_cpu_op")->set_bool_val(false);
  attr(node, "comm_type")->set_int64_val(comm_type_of(c.kind()));
  // ASTRA-sim's All-Gather size is the per-NPU input; tacos's --size is the output buffer.
  const Bytes size =
      c.kind() == CollectiveKind::kAllGather ? c.chunk_bytes() * c.chunks_per_npu() : c.size();
  attr(node, "comm_size")->set_int64_val(size);
  append_message(out, node);
  return out;
}

std::string system_json(const Algorithm& algorithm, const std::string& prefix) {
  std::string out = "{\n  \"scheduling-policy\": \"FIFO\",\n  \"preferred-dataset-splits\": 1,\n";
  const std::string key = custom_key(algorithm.collective().kind());
  if (!key.empty()) out += "  \"" + key + "\": [\"../chakra/" + prefix + "\"],\n";
  out += "  \"local-mem-bw\": 50\n}\n";
  return out;
}

std::string readme(const Algorithm& algorithm, const std::string& prefix, bool has_network,
                   int npus) {
  const Collective& c = algorithm.collective();
  const std::string key = custom_key(c.kind());
  std::string out;
  out += "ASTRA-sim inputs written by tacos " TACOS_VERSION ": " + to_string(c.kind()) + " of " +
         format_bytes(c.size()) + " on " + std::to_string(npus) + " NPUs.\n\n";
  out += "  ../chakra/" + prefix + ".RANK.et  the algorithm, one Chakra ET per NPU\n";
  out += key.empty()
             ? "  workload.RANK.et        the algorithm itself, per NPU (see below)\n"
             : "  workload.RANK.et        one COMM_COLL_NODE per NPU (the collective to run)\n";
  out += "  system.json             names the algorithm under " +
         (key.empty() ? std::string("(no key: see below)") : key) + "\n";
  out += "  mem.json                no memory expansion\n";
  if (has_network) out += "  network.yml             the network (analytical backend)\n";
  out += "\nRun from this directory:\n\n";
  out +=
      "  AstraSim_Analytical_Congestion_Aware --workload-configuration=./workload "
      "--system-configuration=system.json --network-configuration=" +
      std::string(has_network ? "network.yml" : "NETWORK.yml") +
      " --remote-memory-configuration=mem.json --logging-folder=log\n\n";
  out +=
      "Each rank prints \"sys[R] finished, T cycles\" (T in ns); a deadlock still exits 0, so "
      "a run is good only when all " +
      std::to_string(npus) + " ranks print it.\n";
  if (algorithm.collective_time > 0)
    out += "tacos's own time for this algorithm: " + format_micros(algorithm.collective_time) +
           " us (link model " + to_string(algorithm.link_model) + ").\n";
  if (algorithm.has_multicast())
    out +=
        "\nMulticast: ASTRA-sim does not model multicast switches. Each copy of a multicast "
        "message is its own send here and crosses the sender's port on its own, so ASTRA-sim "
        "runs the unicast execution of this schedule, slower than tacos's time above "
        "(`tacos synthesize --json` predicts it as astra_sim.expected_time_us).\n";
  if (!has_network)
    out +=
        "\nThe topology is not expressible as an ASTRA-sim network (ring/fc/switch "
        "dimensions), so no network.yml was written: supply your own.\n";
  if (key.empty())
    out += "\nASTRA-sim's workload layer has no " + to_string(c.kind()) +
           " collective (it implements all-reduce, all-gather, reduce-scatter and all-to-all), so "
           "workload.RANK.et here is the algorithm itself (a copy of ../chakra). ASTRA-sim runs "
           "such a workload with one send in flight per rank: expect a longer time than tacos's "
           "wherever a rank sends several messages at once (`tacos synthesize --json` gives it "
           "as astra_sim.expected_time_us).\n";
  if (algorithm.link_model == LinkModel::kAstra)
    out +=
        "\nNotes: ASTRA-sim's feeder follows data_deps and ctrl_deps, issues ready sends in no "
        "fixed order and counts a send done when it has arrived. So that each link (or switch "
        "uplink) takes its messages in the synthesized order without idling, every send with "
        "a successor on its first hop has an 'order' COMP_NODE of 0 us (1 ns in ASTRA-sim) "
        "with the send's own dependencies, and the successor depends on it. ASTRA-sim's links "
        "are timed as --link-model astra: it should print tacos's time above (within 0.1%).\n";
  else
    out +=
        "\nNotes: ASTRA-sim's feeder follows data_deps and ctrl_deps and counts a send done "
        "when it has arrived. Each send depends (ctrl_deps) on the previous send to the same "
        "peer, so on a direct link the next one starts a latency after the last one's bytes, "
        "as --link-model tacos times it. Through a switch ASTRA-sim's ports follow "
        "--link-model astra (free once the bytes are out), so its time differs from tacos's; "
        "'order' COMP_NODEs (0 us, 1 ns in ASTRA-sim) keep each switch uplink's messages in "
        "the synthesized order, and `tacos synthesize --json` predicts the time "
        "(astra_sim.expected_time_us). Synthesize with --link-model astra for a bundle "
        "ASTRA-sim runs exactly.\n";
  if (c.kind() == CollectiveKind::kAllGather)
    out +=
        "For All-Gather the workload's comm_size is the per-NPU input (tacos's --size / "
        "NPUs), as ASTRA-sim counts it.\n";
  if (c.num_members() != c.topology_npus())
    out += "The collective runs among " + std::to_string(c.num_members()) + " of the " +
           std::to_string(npus) +
           " NPUs; every rank still gets the workload node (ranks outside it only relay or "
           "idle).\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
// Files.

void write_binary(const fs::path& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(path.string() + ": cannot open for writing");
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.flush();
  if (!out) throw Error(path.string() + ": write failed");
}

enum class Dim { kRing, kFullyConnected, kSwitch };

}  // namespace

std::optional<std::string> astra_implementation_key(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return to_string(kind) + "-implementation";
    default:
      return std::nullopt;
  }
}

std::optional<std::string> astra_network_yaml(const Topology& topology) {
  const TopologyShape& shape = topology.shape();
  if (!shape.astra_network_text.empty()) return shape.astra_network_text;
  // Generator topologies: ring/fc/switch dimensions, or a torus (rings).
  if (shape.kind != TopologyKind::kDimensions && shape.kind != TopologyKind::kTorus2d &&
      shape.kind != TopologyKind::kTorus3d)
    return std::nullopt;
  std::vector<std::pair<Dim, std::int64_t>> dims;
  for (const ShapeDimension& d : shape.dimensions) {
    if (d.wiring == DimensionWiring::kRing)
      dims.push_back({Dim::kRing, d.size});
    else if (d.wiring == DimensionWiring::kFullyConnected)
      dims.push_back({Dim::kFullyConnected, d.size});
    else if (d.wiring == DimensionWiring::kSwitch)
      // ASTRA-sim has no multicast: a multicast switch is written as its Switch (the ETs send
      // each copy on its own, so the bundle runs the unicast execution of the schedule).
      dims.push_back({Dim::kSwitch, d.size});
    else
      return std::nullopt;
  }
  std::int64_t npus = 1;
  for (const auto& [dim, n] : dims) npus *= n;
  if (npus != topology.npus() || npus < 2) return std::nullopt;

  // Bandwidth and latency per dimension from one representative link, then a check that the
  // generator with those parameters builds exactly this topology.
  LinkParams params;
  params.bandwidth_gbps.clear();
  params.latency_ps.clear();
  std::vector<DeviceId> npu0_switches;
  for (LinkId l : topology.out_links(0))
    if (topology.is_switch(topology.link(l).dst)) npu0_switches.push_back(topology.link(l).dst);
  std::size_t switch_dim = 0;
  std::int64_t stride = 1;
  for (const auto& [dim, n] : dims) {
    double gbps = 1;
    Time latency = 0;
    if (n > 1) {
      if (dim == Dim::kSwitch && topology.switches() > 0) {
        if (switch_dim >= npu0_switches.size()) return std::nullopt;
        const LinkId l = topology.find_link(0, npu0_switches[switch_dim++]);
        gbps = topology.link(l).bandwidth_gbps;
        latency = topology.link(l).latency_ps;
      } else {
        const LinkId l = topology.find_link(0, static_cast<DeviceId>(stride));
        if (l < 0) return std::nullopt;
        gbps = topology.link(l).bandwidth_gbps;
        latency = topology.link(l).latency_ps;
        if (dim == Dim::kSwitch) {  // unwound: B / (P - 1) and 2L
          gbps *= static_cast<double>(n - 1);
          if (latency % 2 != 0) return std::nullopt;
          latency /= 2;
        }
      }
    }
    params.bandwidth_gbps.push_back(gbps);
    params.latency_ps.push_back(latency);
    stride *= n;
  }
  try {
    Topology expected = generate_dimensions(shape.dimensions, params, topology.name());
    if (topology.switches() == 0 && expected.switches() > 0) expected = expected.unwind_switches();
    if (expected.npus() != topology.npus() || expected.switches() != topology.switches() ||
        expected.num_links() != topology.num_links())
      return std::nullopt;
    for (LinkId l = 0; l < topology.num_links(); ++l) {
      const Link& a = expected.link(l);
      const Link& b = topology.link(l);
      if (a.src != b.src || a.dst != b.dst || a.latency_ps != b.latency_ps ||
          std::abs(a.bandwidth_gbps - b.bandwidth_gbps) > 1e-9 * b.bandwidth_gbps)
        return std::nullopt;
    }
  } catch (const Error&) {
    return std::nullopt;
  }

  std::string kinds, counts, bandwidths, latencies;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const auto [dim, n] = dims[d];
    if (n < 2) continue;  // a dimension of one NPU has no links (ASTRA-sim needs npus > 1)
    const char* sep = kinds.empty() ? "" : ", ";
    // A ring of two is one link each way: FullyConnected says exactly that.
    kinds += std::string(sep) + (dim == Dim::kSwitch                     ? "Switch"
                                 : dim == Dim::kFullyConnected || n == 2 ? "FullyConnected"
                                                                         : "Ring");
    counts += sep + std::to_string(n);
    bandwidths += sep + number(params.bandwidth_gbps[d]);
    latencies += sep + number(static_cast<double>(params.latency_ps[d]) / kPicosPerNano);
  }
  return "# ASTRA-sim analytical network for --topology " + topology.name() +
         " (written by tacos)\n"
         "topology: [ " +
         kinds + " ]\nnpus_count: [ " + counts + " ]\nbandwidth: [ " + bandwidths +
         " ]  # GB/s (2^30 B/s)\nlatency: [ " + latencies + " ]  # ns\n";
}

void write_chakra(const Algorithm& algorithm, const Topology& topology, const std::string& out_dir,
                  const ChakraOptions& options) {
  if (options.prefix.empty() || options.prefix.find('/') != std::string::npos ||
      options.prefix == "." || options.prefix == "..")
    throw Error("chakra: the file prefix must be a plain name, got '" + options.prefix + "'");
  if (out_dir.empty()) throw Error("chakra: no output directory given");
  validate(algorithm, topology);
  const RankFiles files = build_rank_files(algorithm, topology, options);
  const std::optional<std::string> network = astra_network_yaml(topology);
  const int npus = topology.npus();

  const fs::path out(out_dir);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec || !fs::is_directory(out))
    throw Error(out_dir + ": cannot create the output directory" +
                (ec ? " (" + ec.message() + ")" : std::string()));
  const fs::path staging = out / (".tacos-chakra-" + std::to_string(::getpid()) + ".tmp");
  fs::remove_all(staging, ec);
  try {
    fs::create_directories(staging / "chakra");
    fs::create_directories(staging / "astra");
    for (int r = 0; r < npus; ++r)
      write_binary(staging / "chakra" / (options.prefix + "." + std::to_string(r) + ".et"),
                   files.buffers[r]);
    // ASTRA-sim's workload layer runs all-reduce, all-gather, reduce-scatter and all-to-all
    // collective nodes only (broadcast "finishes" doing nothing, the others abort); for the
    // other kinds the workload is the algorithm itself, which ASTRA-sim runs rank by rank.
    const bool collective_node = !custom_key(algorithm.collective().kind()).empty();
    const std::string workload = collective_node ? workload_file(algorithm) : std::string();
    for (int r = 0; r < npus; ++r)
      write_binary(staging / "astra" / ("workload." + std::to_string(r) + ".et"),
                   collective_node ? workload : files.buffers[r]);
    write_binary(staging / "astra" / "system.json", system_json(algorithm, options.prefix));
    write_binary(staging / "astra" / "mem.json", "{\"memory-type\": \"NO_MEMORY_EXPANSION\"}\n");
    if (network) write_binary(staging / "astra" / "network.yml", *network);
    write_binary(staging / "astra" / "README",
                 readme(algorithm, options.prefix, network.has_value(), npus));
    for (const char* sub : {"chakra", "astra"}) {
      fs::remove_all(out / sub);
      fs::rename(staging / sub, out / sub);
    }
    fs::remove_all(staging);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(staging, ec);
    throw Error(out_dir + ": cannot write the Chakra files (" + e.code().message() + ": " +
                e.path1().string() + ")");
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
}

}  // namespace tacos
