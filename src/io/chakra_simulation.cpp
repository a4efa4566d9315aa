// Running an EtTrace ASTRA-sim style, and tacos's own ET files back to an Algorithm (see
// tacos/io/chakra.h for the rules).
//
// Flat state: nodes of all ranks numbered globally (rank offset + index); dependency edges in
// CSR (parent -> children) with a pending count per node; one message per send with its route
// (a run of link ids), timed by the port engine (simulation/port_engine.h). Events run in time
// order and, at one time, in the order they were posted, so every run is deterministic.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <queue>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "../common/group_by.h"
#include "../simulation/port_engine.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/io/chakra.h"
#include "tacos/topology/switch_routes.h"

namespace tacos {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

std::string describe(const EtTrace& trace, int rank, std::uint32_t index) {
  const EtNode& n = trace.ranks[rank].nodes[index];
  return trace.ranks[rank].file + ": node " + std::to_string(n.id) +
         (n.name.empty() ? std::string() : " ('" + n.name + "')");
}

// The one event of the caller's own: a node finished (id: global node).
constexpr std::uint32_t kNodeDone = detail::PortEngine::kFirstCallerKind;

struct Message {
  std::uint32_t send = 0;  // global node ids
  std::uint32_t recv = 0;
  Bytes bytes = 0;
  std::uint32_t route_begin = 0;
  std::uint32_t route_len = 0;
  bool recv_posted = false;
};

struct Run {
  EtRunResult result;
  std::vector<std::vector<std::uint32_t>> message_of;  // per rank, per node: message or kNone
};

// One piece (about 270 lines) because its phases (numbering, dependencies, messages and routes,
// the run, the deadlock report) share the flat per-node arrays; the timing of messages is the
// port engine's.
Run run_trace(const EtTrace& trace, const Topology& topology, LinkModel model,
              std::optional<Bytes> size, bool one_send_in_flight = false, bool congestion = true,
              bool whole_ns = false) {
  const int npus = trace.npus();
  if (topology.npus() != npus)
    throw Error(trace.prefix + ": " + std::to_string(npus) + " rank files (" + trace.prefix +
                ".0.et .. " + trace.prefix + "." + std::to_string(npus - 1) +
                ".et) but the topology has " + std::to_string(topology.npus()) + " NPUs");
  if (!size && trace.tacos) size = trace.tacos->size;

  // Global numbering.
  std::vector<std::uint32_t> offset(npus + 1, 0);
  for (int r = 0; r < npus; ++r) {
    const std::uint64_t next = offset[r] + trace.ranks[r].nodes.size();
    if (next >= kNone) throw Error(trace.prefix + ": too many nodes to simulate");
    offset[r + 1] = static_cast<std::uint32_t>(next);
  }
  const std::uint32_t total = offset[npus];
  std::vector<int> rank_of(total);
  for (int r = 0; r < npus; ++r)
    std::fill(rank_of.begin() + offset[r], rank_of.begin() + offset[r + 1], r);

  // Dependencies: children in CSR, pending counts.
  std::vector<std::uint32_t> pending(total, 0);
  for (int r = 0; r < npus; ++r)
    for (std::uint32_t i = 0; i < trace.ranks[r].nodes.size(); ++i) {
      const EtNode& n = trace.ranks[r].nodes[i];
      pending[offset[r] + i] = static_cast<std::uint32_t>(n.data_deps.size() + n.ctrl_deps.size());
    }
  // Each node's children, by global node id (rank offset + index).
  const auto child_groups =
      detail::group_by<std::uint32_t, std::uint32_t>(total, total, [&](std::size_t g, auto&& emit) {
        const int r = rank_of[g];
        const EtNode& n = trace.ranks[r].nodes[g - offset[r]];
        for (const auto* deps : {&n.data_deps, &n.ctrl_deps})
          for (std::uint32_t p : *deps) emit(offset[r] + p, static_cast<std::uint32_t>(g));
      });
  const std::vector<std::uint32_t>& child_offset = child_groups.offsets;
  const std::vector<std::uint32_t>& children = child_groups.values;

  // Messages and routes.
  Run run;
  EtRunResult& result = run.result;
  run.message_of.resize(npus);
  std::vector<Message> messages;
  std::vector<LinkId> routes;
  std::unordered_map<std::int64_t, std::pair<std::uint32_t, std::uint32_t>> route_cache;
  std::vector<std::vector<LinkId>> parent_link(npus);  // per source: BFS tree, lazily
  // Direct links and switch routes as the simulator takes them; other pairs (through NPUs)
  // over a fewest-hop path, as ASTRA-sim would route them.
  const SwitchRoutes& switch_routes = topology.switch_routes();
  auto route = [&](int src, int dst) -> std::pair<std::uint32_t, std::uint32_t> {
    const std::int64_t key = static_cast<std::int64_t>(src) * npus + dst;
    if (auto it = route_cache.find(key); it != route_cache.end()) return it->second;
    const auto begin = static_cast<std::uint32_t>(routes.size());
    const auto switched = switch_routes.route(src, dst);
    if (!switched.empty()) {
      routes.insert(routes.end(), switched.begin(), switched.end());
    } else {
      std::vector<LinkId>& parent = parent_link[src];
      if (parent.empty()) {  // BFS over all devices, out-links in order: fewest hops
        parent.assign(topology.devices(), -1);
        std::vector<DeviceId> queue{src};
        std::vector<char> seen(topology.devices(), 0);
        seen[src] = 1;
        for (std::size_t q = 0; q < queue.size(); ++q)
          for (LinkId l : topology.out_links(queue[q])) {
            const DeviceId v = topology.link(l).dst;
            if (seen[v]) continue;
            seen[v] = 1;
            parent[v] = l;
            queue.push_back(v);
          }
      }
      if (parent[dst] < 0)
        throw Error(trace.prefix + ": rank " + std::to_string(src) + " sends to rank " +
                    std::to_string(dst) + ", which the topology gives no path to");
      std::vector<LinkId> path;
      for (DeviceId v = dst; v != src; v = topology.link(parent[v]).src) path.push_back(parent[v]);
      routes.insert(routes.end(), path.rbegin(), path.rend());
    }
    const std::pair<std::uint32_t, std::uint32_t> r{
        begin, static_cast<std::uint32_t>(routes.size() - begin)};
    route_cache.emplace(key, r);
    return r;
  };

  for (int r = 0; r < npus; ++r) run.message_of[r].assign(trace.ranks[r].nodes.size(), kNone);
  for (int r = 0; r < npus; ++r) {
    const auto& nodes = trace.ranks[r].nodes;
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
      const EtNode& n = nodes[i];
      if (n.type == EtNodeType::kColl)
        throw Error(describe(trace, r, i) +
                    ": COMM_COLL_NODE: this is a workload trace (one collective per rank), not a "
                    "collective algorithm; simulate the ET files its system JSON names");
      if (n.type != EtNodeType::kSend) continue;
      if (n.match < 0)
        throw Error(describe(trace, r, i) +
                    ": send has no matching receive (read the trace "
                    "with read_chakra)");
      Message m;
      m.send = offset[r] + i;
      m.recv = offset[n.peer] + static_cast<std::uint32_t>(n.match);
      if (n.comm_size > 0) {
        m.bytes = n.comm_size;
      } else if (n.msg_chunk_cnt > 0 && n.total_chunk_cnt > 0 && size) {
        m.bytes = *size / n.total_chunk_cnt * n.msg_chunk_cnt;
      } else {
        throw Error(describe(trace, r, i) + ": message size unknown: no comm_size, and " +
                    (n.msg_chunk_cnt > 0 && n.total_chunk_cnt > 0
                         ? std::string("no collective size was given (--size)")
                         : std::string("no msg_chunk_cnt / total_chunk_cnt to derive it from")));
      }
      if (m.bytes <= 0)
        throw Error(describe(trace, r, i) + ": message size " + std::to_string(m.bytes) +
                    " bytes (the collective size is too small for total_chunk_cnt " +
                    std::to_string(n.total_chunk_cnt) + ")");
      std::tie(m.route_begin, m.route_len) = route(r, n.peer);
      run.message_of[r][i] = static_cast<std::uint32_t>(messages.size());
      run.message_of[n.peer][n.match] = static_cast<std::uint32_t>(messages.size());
      messages.push_back(m);
    }
  }

  std::vector<Time> node_end(total, -1);
  std::vector<char> issued(total, 0);
  // One send in flight per rank (ASTRA-sim running per-rank ETs as its workload): a send that
  // becomes ready while another of its rank is on its way waits, in readiness order.
  std::vector<char> sending(npus, 0);
  std::vector<std::queue<std::uint32_t>> waiting_sends(npus);
  auto issue = [&](detail::PortEngine& engine, std::uint32_t g, Time t) {
    issued[g] = 1;
    const int r = rank_of[g];
    const EtNode& n = trace.ranks[r].nodes[g - offset[r]];
    switch (n.type) {
      case EtNodeType::kSend:
        if (one_send_in_flight) {
          if (sending[r]) {
            waiting_sends[r].push(g);
            return;
          }
          sending[r] = 1;
        }
        engine.send(run.message_of[r][g - offset[r]], t);
        return;
      case EtNodeType::kRecv: {
        const std::uint32_t mi = run.message_of[r][g - offset[r]];
        if (engine.end(mi) >= 0)
          engine.post(t, kNodeDone, g);
        else
          messages[mi].recv_posted = true;
        return;
      }
      case EtNodeType::kComp: {
        Time duration = static_cast<Time>(n.duration_micros) * kPicosPerMicro;
        if (model == LinkModel::kAstra && duration == 0) duration = kPicosPerNano;
        ++result.compute_nodes;
        result.compute_ps += duration;
        engine.post(t + duration, kNodeDone, g);
        return;
      }
      default:
        ++result.other_nodes;
        engine.post(t, kNodeDone, g);
        return;
    }
  };
  auto arrived = [&](detail::PortEngine& engine, std::uint32_t mi, Time t) {
    engine.post(t, kNodeDone, messages[mi].send);
    if (messages[mi].recv_posted) engine.post(t, kNodeDone, messages[mi].recv);
  };
  auto node_done = [&](detail::PortEngine& engine, std::uint32_t, std::uint32_t g, Time t) {
    node_end[g] = t;
    if (one_send_in_flight) {
      const int r = rank_of[g];
      if (trace.ranks[r].nodes[g - offset[r]].type == EtNodeType::kSend) {
        sending[r] = 0;
        if (!waiting_sends[r].empty()) {
          const std::uint32_t next = waiting_sends[r].front();
          waiting_sends[r].pop();
          sending[r] = 1;
          engine.send(run.message_of[r][next - offset[r]], t);
        }
      }
    }
    for (std::uint32_t k = child_offset[g]; k < child_offset[g + 1]; ++k)
      if (--pending[children[k]] == 0) issue(engine, children[k], t);
  };
  detail::LambdaClient client([](auto&&...) {}, arrived, node_done);

  // Every event of one instant in the order it was posted: a link that frees at an instant serves
  // its switch queue after the messages that reach the switch then (kServe is posted after them),
  // so the order of messages that meet at a switch never depends on the order their sends were
  // issued in.
  detail::PortEngine::Options options;
  options.model = model;
  options.clock = trace.prefix;
  options.serve_after_free = true;
  options.congestion = congestion;
  options.whole_ns = whole_ns;
  detail::PortEngine engine(topology, std::move(options), messages.size(), client);
  for (std::uint32_t mi = 0; mi < messages.size(); ++mi) {
    const Message& m = messages[mi];
    const int src = rank_of[m.send];
    const EtNode& send = trace.ranks[src].nodes[m.send - offset[src]];
    engine.set_message(mi, std::span<const LinkId>(routes).subspan(m.route_begin, m.route_len),
                       m.bytes, send.chunks.empty() ? 0 : send.chunks.front());
  }

  for (std::uint32_t g = 0; g < total; ++g)
    if (pending[g] == 0) issue(engine, g, 0);
  engine.run();

  // Deadlock: name the first node (rank, then file order) that never finished.
  for (std::uint32_t g = 0; g < total; ++g) {
    if (node_end[g] >= 0) continue;
    std::int64_t stuck = 0;
    for (std::uint32_t h = 0; h < total; ++h) stuck += node_end[h] < 0;
    const int r = rank_of[g];
    const std::uint32_t i = g - offset[r];
    const EtNode& n = trace.ranks[r].nodes[i];
    std::string why;
    if (issued[g]) {
      const Message& m = messages[run.message_of[r][i]];
      const int peer = rank_of[m.send];
      why = "it waits for the message of " + describe(trace, peer, m.send - offset[peer]) +
            ", which is never sent";
    } else {
      for (const auto* deps : {&n.data_deps, &n.ctrl_deps})
        for (std::uint32_t p : *deps)
          if (why.empty() && node_end[offset[r] + p] < 0)
            why = "it waits for node " + std::to_string(trace.ranks[r].nodes[p].id) +
                  (trace.ranks[r].nodes[p].name.empty()
                       ? std::string()
                       : " ('" + trace.ranks[r].nodes[p].name + "')") +
                  ", which never finishes";
    }
    throw Error(describe(trace, r, i) + " never runs: " + why + " (deadlock: " +
                std::to_string(stuck) + " of " + std::to_string(total) + " nodes never finish)");
  }

  result.rank_finish.assign(npus, 0);
  for (std::uint32_t g = 0; g < total; ++g)
    result.rank_finish[rank_of[g]] = std::max(result.rank_finish[rank_of[g]], node_end[g]);
  for (Time t : result.rank_finish) result.collective_time = std::max(result.collective_time, t);
  result.messages = static_cast<std::int64_t>(messages.size());
  result.message_hops = engine.hops();
  result.by_message.reserve(messages.size());
  for (std::uint32_t mi = 0; mi < messages.size(); ++mi) {
    const Message& m = messages[mi];
    EtMessage out;
    out.src = rank_of[m.send];
    out.dst = rank_of[m.recv];
    out.send = m.send - offset[out.src];
    out.recv = m.recv - offset[out.dst];
    out.bytes = m.bytes;
    out.hops = static_cast<int>(m.route_len);
    out.start = engine.start(mi);
    out.end = engine.end(mi);
    result.by_message.push_back(out);
  }
  return run;
}

}  // namespace

EtRunResult simulate_chakra(const EtTrace& trace, const Topology& topology, LinkModel model,
                            std::optional<Bytes> size, bool one_send_in_flight, bool congestion,
                            bool whole_ns) {
  return run_trace(trace, topology, model, size, one_send_in_flight, congestion, whole_ns).result;
}

Algorithm chakra_to_algorithm(const EtTrace& trace, const Topology& topology, LinkModel model) {
  if (!trace.tacos)
    throw Error(trace.prefix +
                ": chunk identity is unknown: the files carry no tacos metadata "
                "(only tacos's own Chakra files name the chunks each message "
                "carries)");
  const EtTacosInfo& info = *trace.tacos;
  for (int r = 0; r < trace.npus(); ++r) {
    const auto& nodes = trace.ranks[r].nodes;
    for (std::uint32_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].type == EtNodeType::kSend && !nodes[i].has_chunks)
        throw Error(describe(trace, r, i) +
                    ": chunk identity is unknown: the send has no 'tacos_chunks' attribute");
  }
  if (topology.npus() != info.topology_npus)
    throw Error(trace.ranks[0].file + ": the files are for " + std::to_string(info.topology_npus) +
                " NPUs but the topology has " + std::to_string(topology.npus()) + " NPUs");
  Collective collective;
  try {
    collective = Collective::make(info.kind, info.topology_npus, info.size, info.chunks_per_npu,
                                  info.members, info.root);
  } catch (const Error& e) {
    throw Error(trace.ranks[0].file + ": GlobalMetadata does not describe a valid collective (" +
                e.what() + ")");
  }
  if (collective.chunk_bytes() != info.chunk_bytes)
    throw Error(trace.ranks[0].file + ": GlobalMetadata: chunk_bytes " +
                std::to_string(info.chunk_bytes) + " does not match the collective (" +
                std::to_string(collective.chunk_bytes()) + ")");

  const EtRunResult result = simulate_chakra(trace, topology, model, info.size);
  const SwitchRoutes& switch_routes = topology.switch_routes();
  Algorithm algorithm(collective);
  algorithm.reserve(result.by_message.size());
  Time last = 0;
  for (const EtMessage& m : result.by_message) {
    const EtNode& send = trace.ranks[m.src].nodes[m.send];
    if (switch_routes.route(m.src, m.dst).empty())
      throw Error(describe(trace, m.src, m.send) + ": the topology has no link " +
                  std::to_string(m.src) + " -> " + std::to_string(m.dst) +
                  " and no path through switches (pass the topology the algorithm was made for)");
    for (ChunkId c : send.chunks)
      if (c >= collective.num_chunks())
        throw Error(describe(trace, m.src, m.send) + ": chunk " + std::to_string(c) +
                    " is not one of the collective's chunks 0.." +
                    std::to_string(collective.num_chunks() - 1));
    const Bytes expected = static_cast<Bytes>(send.chunks.size()) * collective.chunk_bytes();
    if (m.bytes != expected)
      throw Error(describe(trace, m.src, m.send) + ": comm_size " + std::to_string(m.bytes) +
                  " bytes, but its " + std::to_string(send.chunks.size()) + " chunk(s) are " +
                  std::to_string(expected) + " bytes");
    algorithm.add_transfer(m.src, m.dst, m.start, m.end, send.chunks, send.reduce);
    last = std::max(last, m.end);
  }
  algorithm.sort_by_start();
  algorithm.synthesizer = info.synthesizer.empty() ? "chakra" : info.synthesizer;
  algorithm.seed = info.seed;
  algorithm.link_model = model;
  algorithm.collective_time = last;
  return algorithm;
}

}  // namespace tacos
