#include "tacos/bounds/lower_bound.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "cut_bound.h"
#include "device_groups.h"
#include "latencies.h"
#include "npu_symmetry.h"
#include "store_and_forward_bound.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"

// Bandwidth bounds, by collective (n members, K chunks per member, c = chunk bytes; a "set" is
// any set S of devices, switches included; B_in(S) = bandwidth of the links entering S).
// Multicast switches (one copy in, many out) leave the cut bounds valid: each counts the data
// that must cross into (or out of) S at least once, and a copy made by a switch still needs one
// crossing per chunk; only the egress half of the gossip bound does not hold (see there).
// - all-gather: data(S) = chunks with no source in S (S holds a member: each needs them all,
//   one copy must cross into S) = c K |members outside S|. Exact via max_closure_ratio.
// - reduce-scatter: the same on the reversed topology (data that must leave S: chunks whose
//   destination is outside S, at least one partial sum each, even with in-network reduction).
// - broadcast: S without the root but with a member must receive the whole buffer:
//   size / min over members t of maxflow(root -> t); reduce: the reverse.
// - gather: S with the root must receive every chunk from members outside S; scatter: reverse.
// - all-reduce: the larger of (a) the cut bound: a set with members inside and outside must
//   receive (and send) the whole buffer, exact via max-flow; (b) the NPU-ingress bound: every
//   byte position needs at least 2(n-1) receptions at NPUs (one-way gossip, Harary-Schwenk:
//   before the first NPU knows the full sum, n-1 distinct members have sent, and afterwards
//   n-1 others must receive; switches relay or copy but do not reduce), so
//   T >= 2(n-1) x buffer / sum of NPU ingress bandwidth; the same holds with groups of NPUs as
//   the gossip parties (free traffic inside a group, M groups, their in-links), which is what
//   bounds a DGX pod: 2(M-1) x buffer over all NICs. On vertex-transitive topologies
//   (ring, switch, torus) this is 2x the all-gather bound. The sum "reduce-scatter bound +
//   all-gather bound" is NOT used: it is not a valid bound in general (two groups of 2 and 6
//   NPUs joined by one link of bandwidth B each way: the sum is 1.5 x buffer / B, but each side
//   can reduce locally and exchange one buffer each way in about buffer / B).
// - all-to-all: data(S) = c K |members in S| |members outside S|, not a closure problem: exact
//   by enumerating all 2^D device sets for D <= 20, otherwise the best of candidate sets (a
//   valid bound that may lie below the exact cut bound). Also the hop bound: chunk i -> j
//   crosses at least hops(i, j) links, so T >= sum of bytes x hops / sum of all bandwidths.
namespace tacos {
namespace {

using bounds_detail::hops_from;
using bounds_detail::kUnreachable;
using bounds_detail::Latencies;

using bounds_detail::CutResult;
using bounds_detail::FlowGraph;
using bounds_detail::MinCut;

constexpr int kMaxEnumerationDevices = 20;

double to_gib(double bytes) { return bytes / kBytesPerGB; }

// Copy collectives: a destination lacking the chunk hears from its nearest source. Reductions:
// every contribution must reach the destination, so the farthest contributor counts. One
// shortest-path tree per distinct source (or destination, whichever side is single).
Time latency_bound_ps(const Topology& t, const Collective& c, bool all_alike) {
  Latencies latency(t);
  const bool reduction = is_reduction(c.kind());
  auto unreachable = [](NpuId from, NpuId to) {
    return Error("bound: NPU " + std::to_string(to) + " cannot be reached from NPU " +
                 std::to_string(from));
  };
  // Every NPU alike and in the collective: All-Gather's farthest destination, All-Reduce's
  // farthest pair and Reduce-Scatter's farthest contributor are the same from every NPU.
  const CollectiveKind kind = c.kind();
  if (all_alike && c.num_members() == t.npus() &&
      (kind == CollectiveKind::kAllGather || kind == CollectiveKind::kAllReduce ||
       kind == CollectiveKind::kReduceScatter)) {
    const bool into = kind == CollectiveKind::kReduceScatter;
    const std::vector<Time>& dist = into ? latency.to(0) : latency.from(0);
    Time bound = 0;
    for (NpuId v = 1; v < t.npus(); ++v) {
      if (dist[v] == kUnreachable) throw into ? unreachable(v, 0) : unreachable(0, v);
      bound = std::max(bound, dist[v]);
    }
    return bound;
  }
  // Chunks with the same sources and destinations (the K pieces of one share) are adjacent
  // and share their spans: skip the repeats.
  std::span<const NpuId> last_sources, last_dests;
  Time bound = 0;
  for (ChunkId chunk = 0; chunk < c.num_chunks(); ++chunk) {
    const auto sources = c.sources(chunk);
    const auto dests = c.destinations(chunk);
    if (chunk > 0 && sources.data() == last_sources.data() &&
        sources.size() == last_sources.size() && dests.data() == last_dests.data() &&
        dests.size() == last_dests.size())
      continue;
    last_sources = sources;
    last_dests = dests;
    auto is_source = [&](NpuId v) {
      return std::find(sources.begin(), sources.end(), v) != sources.end();
    };
    // One destination: a tree into it (gather: the same root for every chunk).
    if (dests.size() == 1 && (sources.size() > 1 || c.kind() == CollectiveKind::kGather)) {
      const NpuId d = dests.front();
      if (!reduction && is_source(d)) continue;
      const std::vector<Time>& dist = latency.to(d);
      Time best = reduction ? 0 : kUnreachable;
      for (NpuId s : sources) {
        if (s == d) continue;
        if (dist[s] == kUnreachable && reduction) throw unreachable(s, d);
        best = reduction ? std::max(best, dist[s]) : std::min(best, dist[s]);
      }
      if (best == kUnreachable) throw unreachable(sources.front(), d);
      bound = std::max(bound, best);
      continue;
    }
    if (sources.size() == 1 || reduction) {
      // Single source: its farthest destination. Reduction with many contributors: the
      // farthest (contributor, destination) pair.
      for (NpuId s : sources) {
        const std::vector<Time>& dist = latency.from(s);
        for (NpuId d : dests) {
          if (d == s) continue;
          if (dist[d] == kUnreachable) throw unreachable(s, d);
          bound = std::max(bound, dist[d]);
        }
      }
      continue;
    }
    // Copy with several sources and destinations: nearest source per destination.
    for (NpuId d : dests) {
      if (is_source(d)) continue;
      const std::vector<Time>& dist = latency.to(d);
      Time best = kUnreachable;
      for (NpuId s : sources) best = std::min(best, dist[s]);
      if (best == kUnreachable) throw unreachable(sources.front(), d);
      bound = std::max(bound, best);
    }
  }
  return bound;
}

struct BandwidthBound {
  double seconds = 0;
  std::string method;
  bool exact = true;
};

// max over S meeting `anchors` of weight(outside S) / B_in(S) on g.
double closure(const FlowGraph& g, const std::vector<double>& weight,
               const std::vector<int>& anchors) {
  MinCut cut(g);
  return bounds_detail::max_closure_ratio(g, cut, weight, anchors).ratio;
}

// The one-way gossip bound over groups: join devices by the links of bandwidth >= threshold
// (a DGX node's NVSwitch, a mesh row of fast links); then every byte position needs 2(M-1)
// receptions by NPUs from outside their group (M = groups holding a member; a group is one
// gossip party, its inside traffic free), each entering the group over one of its in-links (or,
// reversed, leaving over an out-link). So T >= 2(M-1) x buffer / min(sum of group ingress, sum of
// group egress), over groups holding an NPU. Threshold +inf = single NPUs. With multicast
// switches only ingress counts: one send leaving a group may reach several groups as copies made
// by a switch (the egress half of the argument needs one send per reception), while every
// reception still enters its group over an in-link of its own. A reducing switch between groups
// combines what passes through it, so one reception may carry many parties' sums: such a
// grouping gives no bound (0); with NVLS inside DGX nodes the node grouping still holds.
// The cut bound (a) above stays valid with reducing switches: a set with members on both sides
// must still receive, for every byte position, something that depends on a member outside it.
double group_gossip_seconds(const Topology& t, const std::vector<NpuId>& members, double buffer,
                            double threshold) {
  const int d = t.devices();
  const std::vector<int> group_of = bounds_detail::groups_joined_by(t, threshold);
  if (!bounds_detail::reductions_inside_groups(t, group_of)) return 0;
  std::vector<char> has_npu(d, 0), has_member(d, 0);
  for (int i = 0; i < t.npus(); ++i) has_npu[group_of[i]] = 1;
  long long groups = 0;
  for (NpuId m : members) {
    const int r = group_of[m];
    if (!has_member[r]) ++groups;
    has_member[r] = 1;
  }
  if (groups < 2) return 0;
  double ingress = 0, egress = 0;
  for (const Link& l : t.links()) {
    const int from = group_of[l.src], to = group_of[l.dst];
    if (from == to) continue;
    if (has_npu[to]) ingress += l.bandwidth_gbps;
    if (has_npu[from]) egress += l.bandwidth_gbps;
  }
  const double capacity = t.multicast_switches() > 0 ? ingress : std::min(ingress, egress);
  return capacity > 0 ? 2.0 * static_cast<double>(groups - 1) * buffer / capacity : 0;
}

// The best group gossip bound over thresholds: every distinct link bandwidth (the fastest 256)
// and +inf.
double best_group_gossip_seconds(const Topology& t, const std::vector<NpuId>& members,
                                 double buffer) {
  double best = 0;
  for (double threshold : bounds_detail::grouping_thresholds(t, 256))
    best = std::max(best, group_gossip_seconds(t, members, buffer, threshold));
  return best;
}

// All-to-all data entering S: unit x (members in S) x (members outside S).
double all_to_all_ratio(const FlowGraph& g, const std::vector<char>& s,
                        const std::vector<NpuId>& members, double unit) {
  long long inside = 0;
  for (NpuId m : members) inside += s[m] != 0;
  const double data = unit * static_cast<double>(inside) *
                      static_cast<double>(static_cast<long long>(members.size()) - inside);
  if (data <= 0) return 0;
  const double bw = bounds_detail::in_bandwidth(g, s);
  if (bw <= 0)
    throw Error(
        "bound: a set of devices needs all-to-all data but no link enters it (the "
        "topology is not connected)");
  return data / bw;
}

// Exact: every set of the D devices, in Gray-code order (one device toggled per step, the
// entering bandwidth updated incrementally and recomputed exactly for any new maximum).
double all_to_all_enumerate(const FlowGraph& g, const std::vector<NpuId>& members, double unit) {
  const int d = g.vertices;
  std::vector<char> member(d, 0), s(d, 0);
  for (NpuId m : members) member[m] = 1;
  const long long n = static_cast<long long>(members.size());
  long long inside = 0;
  long double bw = 0;
  double best = 0;
  const std::uint64_t count = std::uint64_t{1} << d;
  for (std::uint64_t i = 1; i < count; ++i) {
    const int v = std::countr_zero(i);
    const bool entering = !s[v];
    long double delta = 0;
    for (int a : g.in_arcs[v])
      if (!s[g.arcs[a].src]) delta += g.arcs[a].bandwidth_gbps;
    for (int a : g.out_arcs[v])
      if (s[g.arcs[a].dst]) delta -= g.arcs[a].bandwidth_gbps;
    bw += entering ? delta : -delta;
    s[v] = entering;
    inside += member[v] ? (entering ? 1 : -1) : 0;
    const double data = unit * static_cast<double>(inside) * static_cast<double>(n - inside);
    if (data <= 0) continue;
    if (bw <= 0 || data / static_cast<double>(bw) > best * (1 - 1e-9))
      best = std::max(best, all_to_all_ratio(g, s, members, unit));
  }
  return best;
}

BandwidthBound all_to_all_bound(const Topology& t, const Collective& c) {
  const std::vector<NpuId>& members = c.members();
  const int n = c.num_members();
  const double unit = to_gib(static_cast<double>(c.chunk_bytes()) * c.chunks_per_npu());
  const FlowGraph g = bounds_detail::make_flow_graph(t, false);
  BandwidthBound out;
  double cut_bound = 0;
  if (g.vertices <= kMaxEnumerationDevices) {
    cut_bound = all_to_all_enumerate(g, members, unit);
    out.method = "all-to-all: max of the exact cut bound (all 2^" + std::to_string(g.vertices) +
                 " device sets enumerated) and the hop bound";
  } else {
    out.exact = false;
    out.method =
        "all-to-all: max of the hop bound and the best of candidate cuts (single NPUs, their "
        "complements, index-bit halves, the all-gather and reduce-scatter max-flow cuts); a "
        "valid bound that may lie below the exact cut bound";
    std::vector<char> s(g.vertices, 0);
    for (NpuId m : members) {  // {m} and everything but m
      std::fill(s.begin(), s.end(), 0);
      s[m] = 1;
      cut_bound = std::max(cut_bound, all_to_all_ratio(g, s, members, unit));
      std::fill(s.begin(), s.end(), 1);
      s[m] = 0;
      cut_bound = std::max(cut_bound, all_to_all_ratio(g, s, members, unit));
    }
    MinCut cut(g);
    // A split of the members; the other devices go wherever the entering bandwidth is least.
    auto try_split = [&](const std::vector<char>& member_in) {
      std::vector<int> in, outside;
      for (int i = 0; i < n; ++i) (member_in[i] ? in : outside).push_back(members[i]);
      if (in.empty() || outside.empty()) return;
      if (static_cast<int>(members.size()) == g.vertices) {  // nothing left to place
        std::vector<char> fixed(g.vertices, 0);
        for (int v : in) fixed[v] = 1;
        cut_bound = std::max(cut_bound, all_to_all_ratio(g, fixed, members, unit));
        return;
      }
      const std::vector<char> best = bounds_detail::min_in_cut(g, cut, in, outside);
      cut_bound = std::max(cut_bound, all_to_all_ratio(g, best, members, unit));
    };
    std::vector<char> member_in(n);
    for (int i = 0; i < n; ++i) member_in[i] = i < n / 2;
    try_split(member_in);
    for (int bit = 1; bit < n; bit <<= 1) {
      for (int i = 0; i < n; ++i) member_in[i] = (i & bit) != 0;
      try_split(member_in);
      for (int i = 0; i < n; ++i) member_in[i] = !member_in[i];
      try_split(member_in);
    }
    std::vector<double> weight(g.vertices, 0.0);
    for (NpuId m : members) weight[m] = unit;
    const CutResult ag = bounds_detail::max_closure_ratio(g, cut, weight, members);
    const FlowGraph r = bounds_detail::make_flow_graph(t, true);
    MinCut rcut(r);
    const CutResult rs = bounds_detail::max_closure_ratio(r, rcut, weight, members);
    for (const CutResult* found : {&ag, &rs}) {
      if (found->in_set.empty()) continue;
      for (int i = 0; i < n; ++i) member_in[i] = (found->in_set[members[i]] != 0) == (found == &ag);
      try_split(member_in);
    }
  }
  // Hop bound.
  double link_bytes = 0;
  for (NpuId i : members) {
    const std::vector<int> hops = hops_from(t, i);
    for (NpuId j : members)
      if (j != i) {
        if (hops[j] < 0)
          throw Error("bound: NPU " + std::to_string(j) + " cannot be reached from NPU " +
                      std::to_string(i));
        link_bytes += unit * hops[j];
      }
  }
  double total_bw = 0;
  for (const Link& l : t.links()) total_bw += l.bandwidth_gbps;
  const double hop_bound = link_bytes / total_bw;
  out.seconds = std::max(cut_bound, hop_bound);
  out.method += hop_bound > cut_bound ? " [hop bound is larger]" : " [cut bound is larger]";
  return out;
}

BandwidthBound bandwidth_bound(const Topology& t, const Collective& c, bool all_alike) {
  const CollectiveKind kind = c.kind();
  const std::vector<NpuId>& members = c.members();
  const int d = t.devices();
  const double chunk = to_gib(static_cast<double>(c.chunk_bytes()));
  const double per_member = chunk * c.chunks_per_npu();
  const NpuId root = c.root();
  std::vector<int> others;  // members but the root
  for (NpuId m : members)
    if (m != root) others.push_back(m);
  std::vector<double> weight(d, 0.0);
  BandwidthBound out;
  const std::string exact = ": exact cut bound over all device sets (max-flow, Dinkelbach)";

  // The rooted and all-to-all-members cases: sources weighted by what they hold, the sinks
  // that need it; collectives that gather data in are bounded on the reversed graph.
  const auto exact_cut = [&](bool reversed, const std::vector<int>& sinks) {
    const FlowGraph g = bounds_detail::make_flow_graph(t, reversed);
    out.seconds = closure(g, weight, sinks);
    out.method = to_string(kind) + exact;
    return out;
  };
  switch (kind) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      for (NpuId m : members) weight[m] = per_member;
      // With every NPU alike and a member, a shift maps the best set containing any NPU onto
      // one containing the first with the same ratio: one anchor finds the maximum.
      if (all_alike && c.num_members() == t.npus())
        return exact_cut(kind == CollectiveKind::kReduceScatter, {members.front()});
      return exact_cut(kind == CollectiveKind::kReduceScatter, members);
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      weight[root] = chunk * c.num_chunks();
      return exact_cut(kind == CollectiveKind::kReduce, others);
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
      for (NpuId m : others) weight[m] = per_member;
      return exact_cut(kind == CollectiveKind::kScatter, {root});
    case CollectiveKind::kAllReduce: {
      // (a) Sets with members on both sides: one contains members[0] or not. A set without m0
      // but with another member is bounded by "broadcast from m0", a set with m0 and without
      // another member by "reduce to m0" (the reversed graph), each with the whole buffer.
      const double buffer = chunk * c.num_chunks();
      const NpuId m0 = members.front();
      std::vector<int> rest(members.begin() + 1, members.end());
      weight[m0] = buffer;
      // (b) One-way gossip over groups: 2(M-1) receptions per byte position from outside.
      const double gossip = best_group_gossip_seconds(t, members, buffer);
      out.method =
          "all-reduce: max of the exact cut bound (max-flow) and the gossip bound "
          "2(M-1) x buffer / ingress of M groups (one-way gossip; groups = NPUs, or NPUs "
          "joined by their fastest links; " +
          std::string(t.reducing_switches() == 0
                          ? "switches do not reduce)"
                          : "groupings with a reducing switch between groups skipped)");
      // The cut bound is buffer / (least flow between m0 and another member, either way); when
      // flows of buffer / gossip provably exist it cannot exceed the ingress bound: skip the
      // 2(n-1) max-flows.
      const FlowGraph g = bounds_detail::make_flow_graph(t, false);
      const FlowGraph r = bounds_detail::make_flow_graph(t, true);
      const double needed = buffer / gossip;
      if (bounds_detail::certify_rooted_connectivity(g, r, m0, members, needed) &&
          bounds_detail::certify_rooted_connectivity(r, g, m0, members, needed)) {
        out.seconds = gossip;
        out.method += " [ingress bound is larger]";
        return out;
      }
      const double cut = std::max(closure(g, weight, rest), closure(r, weight, rest));
      out.seconds = std::max(cut, gossip);
      out.method += gossip > cut ? " [ingress bound is larger]" : " [cut bound is larger]";
      return out;
    }
    case CollectiveKind::kAllToAll:
      return all_to_all_bound(t, c);
  }
  return out;
}

}  // namespace

LowerBound compute_lower_bound(const Topology& topology_with_switches,
                               const Collective& collective) {
  const Topology& t = topology_with_switches;
  if (collective.topology_npus() != t.npus())
    throw Error("bound: the collective was made for " + std::to_string(collective.topology_npus()) +
                " NPUs but the topology has " + std::to_string(t.npus()));
  LowerBound result;
  // Latency first: it also reports an unreachable destination with a clear message.
  const bool all_alike = bounds_detail::npus_are_all_alike(t);
  result.latency_bound_us = to_micros(latency_bound_ps(t, collective, all_alike));
  const BandwidthBound bw = bandwidth_bound(t, collective, all_alike);
  result.bandwidth_bound_us = bw.seconds * 1e6;
  result.method = bw.method;
  result.bandwidth_bound_exact = bw.exact;
  result.lower_bound_us = std::max(result.latency_bound_us, result.bandwidth_bound_us);
  result.store_and_forward_bound_us =
      bounds_detail::store_and_forward_bound_seconds(t, collective) * 1e6;
  return result;
}

}  // namespace tacos
