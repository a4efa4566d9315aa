// In-switch plans (in_switch.h). Both are written with placeholder times that only encode the
// order (every dependency recorded before its consumer, each port's messages in the order they
// should leave) and re-timed by the simulator, as the baselines are (baselines.h).
#include "in_switch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "reduction.h"
#include "tacos/common/error.h"
#include "tacos/common/link_model.h"
#include "tacos/common/units.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {
namespace {

// Collects transfers at placeholder slots (slot, slot + 1).
class SlotPlan {
 public:
  SlotPlan(const Collective& collective, std::string name, LinkModel model)
      : algorithm_(collective) {
    algorithm_.synthesizer = std::move(name);
    algorithm_.link_model = model;
  }
  void send(DeviceId from, DeviceId to, Time slot, ChunkId chunk, bool reduce) {
    send_at(from, to, slot, slot + 1, chunk, reduce);
  }
  // Estimated times: they order each port's queue; the simulator takes the real ones.
  void send_at(DeviceId from, DeviceId to, Time start, Time end, ChunkId chunk, bool reduce) {
    algorithm_.add_transfer(from, to, start, end, chunk, reduce);
  }
  Algorithm build(const Topology& topology, LinkModel model) {
    algorithm_.sort_by_start();
    compact(algorithm_, topology, model);
    return std::move(algorithm_);
  }

 private:
  Algorithm algorithm_;
};

// Chunks in the order every member sends them: piece by piece, and within a piece one chunk of
// each owner, so that each round of sums reaches every member's port once.
template <typename Visit>
void for_each_chunk(const Collective& collective, Visit&& visit) {
  const int n = collective.num_members();
  const int k = collective.chunks_per_npu();
  for (int piece = 0; piece < k; ++piece)
    for (int owner = 0; owner < n; ++owner) visit(owner * k + piece, owner);
}

// The reducing switch with a link to and from every device of `group` (lowest id), or -1.
DeviceId reducing_switch_of(const Topology& topology, std::span<const NpuId> group) {
  if (group.empty()) return -1;
  for (LinkId out : topology.out_links(group.front())) {
    const DeviceId s = topology.link(out).dst;
    if (!topology.is_reducing(s)) continue;
    bool joined = true;
    for (NpuId m : group)
      if (topology.find_link(m, s) < 0 || topology.find_link(s, m) < 0) {
        joined = false;
        break;
      }
    if (joined) return s;
  }
  return -1;
}

// Time of `bytes` over the route src -> dst (every hop's latency and serialization).
Time route_time(const Topology& topology, DeviceId src, DeviceId dst, Bytes bytes) {
  Time total = 0;
  for (LinkId l : topology.switch_routes().route(src, dst))
    total += topology.transfer_time(l, bytes);
  return std::max<Time>(total, 1);
}

// NVLink domains joined by rails: every NPU on the reducing switch of its fastest link (its
// node's NVSwitch), domains of equal size, the i-th NPUs of all domains forming rail i, each
// rail either joined by one reducing switch (SHARP) or reaching itself through the network.
struct Domains {
  std::vector<DeviceId> switches;        // per domain, ascending
  std::vector<std::vector<NpuId>> gpus;  // per domain, ascending
  std::vector<DeviceId> rail_switch;     // per rail: its reducing switch, or -1
  int per_domain() const { return static_cast<int>(gpus.front().size()); }
  int count() const { return static_cast<int>(switches.size()); }
};

// The domains of `collective` (every NPU of the topology) or why there are none.
std::variant<Domains, std::string> find_domains(const Topology& topology,
                                                const Collective& collective) {
  const int n = collective.num_members();
  if (n != topology.npus())
    return std::string("it needs every NPU of the topology in the collective");
  std::vector<DeviceId> domain_switch(n, -1);
  for (NpuId m = 0; m < n; ++m) {
    double fastest = 0;
    for (LinkId l : topology.out_links(m)) {
      const Link& link = topology.link(l);
      if (topology.is_reducing(link.dst) && topology.find_link(link.dst, m) >= 0 &&
          link.bandwidth_gbps > fastest) {
        fastest = link.bandwidth_gbps;
        domain_switch[m] = link.dst;
      }
    }
    if (domain_switch[m] < 0)
      return "NPU " + std::to_string(m) + " is on no reducing switch (an NVLS NVSwitch)";
  }
  Domains out;
  out.switches = domain_switch;
  std::sort(out.switches.begin(), out.switches.end());
  out.switches.erase(std::unique(out.switches.begin(), out.switches.end()), out.switches.end());
  const int domains = out.count();
  if (domains < 2) return std::string("it needs two or more NVLink domains (nodes)");
  out.gpus.resize(domains);
  for (NpuId m = 0; m < n; ++m) {
    const int d = static_cast<int>(
        std::lower_bound(out.switches.begin(), out.switches.end(), domain_switch[m]) -
        out.switches.begin());
    out.gpus[d].push_back(m);
  }
  const std::size_t size = out.gpus.front().size();
  for (const auto& g : out.gpus)
    if (g.size() != size || size < 2)
      return std::string("its NVLink domains must have the same number of NPUs, two or more");
  const SwitchRoutes& routes = topology.switch_routes();
  out.rail_switch.assign(size, -1);
  std::vector<NpuId> rail;
  for (std::size_t r = 0; r < size; ++r) {
    rail.clear();
    for (int d = 0; d < domains; ++d) rail.push_back(out.gpus[d][r]);
    out.rail_switch[r] = reducing_switch_of(topology, rail);
    if (out.rail_switch[r] >= 0) continue;
    for (NpuId a : rail)
      for (NpuId b : rail)
        if (a != b && routes.route(a, b).empty())
          return "NPU " + std::to_string(a) + " cannot reach NPU " + std::to_string(b) +
                 " of its rail";
  }
  return out;
}

// How the domains plan runs its two stages.
enum class InDomain {
  kTacos,  // contributions up from all but the rail's NPU, the sum down to it; the result up
           // once and down to the others
  kNccl    // NVLS: the same pull (the puller adds its own part locally, where ld_reduce also
           // reads it through the switch: one chunk less on a port NCCL's rails leave idle);
           // the result up and down to every NPU, itself included (multimem.st)
};
enum class AcrossRails {
  kTacos,  // SHARP where the rail has it; else two domains swap, more reduce at a home and copy
  kTree,   // NCCL's NVLSTree: two binary trees over the domains, half the chunks each
  kSharp   // NCCL's CollNet: up to the rail's SHARP switch once, the sum down
};

// How many bottleneck periods later than the unqueued estimate the rail and the domain
// stages are recorded: the queues they meet delay them, and a port's FIFO must not hold an
// early chunk behind a late one.
struct Slack {
  Time before_rail = 0;
  Time before_domains = 0;
};

// NIC offload (tacos's plan, on unicast rails whose NICs have time to spare): in each round (one
// chunk per rail) every NPU hands `per_round` of its contributions to its rail peer in the next
// domain over the NIC; the peer adds it to its own before sending it up, and forwards the result
// back over the NIC once its switch sent it. The NPU moves those chunks over neither NVLink
// port. Without it every NVLink port carries the whole buffer each way, and an NPU's ingress
// waits one chunk's trip through both stages and the rail (about 3.3 us on two GB200 NVL72
// racks) before its first result: the plan cannot end before S / B plus that fill.
struct Offload {
  // The NIC's busy share the offload may bring it to (0: none). Each chunk per NPU and round
  // adds two to the NIC's rail chunks; with more than 0.8 of the NIC busy, queues at the NIC
  // delay the rail stage more than the NVLink ports gain (measured on gb200-nvl72:2:nvls).
  double nic_load = 0;
  Time lead = 32;  // bottleneck periods between a contribution's arrival and its use
  Time lag = 32;   // bottleneck periods between the peer holding the result and its forward
};

// All-Reduce over the domains. Chunk c is carried by rail r = c mod D: (1) into the rail's NPU
// of each domain through the domain's switch; (2) across the rail; (3) from the rail's NPU to
// its domain through the switch. tacos's stages move the whole buffer out and in per NPU on
// NVLink and 2 (M - 1) / M of its rail's share on the rail (SHARP: the share once each way).
// The placeholder times are estimates from the bottleneck period, so that each port's queue
// holds the chunks in about the order they become ready.
// With an offload asked for (nic_load > 0), nullopt where none applies.
// One piece (about 160 lines) because a chunk's three stages run on one clock `t` and read the
// port periods, the offload's rounds and the tree shape computed at the top; split, each stage
// would take a dozen of them as parameters.
std::optional<Algorithm> domains_all_reduce(const Topology& topology, const Collective& collective,
                                            LinkModel model, const Domains& dom, InDomain in_domain,
                                            AcrossRails across, Slack slack, Offload offload,
                                            const std::string& name) {
  const int domains = dom.count();
  const int per_domain = dom.per_domain();
  const Bytes bytes = collective.chunk_bytes();
  const SwitchRoutes& routes = topology.switch_routes();
  const NpuId g0 = dom.gpus[0][0];
  const bool sharp =
      across == AcrossRails::kSharp || (across == AcrossRails::kTacos && dom.rail_switch[0] >= 0);
  const Time nv_up = route_time(topology, g0, dom.switches[0], bytes);
  const Time nv_down = route_time(topology, dom.switches[0], g0, bytes);
  // A rail port's time per chunk: its first hop (to the leaf, or the direct link).
  const Time nic = topology.transfer_time(
      sharp ? topology.find_link(g0, dom.rail_switch[0]) : routes.route(g0, dom.gpus[1][0]).front(),
      bytes);
  const Time rail_hop = sharp ? nic : route_time(topology, g0, dom.gpus[1][0], bytes);
  // The bottleneck's period per chunk: each NPU's NVLink port carries about one chunk per chunk
  // of the buffer; its rail port 2 (M - 1) / M (SHARP: 1) chunks per chunk of its rail. A port
  // is busy for what the link model says (astra: the bytes only), not for the arrival time.
  auto busy = [&](LinkId l) {
    const Link& link = topology.link(l);
    return link_busy_time(model, link.latency_ps, serialization_time(bytes, link.bandwidth_gbps));
  };
  const Time nv_busy = std::max(busy(topology.find_link(g0, dom.switches[0])),
                                busy(topology.find_link(dom.switches[0], g0)));
  const Time nic_busy = busy(sharp ? topology.find_link(g0, dom.rail_switch[0])
                                   : routes.route(g0, dom.gpus[1][0]).front());
  const double rail_chunks = sharp ? 1.0 : 2.0 * (domains - 1) / domains;
  const Time period = std::max<Time>(
      nv_busy, static_cast<Time>(rail_chunks * static_cast<double>(nic_busy) / per_domain) + 1);
  // Binary trees over the domains (NVLSTree): tree 0 in domain order, tree 1 mirrored; a
  // domain's parent in tree t.
  auto parent = [&](int d, int tree) {
    const int i = tree == 0 ? d : domains - 1 - d;
    if (i == 0) return -1;
    const int p = (i - 1) / 2;
    return tree == 0 ? p : domains - 1 - p;
  };
  int depth = 0;
  while ((1 << depth) < domains + 1) ++depth;

  SlotPlan plan(collective, name, model);
  const int chunks = collective.num_chunks();
  const bool nccl = in_domain == InDomain::kNccl;
  // The offload runs in rounds [first_offloaded, last_offloaded): the first contributions
  // can leave at time 0, and the last forwards arrive before the plan's end (about two trips
  // through the stages and the rail). It takes each NVLink port's load per chunk to 1 - p / D
  // and adds 2 p / D to each NIC's (its own contributions out and results in, its peer's in
  // and out).
  const int per_round = std::min(
      (per_domain - 1) / domains,
      static_cast<int>(std::floor((offload.nic_load * per_domain * static_cast<double>(nv_busy) /
                                       static_cast<double>(nic_busy) -
                                   rail_chunks) /
                                  2)));
  const bool offloads = per_round > 0 && !sharp && across == AcrossRails::kTacos;
  const double share = offloads ? static_cast<double>(per_round) / per_domain : 0;
  const Time lead = rail_hop + offload.lead * period;
  const Time lag = offload.lag * period;
  const Time fill = 2 * (nv_up + nv_down) + rail_hop + lead + rail_hop + lag;
  const Time offload_period = std::max<Time>(
      static_cast<Time>((1 - share) * static_cast<double>(nv_busy)) + 1,
      static_cast<Time>((rail_chunks / per_domain + 2 * share) * static_cast<double>(nic_busy)) +
          1);
  const int first_offloaded = static_cast<int>(lead / period / per_domain + 1);
  const int last_offloaded = static_cast<int>(
      (chunks - fill / offload_period - slack.before_rail - slack.before_domains) / per_domain);
  if (offload.nic_load > 0 && (!offloads || last_offloaded <= first_offloaded)) return std::nullopt;
  Time t = 0;
  for (ChunkId c = 0; c < chunks; ++c) {
    const int r = c % per_domain;
    const int round = c / per_domain;
    const int home = round % domains;
    auto send = [&](DeviceId from, DeviceId to, Time at, Time lasts, bool reduce) {
      plan.send_at(from, to, at, at + lasts, c, reduce);
    };
    // The domain whose NPU at index i offloads chunk c to the next domain, or -1: the M p
    // indices before the rail's, one domain after the other. Every NPU offloads p chunks of
    // every round (uneven shares measured slower: the ports' queues drift apart).
    const bool offloaded = offloads && round >= first_offloaded && round < last_offloaded;
    auto offloader = [&](int i) {
      const int j = (r - 1 - i + per_domain) % per_domain;
      return offloaded && j < domains * per_round ? j % domains : -1;
    };
    // (1) into each domain's rail NPU
    for (int d = 0; d < domains; ++d) {
      for (int i = 0; i < per_domain; ++i) {
        if (i == r) continue;
        const NpuId m = dom.gpus[d][i];
        if (offloader(i) == d)
          send(m, dom.gpus[(d + 1) % domains][i], std::max<Time>(0, t - lead), rail_hop, true);
        else
          send(m, dom.switches[d], t, nv_up, true);
      }
      send(dom.switches[d], dom.gpus[d][r], t + nv_up, nv_down, true);
    }
    const Time stage_one = t;
    t += nv_up + nv_down;
    // (2) across the rail
    t += slack.before_rail * period;
    if (sharp) {
      for (int d = 0; d < domains; ++d) send(dom.gpus[d][r], dom.rail_switch[r], t, nic, true);
      t += nic;
      for (int d = 0; d < domains; ++d) send(dom.rail_switch[r], dom.gpus[d][r], t, nic, false);
      t += nic;
    } else if (across == AcrossRails::kTree) {
      const int tree = (c / per_domain) % 2;
      // Up: a domain at tree level l (root 0) sends at (depth - 1 - l); down: at level l.
      auto level = [&](int d) {
        int l = 0;
        for (int p = parent(d, tree); p >= 0; p = parent(p, tree)) ++l;
        return l;
      };
      for (int d = 0; d < domains; ++d)
        if (parent(d, tree) >= 0)
          send(dom.gpus[d][r], dom.gpus[parent(d, tree)][r], t + (depth - 1 - level(d)) * rail_hop,
               rail_hop, true);
      t += depth * rail_hop;
      for (int d = 0; d < domains; ++d)
        if (parent(d, tree) >= 0)
          send(dom.gpus[parent(d, tree)][r], dom.gpus[d][r], t + (level(d) - 1) * rail_hop,
               rail_hop, false);
      t += depth * rail_hop;
    } else if (domains == 2) {
      // Two domains swap their partial sums: one crossing each way, both end with the sum.
      send(dom.gpus[0][r], dom.gpus[1][r], t, rail_hop, true);
      send(dom.gpus[1][r], dom.gpus[0][r], t, rail_hop, true);
      t += rail_hop;
    } else {
      const NpuId h = dom.gpus[home][r];
      for (int d = 0; d < domains; ++d)
        if (d != home) send(dom.gpus[d][r], h, t, rail_hop, true);
      t += rail_hop;
      for (int d = 0; d < domains; ++d)
        if (d != home) send(h, dom.gpus[d][r], t, rail_hop, false);
      t += rail_hop;
    }
    // (3) out to each domain
    t += slack.before_domains * period;
    for (int d = 0; d < domains; ++d) {
      send(dom.gpus[d][r], dom.switches[d], t, nv_up, false);
      for (int i = 0; i < per_domain; ++i) {
        if ((!nccl && i == r) || offloader(i) == d) continue;
        const NpuId m = dom.gpus[d][i];
        send(dom.switches[d], m, t + nv_up, nv_down, false);
        const int from = offloader(i);
        if (from >= 0 && (from + 1) % domains == d)
          send(m, dom.gpus[from][i], t + nv_up + nv_down + lag, rail_hop, false);
      }
    }
    t = stage_one + (offloaded ? offload_period : period);
  }
  return plan.build(topology, model);
}

// The fastest over a few slacks (measured on dgx-h100:2 with NVLS and SHARP: no single one is
// best at every K); ties keep the earlier.
Algorithm fastest_domains_all_reduce(const Topology& topology, const Collective& collective,
                                     LinkModel model, const Domains& dom, InDomain in_domain,
                                     AcrossRails across, const std::string& name) {
  std::optional<Algorithm> best;
  Slack best_slack;
  for (const Slack slack :
       {Slack{0, 0}, Slack{4, 0}, Slack{16, 0}, Slack{4, 8}, Slack{16, 16}, Slack{4, 32}}) {
    std::optional<Algorithm> plan = domains_all_reduce(topology, collective, model, dom, in_domain,
                                                       across, slack, Offload{}, name);
    if (!best || plan->collective_time < best->collective_time) {
      best = std::move(plan);
      best_slack = slack;
    }
  }
  // tacos's plan also tries the NIC offload, with the slack that won without it.
  if (in_domain == InDomain::kTacos && across == AcrossRails::kTacos) {
    std::optional<Algorithm> plan = domains_all_reduce(topology, collective, model, dom, in_domain,
                                                       across, best_slack, Offload{0.8}, name);
    if (plan && plan->collective_time < best->collective_time) best = std::move(plan);
  }
  return std::move(*best);
}

}  // namespace

std::optional<DeviceId> shared_reducing_switch(const Topology& topology,
                                               const Collective& collective) {
  const DeviceId s = reducing_switch_of(topology, collective.members());
  return s >= 0 ? std::optional<DeviceId>(s) : std::nullopt;
}

std::optional<Algorithm> in_switch_plan(const Topology& topology, const Collective& collective,
                                        LinkModel model) {
  const CollectiveKind kind = collective.kind();
  if (kind == CollectiveKind::kGather || kind == CollectiveKind::kScatter ||
      kind == CollectiveKind::kAllToAll || collective.num_members() < 2)
    return std::nullopt;
  const std::optional<DeviceId> found = shared_reducing_switch(topology, collective);
  if (!found) {
    if (kind != CollectiveKind::kAllReduce || topology.reducing_switches() == 0)
      return std::nullopt;
    const auto domains = find_domains(topology, collective);
    if (!std::holds_alternative<Domains>(domains)) return std::nullopt;
    return fastest_domains_all_reduce(topology, collective, model, std::get<Domains>(domains),
                                      InDomain::kTacos, AcrossRails::kTacos, "tacos");
  }
  const DeviceId s = *found;
  SlotPlan plan(collective, "tacos", model);
  Time slot = 0;
  // Up: every contributor (reductions) or the chunk's source (copies) sends the chunk to the
  // switch; down: the switch sends the sum or the copy to each destination but the sender of
  // a copy. A reduction's destination that contributes keeps its own part and adds the sum of
  // the others (a reduce transfer), except in All-Reduce, where the switch holds every
  // contribution and sends the finished sum (a copy) to all.
  auto plan_chunk = [&](ChunkId c) {
    const auto sources = collective.sources(c);
    const auto destinations = collective.destinations(c);
    const bool reduction = is_reduction(kind);
    const bool all_reduce = kind == CollectiveKind::kAllReduce;
    auto single_destination_contributes = [&](NpuId m) {
      return !all_reduce && destinations.size() == 1 && destinations[0] == m;
    };
    for (NpuId m : sources)
      if (!(reduction && single_destination_contributes(m))) plan.send(m, s, slot, c, reduction);
    for (NpuId m : destinations) {
      if (!reduction && sources.size() == 1 && sources[0] == m) continue;
      plan.send(s, m, slot + 1, c, reduction && !all_reduce);
    }
  };
  if (has_root(kind)) {
    for (ChunkId c = 0; c < collective.num_chunks(); ++c, slot += 2) plan_chunk(c);
  } else {
    for_each_chunk(collective, [&](ChunkId c, int) {
      plan_chunk(c);
      slot += 2;
    });
  }
  return plan.build(topology, model);
}

std::optional<std::string> nvls_inapplicable(const Topology& topology,
                                             const Collective& collective) {
  const CollectiveKind kind = collective.kind();
  if (kind != CollectiveKind::kAllReduce && kind != CollectiveKind::kReduceScatter &&
      kind != CollectiveKind::kAllGather)
    return "nvls is defined for all-reduce, reduce-scatter and all-gather, not " + to_string(kind);
  if (collective.num_members() < 2) return "nvls needs two or more NPUs";
  if (!shared_reducing_switch(topology, collective))
    return std::string(
        "nvls needs one reducing switch (NVLink SHARP) joined to every NPU of the collective "
        "(e.g. switch:8:nvls or dgx-h100:1:nvls)");
  return std::nullopt;
}

Algorithm nvls_baseline(const Topology& topology, const Collective& collective, LinkModel model) {
  if (auto reason = nvls_inapplicable(topology, collective)) throw Error(*reason);
  const DeviceId s = *shared_reducing_switch(topology, collective);
  const auto& members = collective.members();
  const CollectiveKind kind = collective.kind();
  const bool pull = kind != CollectiveKind::kAllGather;       // multimem.ld_reduce
  const bool store = kind != CollectiveKind::kReduceScatter;  // multimem.st
  SlotPlan plan(collective, "nvls", model);
  // Per piece p, four phases at slots 4p + 0, 1 (the pull: contributions up, the sum to its
  // owner), 5 and 6 (the store: the owner's shard up, then to every GPU). The store of piece p
  // is recorded after the pull of piece p + 1, so that a GPU's port sends its next
  // contributions while its last sum is on its way (NCCL runs the two on separate warps).
  for_each_chunk(collective, [&](ChunkId c, int owner) {
    const Time base = 4 * static_cast<Time>(c % collective.chunks_per_npu());
    const NpuId o = members[owner];
    if (pull) {
      for (NpuId m : members) plan.send(m, s, base, c, /*reduce=*/true);
      plan.send(s, o, base + 1, c, /*reduce=*/false);
    }
    if (store) {
      plan.send(o, s, base + 5, c, false);
      for (NpuId m : members) plan.send(s, m, base + 6, c, false);
    }
  });
  return plan.build(topology, model);
}

std::optional<std::string> nvls_tree_inapplicable(const Topology& topology,
                                                  const Collective& collective, bool collnet) {
  const std::string name = collnet ? "collnet" : "nvls-tree";
  if (collective.kind() != CollectiveKind::kAllReduce)
    return name + " is defined for all-reduce, not " + to_string(collective.kind());
  if (topology.reducing_switches() == 0)
    return name + " needs NVLink SHARP switches (e.g. dgx-h100:4:nvls)";
  const auto domains = find_domains(topology, collective);
  if (const auto* why = std::get_if<std::string>(&domains)) return name + ": " + *why;
  if (collnet)
    for (DeviceId s : std::get<Domains>(domains).rail_switch)
      if (s < 0)
        return std::string(
            "collnet needs an InfiniBand SHARP switch joined to each rail (e.g. "
            "dgx-h100:4:nvls:sharp)");
  return std::nullopt;
}

Algorithm nvls_tree_baseline(const Topology& topology, const Collective& collective,
                             LinkModel model, bool collnet) {
  if (auto reason = nvls_tree_inapplicable(topology, collective, collnet)) throw Error(*reason);
  const Domains dom = std::get<Domains>(find_domains(topology, collective));
  return fastest_domains_all_reduce(topology, collective, model, dom, InDomain::kNccl,
                                    collnet ? AcrossRails::kSharp : AcrossRails::kTree,
                                    collnet ? "collnet" : "nvls-tree");
}

}  // namespace tacos::detail
