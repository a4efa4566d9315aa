// Training-step workloads in Chakra ET (see tacos/io/chakra_workload.h): reading the distinct
// collectives, and rewriting the workload so that ASTRA-sim (518bd51) runs tacos's algorithms.
//
// Facts about ASTRA-sim the rewrite relies on (issue 27, checked against its sources under
// astra-sim/system/astraccl and astra-sim/workload):
//  - `per-node-custom-implementation` maps a workload node id to an algorithm ET prefix, one
//    YAML file for all ranks: a node id must mean the same distinct collective on every rank.
//  - It caches one plan per (process group, collective type): each distinct collective gets a
//    group id of its own, even where the members are the same.
#include "tacos/io/chakra_workload.h"

#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "../common/read_file.h"
#include "chakra_messages.h"
#include "proto/et_def.pb.h"
#include "tacos/common/atomic_file.h"
#include "tacos/common/error.h"

namespace tacos {
namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

// Chakra CollectiveCommType values of the four kinds ASTRA-sim's workload layer runs.
constexpr std::int64_t kAllReduceType = 0;
constexpr std::int64_t kAllGatherType = 2;
constexpr std::int64_t kAllToAllType = 6;
constexpr std::int64_t kReduceScatterType = 7;

const char* comm_type_name(std::int64_t type) {
  static const char* const kNames[] = {
      "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
      "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};
  return type >= 0 && type < 10 ? kNames[type] : "unknown";
}

std::int64_t comm_type_of(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return kAllReduceType;
    case CollectiveKind::kAllGather:
      return kAllGatherType;
    case CollectiveKind::kAllToAll:
      return kAllToAllType;
    default:
      return kReduceScatterType;
  }
}

// One rank's file: the metadata and the nodes, kept as messages for the rewrite.
struct RankFile {
  std::string path;
  pb::GlobalMetadata metadata;
  std::vector<pb::Node> nodes;
};

RankFile read_rank_file(const std::string& path) {
  // A message that fails to parse is one line of ours; libprotobuf would log its own first.
  const google::protobuf::LogSilencer quiet;
  const std::string data = detail::read_file(path);
  if (data.empty()) throw Error(path + ": empty file (expected a Chakra ET)");
  RankFile file;
  file.path = path;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(data.data());
  std::size_t pos = 0;
  for (int index = 0; pos < data.size(); ++index) {
    const std::string where = path + ": message " + std::to_string(index);
    const std::uint64_t length = detail::length_prefix(bytes, data.size(), pos, where);
    const int size = static_cast<int>(length);
    const bool ok = index == 0 ? file.metadata.ParseFromArray(bytes + pos, size)
                               : file.nodes.emplace_back().ParseFromArray(bytes + pos, size);
    if (!ok) throw Error(where + ": not a Chakra ET message (truncated or garbage)");
    pos += length;
  }
  return file;
}

const pb::AttributeProto* find_attr(const pb::Node& node, const std::string& name) {
  for (const auto& a : node.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

// An integer attribute of any of the integer types producers use; false when absent or not one.
bool attr_int(const pb::Node& node, const char* name, std::int64_t& out) {
  const pb::AttributeProto* a = find_attr(node, name);
  return a != nullptr && detail::integer_value(*a, out);
}

std::string where(const RankFile& file, const pb::Node& node) {
  return file.path + ": node " + std::to_string(node.id()) + " ('" + node.name() + "')";
}

CollectiveKind kind_of(std::int64_t type, const std::string& place) {
  switch (type) {
    case kAllReduceType:
      return CollectiveKind::kAllReduce;
    case kAllGatherType:
      return CollectiveKind::kAllGather;
    case kAllToAllType:
      return CollectiveKind::kAllToAll;
    case kReduceScatterType:
      return CollectiveKind::kReduceScatter;
    default:
      throw Error(place + ": a " + comm_type_name(type) +
                  " collective: ASTRA-sim's workload layer runs only ALL_REDUCE, ALL_GATHER, "
                  "REDUCE_SCATTER and ALL_TO_ALL nodes");
  }
}

using Groups = std::map<std::string, std::vector<NpuId>>;

Groups read_groups(const std::string& path, int ranks) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open the process-group file");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    throw Error(path + ": not JSON (expected {\"GROUP_ID\": [ranks], ...})");
  }
  if (!json.is_object()) throw Error(path + ": expected an object {\"GROUP_ID\": [ranks], ...}");
  Groups groups;
  for (const auto& [id, list] : json.items()) {
    std::vector<NpuId> members;
    if (list.is_array())
      for (const auto& r : list) {
        if (!r.is_number_integer() || r.get<long long>() < 0 || r.get<long long>() >= ranks)
          throw Error(path + ": group \"" + id + "\": expected ranks 0.." +
                      std::to_string(ranks - 1));
        members.push_back(r.get<NpuId>());
      }
    std::sort(members.begin(), members.end());
    if (members.empty() || std::adjacent_find(members.begin(), members.end()) != members.end())
      throw Error(path + ": group \"" + id + "\": expected a list of distinct ranks");
    groups[id] = std::move(members);
  }
  return groups;
}

std::string rank_file(const std::string& prefix, int rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

int count_ranks(const std::string& prefix) {
  int ranks = 0;
  while (fs::exists(rank_file(prefix, ranks))) ++ranks;
  if (ranks == 0)
    throw Error(rank_file(prefix, 0) + ": no such file (expected --et PREFIX naming " + prefix +
                ".RANK.et files, RANK = 0, 1, ...)");
  return ranks;
}

std::string serialize(const RankFile& file) {
  std::string out;
  auto append = [&out](const google::protobuf::MessageLite& message) {
    const std::size_t size = message.ByteSizeLong();
    std::uint8_t prefix[10];
    const std::uint8_t* end = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(
        static_cast<std::uint32_t>(size), prefix);
    out.append(reinterpret_cast<const char*>(prefix), static_cast<std::size_t>(end - prefix));
    out += message.SerializeAsString();
  };
  append(file.metadata);
  for (const pb::Node& node : file.nodes) append(node);
  return out;
}

void set_string_attr(pb::Node& node, const char* name, const std::string& value) {
  for (auto& a : *node.mutable_attr())
    if (a.name() == name) {
      a.set_string_val(value);
      return;
    }
  pb::AttributeProto* a = node.add_attr();
  a->set_name(name);
  a->set_string_val(value);
}

}  // namespace

Bytes WorkloadCollective::size() const {
  return kind == CollectiveKind::kAllGather ? comm_size * static_cast<Bytes>(members.size())
                                            : comm_size;
}

ChakraWorkload read_chakra_workload(const std::string& prefix, const std::string& groups_file) {
  ChakraWorkload workload;
  workload.prefix = prefix;
  workload.ranks = count_ranks(prefix);
  Groups groups;
  const std::string group_path =
      !groups_file.empty() ? groups_file : (fs::exists(prefix + ".json") ? prefix + ".json" : "");
  if (!group_path.empty()) groups = read_groups(group_path, workload.ranks);

  std::vector<NpuId> everyone(static_cast<std::size_t>(workload.ranks));
  for (int r = 0; r < workload.ranks; ++r) everyone[static_cast<std::size_t>(r)] = r;
  using Key = std::tuple<std::vector<NpuId>, int, Bytes>;
  std::map<Key, int> index;  // the key's position in first-seen order, sorted below
  std::vector<Key> keys;
  std::vector<std::vector<std::pair<std::uint64_t, Key>>> found(
      static_cast<std::size_t>(workload.ranks));
  workload.compute_nodes.assign(static_cast<std::size_t>(workload.ranks), 0);
  for (int r = 0; r < workload.ranks; ++r) {
    const RankFile file = read_rank_file(rank_file(prefix, r));
    for (const pb::Node& node : file.nodes) {
      if (node.type() == pb::COMP_NODE) ++workload.compute_nodes[static_cast<std::size_t>(r)];
      if (node.type() == pb::COMM_SEND_NODE || node.type() == pb::COMM_RECV_NODE)
        throw Error(where(file, node) +
                    ": point-to-point sends and receives are not supported in a workload (only "
                    "collective nodes are given algorithms)");
      if (node.type() != pb::COMM_COLL_NODE) continue;
      std::int64_t type = -1;
      std::int64_t size = 0;
      if (!attr_int(node, "comm_type", type))
        throw Error(where(file, node) + ": attribute 'comm_type': expected an integer");
      const CollectiveKind kind = kind_of(type, where(file, node));
      if (!attr_int(node, "comm_size", size) || size <= 0)
        throw Error(where(file, node) + ": attribute 'comm_size': expected a positive integer");
      std::string group;
      if (const pb::AttributeProto* a = find_attr(node, "pg_name"); a != nullptr)
        group = a->string_val();
      std::vector<NpuId> members = everyone;
      if (!group.empty() && group != "0") {
        const auto it = groups.find(group);
        if (it == groups.end())
          throw Error(where(file, node) + ": pg_name '" + group + "' is not in " +
                      (group_path.empty() ? std::string("any group file (pass --comm-groups FILE)")
                                          : group_path));
        members = it->second;
      }
      if (!std::binary_search(members.begin(), members.end(), r))
        throw Error(where(file, node) + ": rank " + std::to_string(r) +
                    " runs a collective of group '" + group + "' without being a member");
      Key key{members, static_cast<int>(kind), static_cast<Bytes>(size)};
      found[static_cast<std::size_t>(r)].emplace_back(node.id(), key);
      if (index.emplace(key, 0).second) keys.push_back(key);
    }
  }
  std::sort(keys.begin(), keys.end());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    index[keys[i]] = static_cast<int>(i);
    WorkloadCollective c;
    c.members = std::get<0>(keys[i]);
    c.kind = static_cast<CollectiveKind>(std::get<1>(keys[i]));
    c.comm_size = std::get<2>(keys[i]);
    workload.collectives.push_back(std::move(c));
  }
  workload.coll_nodes.resize(static_cast<std::size_t>(workload.ranks));
  for (int r = 0; r < workload.ranks; ++r)
    for (const auto& [id, key] : found[static_cast<std::size_t>(r)]) {
      const int c = index.at(key);
      ++workload.collectives[static_cast<std::size_t>(c)].nodes;
      workload.coll_nodes[static_cast<std::size_t>(r)].push_back({id, c});
    }
  return workload;
}

std::map<std::uint64_t, int> write_bundle_workload(const ChakraWorkload& workload,
                                                   const std::vector<int>& group_ids,
                                                   const std::string& out_prefix) {
  // Slot (collective c, occurrence j on a rank) -> one new id shared by every rank; new ids
  // start above every id any file uses.
  std::vector<RankFile> files;
  std::uint64_t next_id = 0;
  for (int r = 0; r < workload.ranks; ++r) {
    files.push_back(read_rank_file(rank_file(workload.prefix, r)));
    for (const pb::Node& node : files.back().nodes) next_id = std::max(next_id, node.id() + 1);
  }
  std::map<std::pair<int, int>, std::uint64_t> slot_ids;
  std::map<std::uint64_t, int> collective_of;
  for (int r = 0; r < workload.ranks; ++r) {
    RankFile& file = files[static_cast<std::size_t>(r)];
    std::map<std::uint64_t, std::uint64_t> renamed;
    std::map<int, int> occurrence;
    for (const WorkloadCollNode& n : workload.coll_nodes[static_cast<std::size_t>(r)]) {
      const std::pair<int, int> slot{n.collective, occurrence[n.collective]++};
      auto [it, added] = slot_ids.emplace(slot, next_id);
      if (added) {
        collective_of[next_id] = n.collective;
        ++next_id;
      }
      renamed[n.id] = it->second;
    }
    auto rename = [&renamed](google::protobuf::RepeatedField<std::uint64_t>& deps) {
      for (auto& d : deps)
        if (const auto it = renamed.find(d); it != renamed.end()) d = it->second;
    };
    for (pb::Node& node : file.nodes) {
      rename(*node.mutable_data_deps());
      rename(*node.mutable_ctrl_deps());
      if (node.type() != pb::COMM_COLL_NODE) continue;
      const auto it = renamed.find(node.id());
      if (it == renamed.end()) continue;
      node.set_id(it->second);
      set_string_attr(
          node, "pg_name",
          std::to_string(group_ids.at(static_cast<std::size_t>(collective_of.at(it->second)))));
    }
    write_file_atomically(rank_file(out_prefix, r), serialize(file));
  }
  return collective_of;
}

void write_single_collective_workload(int ranks, const WorkloadCollective& collective, int group_id,
                                      std::uint64_t node_id, const std::string& out_prefix) {
  for (int r = 0; r < ranks; ++r) {
    RankFile file;
    file.metadata.set_version("0.0.4");
    pb::Node& node = file.nodes.emplace_back();
    node.set_id(node_id);
    auto add_attr = [&node](const char* name) {
      pb::AttributeProto* a = node.add_attr();
      a->set_name(name);
      return a;
    };
    add_attr("is_cpu_op")->set_bool_val(false);
    if (std::binary_search(collective.members.begin(), collective.members.end(), r)) {
      node.set_name("tacos_" + to_string(collective.kind));
      node.set_type(pb::COMM_COLL_NODE);
      add_attr("comm_type")->set_int64_val(comm_type_of(collective.kind));
      add_attr("comm_size")->set_int64_val(collective.comm_size);
      add_attr("pg_name")->set_string_val(std::to_string(group_id));
    } else {
      // No work: with the roofline on, ASTRA-sim skips a compute node of tensor_size 0 (it
      // throws on one without num_ops).
      node.set_name("idle");
      node.set_type(pb::COMP_NODE);
      add_attr("num_ops")->set_uint64_val(0);
      add_attr("tensor_size")->set_uint64_val(0);
    }
    write_file_atomically(rank_file(out_prefix, r), serialize(file));
  }
}

}  // namespace tacos
