// The store-and-forward bound: under the tacos link model a message holds every port it crosses
// for latency + bytes / bandwidth, and a switch forwards a message only once all of it has
// arrived. Through a switch s whose P_in in-ports and P_out out-ports all have bandwidth B and
// latency L, with messages of port times w_1..w_M (w = L + bytes / B, the same on both ports)
// and W = sum w, every t in [0, T] satisfies
//   sum over out-ports of (work started by t)  <=  sum over in-ports of (work completed by t),
// since a message starts out only after it came in whole. Work started on an out-port by t is at
// least its total - (T - t) + what remains of its current message; work completed on an in-port
// by t is at most t - what its current message has done. Integrating over [0, T], each message
// adds w^2 / 2 on each side, so
//   (P_in + P_out) / 2 x T^2  >=  W T + sum w^2  >=  W T + W^2 / M.
// Few messages make sum w^2 large (the out-port waits for whole messages), many make W large
// (a latency each): so s delivers at most B (W_max(M) - M L) bytes in T, W_max(M) =
// 2 P T / (1 + sqrt(1 + 4 P / M)) with P = (P_in + P_out) / 2, at best over M. Groups of
// devices (joined by their fastest links, as the gossip bound's) whose traffic from (or to)
// outside all crosses such switches must receive (send) a known number of bytes; the bound is
// the least T at which those switches together can deliver them. For a DGX pod's rail leaves
// (dgx-a100:4 All-Gather: 24 MiB through each 4-port leaf at 25 GB/s, 1 us) that is 265.0 us
// against the bandwidth bound's 234.4 us: with one message per port the out-ports wait for the
// whole of it, with many they pay a microsecond each. Where every member of a group needs every
// byte that crosses into it, what crosses in the last moments must cross once per member
// (spreading_time): 265.4 us there.
//
// A fabric of switches counts the same way with its links to the NPUs as the ports (every message
// comes in over one and leaves over another, whole in between), so leaves behind faster spines
// are covered where each leaf alone is not uniform (uniform_fabric).
//
// It holds for the tacos link model only (under the astra model a port is busy for the bytes
// only and many small messages cost nothing), for unicast switches (a multicast switch starts
// several out-port messages from one in-port message).
#include "store_and_forward_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "device_groups.h"
#include "link_fill_bound.h"
#include "rooted_relay_bound.h"
#include "tacos/common/units.h"

namespace tacos::bounds_detail {
namespace {

// A switch all of whose ports look alike: the only kind the argument covers.
struct UniformSwitch {
  double ports = 0;        // (P_in + P_out) / 2
  double bytes_per_s = 0;  // B
  double latency_s = 0;    // L
  double count = 1;        // switches alike (their capacities add up)
  bool operator==(const UniformSwitch&) const = default;
};

std::optional<UniformSwitch> uniform_switch(const Topology& t, DeviceId s) {
  if (!t.is_switch(s) || t.is_multicast(s) || t.is_reducing(s)) return std::nullopt;
  const auto in = t.in_links(s), out = t.out_links(s);
  if (in.empty() || out.empty()) return std::nullopt;
  const Link& first = t.link(in.front());
  auto alike = [&](LinkId id) {
    const Link& l = t.link(id);
    return l.bandwidth_gbps == first.bandwidth_gbps && l.latency_ps == first.latency_ps;
  };
  if (!std::all_of(in.begin(), in.end(), alike) || !std::all_of(out.begin(), out.end(), alike))
    return std::nullopt;
  return UniformSwitch{(static_cast<double>(in.size()) + static_cast<double>(out.size())) / 2,
                       first.bandwidth_gbps * kBytesPerGB,
                       static_cast<double>(first.latency_ps) * 1e-12};
}

// A fabric of switches (a fat-tree's leaves and spines, a pod's rail leaves behind spines) seen
// as one switch: every message crosses it from an NPU's link in to an NPU's link out, at least
// one switch between them, so its way out starts only after its way in has completed, whatever
// the links between the switches are. Where every link between the fabric and the NPUs has the
// same bandwidth and latency, the argument above holds with those links as the ports, however
// the switches inside differ (a leaf's faster spine ports). `outside` is one of its switches;
// all of them are marked in `seen` (the whole fabric is walked even where some were seen
// before: a port left out would let messages in that the count does not hold).
std::optional<UniformSwitch> uniform_fabric(const Topology& t, DeviceId outside,
                                            std::vector<char>& seen) {
  std::vector<char> in_fabric(static_cast<std::size_t>(t.devices()), 0);
  std::vector<DeviceId> stack{outside};
  in_fabric[outside] = 1;
  const Link* first = nullptr;
  double in = 0, out = 0;
  bool alike = true;
  auto edge = [&](const Link& l) {
    if (first == nullptr) first = &l;
    alike = alike && l.bandwidth_gbps == first->bandwidth_gbps && l.latency_ps == first->latency_ps;
  };
  // A link between the fabric and a device outside it is a port; a switch beyond is walked.
  auto visit = [&](const Link& l, DeviceId beyond, double& ports) {
    if (!t.is_switch(beyond)) {
      edge(l);
      ports += 1;
    } else if (!in_fabric[beyond]) {
      in_fabric[beyond] = 1;
      stack.push_back(beyond);
    }
  };
  while (!stack.empty()) {
    const DeviceId s = stack.back();
    stack.pop_back();
    if (t.is_multicast(s) || t.is_reducing(s)) alike = false;
    for (const LinkId id : t.in_links(s)) visit(t.link(id), t.link(id).src, in);
    for (const LinkId id : t.out_links(s)) visit(t.link(id), t.link(id).dst, out);
  }
  if (!alike || first == nullptr || in == 0 || out == 0) return std::nullopt;
  for (DeviceId d = 0; d < t.devices(); ++d)
    if (in_fabric[d]) seen[d] = 1;
  return UniformSwitch{(in + out) / 2, first->bandwidth_gbps * kBytesPerGB,
                       static_cast<double>(first->latency_ps) * 1e-12};
}

// The most bytes `s` can deliver within `seconds`: B (W_max(M) - M L) at the best real M >= 1
// (a relaxation of whole message counts, so never below the true most). W_max(M) - M L is
// concave in M, so a golden-section search finds its maximum.
double capacity(const UniformSwitch& s, double seconds) {
  const double p = s.ports;
  auto delivered = [&](double messages) {
    const double work = 2 * p * seconds / (1 + std::sqrt(1 + 4 * p / messages));
    return work - messages * s.latency_s;
  };
  if (s.latency_s <= 0) return s.bytes_per_s * p * seconds;
  double lo = 1, hi = std::max(2.0, p * seconds / s.latency_s);
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
  double fa = delivered(a), fb = delivered(b);
  double best = std::max({delivered(lo), delivered(hi), fa, fb});
  for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; ++i) {
    if (fa < fb) {
      lo = a;
      a = b;
      fa = fb;
      b = lo + phi * (hi - lo);
      fb = delivered(b);
      best = std::max(best, fb);
    } else {
      hi = b;
      b = a;
      fb = fa;
      a = hi - phi * (hi - lo);
      fa = delivered(a);
      best = std::max(best, fa);
    }
  }
  // The search stops within a relative 1e-9 of the maximum: err towards more capacity.
  return std::max(0.0, best) * s.bytes_per_s * (1 + 1e-9);
}

// The least T at which the switches together can deliver `bytes`.
double least_time(const std::vector<UniformSwitch>& switches, double bytes) {
  auto total = [&](double seconds) {
    double sum = 0;
    for (const UniformSwitch& s : switches) sum += s.count * capacity(s, seconds);
    return sum;
  };
  double hi = 1e-6;
  while (total(hi) < bytes) {
    hi *= 2;
    if (hi > 1e9) return 0;  // no switch can carry anything (cannot happen with ports)
  }
  double lo = 0;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (total(mid) < bytes ? lo : hi) = mid;
  }
  return lo;  // total(lo) < bytes: no schedule finishes by lo
}

// Bytes that must cross into (or, for `egress`, out of) each group holding a member, summed.
double crossing_bytes(const Collective& c, const std::vector<int>& group_of, bool& egress) {
  const double chunk = static_cast<double>(c.chunk_bytes());
  const double per_member = chunk * c.chunks_per_npu();
  const double buffer = chunk * c.num_chunks();
  const auto& members = c.members();
  std::vector<int> count;  // members per group, by the group's first member's order
  std::vector<int> groups;
  std::vector<int> index(group_of.size(), -1);
  for (NpuId m : members) {
    int& i = index[static_cast<std::size_t>(group_of[m])];
    if (i < 0) {
      i = static_cast<int>(groups.size());
      groups.push_back(group_of[m]);
      count.push_back(0);
    }
    ++count[static_cast<std::size_t>(i)];
  }
  const double n = static_cast<double>(members.size());
  const double m = static_cast<double>(groups.size());
  const bool rooted = c.kind() == CollectiveKind::kBroadcast ||
                      c.kind() == CollectiveKind::kReduce || c.kind() == CollectiveKind::kGather ||
                      c.kind() == CollectiveKind::kScatter;
  const int root_group = rooted ? group_of[c.root()] : -1;
  double bytes = 0;
  egress = false;
  switch (c.kind()) {
    case CollectiveKind::kReduceScatter:
      egress = true;
      [[fallthrough]];
    case CollectiveKind::kAllGather:
      // Each group holding a member needs (sends) the shares of the members outside it.
      for (int k : count) bytes += per_member * (n - k);
      break;
    case CollectiveKind::kReduce:
      egress = true;
      [[fallthrough]];
    case CollectiveKind::kBroadcast:
      // Every group with a member but not the root receives (sends) the whole buffer.
      for (int g : groups) bytes += g == root_group ? 0 : buffer;
      break;
    case CollectiveKind::kScatter:
      egress = true;
      [[fallthrough]];
    case CollectiveKind::kGather:
      // The root's group receives (sends) the shares of the members outside it.
      for (std::size_t i = 0; i < groups.size(); ++i)
        if (groups[i] == root_group) bytes = per_member * (n - count[i]);
      break;
    case CollectiveKind::kAllReduce:
      // One-way gossip over groups (lower_bound.cpp): 2(M-1) receptions from outside per byte.
      bytes = 2 * (m - 1) * buffer;
      break;
    case CollectiveKind::kAllToAll:
      // A group receives every pair's K chunks from each member outside it to each inside.
      for (int k : count) bytes += per_member * k * (n - k);
      break;
  }
  return m < 2 ? 0 : bytes;
}

// Seconds that a byte reaching one member of its group needs at least to reach another: 0
// where the argument below does not hold. In All-Gather and Broadcast every member of a group
// needs every byte that crosses into it (Reduce-Scatter and Reduce: the time reversal, every
// member's partial must leave), and when every crossing link ends at a member, a byte that first
// reaches a member later than `spread` before the end must cross once per member. A message
// from member u to member v holds each link of its path for at least its latency: a direct link
// between members, or one of u's links out and one of v's links in.
// `members_in`: per group, its members of the collective.
double spreading_time(const Topology& t, const Collective& c, const std::vector<int>& group_of,
                      const std::vector<int>& members_in, bool egress) {
  const CollectiveKind kind = c.kind();
  if (kind != CollectiveKind::kAllGather && kind != CollectiveKind::kReduceScatter &&
      kind != CollectiveKind::kBroadcast && kind != CollectiveKind::kReduce)
    return 0;
  const int d = t.devices();
  std::vector<char> member(d, 0);
  for (NpuId m : c.members()) member[m] = 1;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> direct(d, inf), out(d, inf), in(d, inf);
  for (const Link& l : t.links()) {
    const double latency = static_cast<double>(l.latency_ps) * 1e-12;
    const bool src_member = member[l.src] != 0, dst_member = member[l.dst] != 0;
    const int g = group_of[src_member ? l.src : l.dst];
    if (src_member && dst_member && group_of[l.src] == group_of[l.dst]) {
      direct[g] = std::min(direct[g], latency);
      continue;
    }
    if (src_member) out[group_of[l.src]] = std::min(out[group_of[l.src]], latency);
    if (dst_member) in[group_of[l.dst]] = std::min(in[group_of[l.dst]], latency);
    // A crossing link must end (start, for egress) at a member, not at a device that could
    // hand one arrival to several members.
    const int inside = egress ? l.src : l.dst, outside = egress ? l.dst : l.src;
    if (group_of[inside] != group_of[outside] && members_in[group_of[inside]] > 0 &&
        !member[inside])
      return 0;
  }
  double spread = inf;
  for (int g = 0; g < d; ++g) {
    if (members_in[g] == 0) continue;
    if (members_in[g] < 2) return 0;  // a lone member spreads nothing
    spread = std::min(spread, std::min(direct[g], out[g] + in[g]));
  }
  return std::isfinite(spread) ? spread : 0;
}

// The bound for one grouping: devices joined by links of at least `threshold` GB/s. Each switch
// at a group's boundary counts as itself where its ports are alike, else as its whole fabric;
// with `whole_fabrics` every one counts as its fabric (tighter where a fat-tree's leaves and
// spines have ports alike: only the ports to NPUs carry the count, not the spine ports too).
double bound_for_threshold(const Topology& t, const Collective& c, double threshold,
                           bool whole_fabrics) {
  const int d = t.devices();
  const std::vector<int> group_of = groups_joined_by(t, threshold);
  // Every collective's crossing bytes below hold with reductions anywhere, except All-Reduce's
  // gossip count (lower_bound.cpp, group_gossip_seconds).
  if (c.kind() == CollectiveKind::kAllReduce && !reductions_inside_groups(t, group_of)) return 0;
  bool egress = false;
  const double bytes = crossing_bytes(c, group_of, egress);
  if (bytes <= 0) return 0;
  std::vector<int> members_in(d, 0);
  for (NpuId m : c.members()) ++members_in[group_of[m]];
  // Every link across a member group's boundary, in the direction that counts, must come from
  // (go to) a uniform unicast switch outside the group. Switches alike are one class with a
  // count: the search then costs the same for a pod of 32 rail leaves as for one switch.
  std::vector<char> seen(d, 0);
  std::vector<UniformSwitch> switches;
  std::vector<double> boundary(d, 0);  // per group: bytes per second across its boundary
  for (const Link& l : t.links()) {
    const int inside = egress ? l.src : l.dst, outside = egress ? l.dst : l.src;
    if (members_in[group_of[inside]] == 0 || group_of[inside] == group_of[outside]) continue;
    boundary[group_of[inside]] += l.bandwidth_gbps * kBytesPerGB;
    if (seen[outside]) continue;
    seen[outside] = 1;
    std::optional<UniformSwitch> s;
    if (!whole_fabrics) s = uniform_switch(t, outside);
    if (!s && t.is_switch(outside)) s = uniform_fabric(t, outside, seen);
    if (!s) return 0;
    auto same = std::find(switches.begin(), switches.end(), *s);
    if (same == switches.end())
      switches.push_back(*s);
    else
      same->count += 1;
  }
  if (switches.empty()) return 0;
  const double plain = least_time(switches, bytes);
  const double spread = spreading_time(t, c, group_of, members_in, egress);
  if (spread <= 0) return plain;
  // The bytes that may still cross in the last `spread` seconds: what the boundary links can
  // carry then, each byte counted once per member that needs it.
  double late = 0;
  for (int g = 0; g < d; ++g)
    if (members_in[g] > 0) late += spread * boundary[g] / members_in[g];
  return std::max(plain, spread + least_time(switches, std::max(0.0, bytes - late)));
}

// All-to-All where every NPU is a member and has one link out, to a unicast switch, all alike
// (a fat-tree's or a single switch's hosts): a message has one destination, so what an NPU
// sends straight to another is a message of its own on its one out-link, a latency each, and a
// byte relayed through another NPU crosses that NPU's out-link as well. Each ordered pair's
// c bytes then keep the out-links busy for at least min(c / B + L, 2 c / B) together, and the
// busiest of the N links at least the mean: T >= (N - 1) min(c / B + L, 2 c / B).
// fattree:32x16x32, 64 MiB: 511 x (2.44 + 0.5) = 1503.1 us, where the cut bound is 1247.6.
double all_to_all_message_bound(const Topology& t, const Collective& c) {
  if (c.kind() != CollectiveKind::kAllToAll || c.num_members() != t.npus() || t.npus() < 2)
    return 0;
  const Link* first = nullptr;
  for (NpuId v = 0; v < t.npus(); ++v) {
    const auto out = t.out_links(v);
    if (out.size() != 1) return 0;
    const Link& link = t.link(out.front());
    if (!t.is_switch(link.dst) || t.is_multicast(link.dst) || t.is_reducing(link.dst)) return 0;
    if (first == nullptr) first = &link;
    if (link.bandwidth_gbps != first->bandwidth_gbps || link.latency_ps != first->latency_ps)
      return 0;
  }
  const double bytes_per_s = first->bandwidth_gbps * kBytesPerGB;
  const double latency_s = static_cast<double>(first->latency_ps) * 1e-12;
  const double pair_bytes = static_cast<double>(c.chunk_bytes()) * c.chunks_per_npu();
  const double per_pair =
      std::min(pair_bytes / bytes_per_s + latency_s, 2 * pair_bytes / bytes_per_s);
  return (t.npus() - 1) * per_pair;
}

}  // namespace

double store_and_forward_bound_seconds(const Topology& t, const Collective& c) {
  // Broadcast and Reduce: the root's links and a far member's (rooted_relay_bound.cpp; on
  // networks of NPUs alone All-Reduce too, between two far members); on networks of NPUs alone
  // also All-Gather and Reduce-Scatter: each link in fills only as fast as its sender gathers
  // (link_fill_bound.cpp).
  double best = rooted_relay_bound_seconds(t, c);
  if (t.switches() == 0) return std::max(best, link_fill_bound_seconds(t, c));
  best = std::max(best, all_to_all_message_bound(t, c));
  // Whole fabrics differ from switch by switch only where switches link to switches.
  const bool fabrics = std::any_of(t.links().begin(), t.links().end(), [&](const Link& l) {
    return t.is_switch(l.src) && t.is_switch(l.dst);
  });
  for (double threshold : grouping_thresholds(t, 64))
    for (bool whole_fabrics : {false, true})
      if (!whole_fabrics || fabrics)
        best = std::max(best, bound_for_threshold(t, c, threshold, whole_fabrics));
  return best;
}

}  // namespace tacos::bounds_detail
