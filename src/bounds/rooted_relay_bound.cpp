// The store-and-forward bound of a rooted collective (Broadcast, Reduce) under the tacos link
// model: every message holds its link for latency + bytes / bandwidth, and an NPU (or a switch)
// sends a byte on only once the whole message that brought it has arrived.
//
// Broadcast from r: take a member w at least 2 hops from r. For each byte x, let c(x) be the
// earliest end of a message out of r carrying x and s(x) the start of the message that first
// delivers x to w. Following x back from w, each message's sender got x from an earlier message
// that had ended, back to one out of r: the messages between r's link and w's cross the path's
// middle links, each for at least its latency, so s(x) >= c(x) + delta, delta = the least
// latency of a path from r to w less the largest latencies of r's out-links and w's in-links.
// With T the collective's end, T = c(x) + (s(x) - c(x)) + (T - s(x)) for every byte, so
//   S T  >=  sum_x c(x) + S delta + sum_x (T - s(x)).                                   (1)
// Assign each byte to the message that gives its c(x): on one of r's k out-links the messages
// so charged, in order, carry b_1, b_2, ... seconds of bytes (at the link's bandwidth B) and
// message l ends at least l latencies L and b_1 + ... + b_l after 0. So that link's bytes add to
// sum_x c(x) at least B (X^2 / 2 + sum_l (L l b_l + b_l^2 / 2)), X = sum_l b_l: the second part
// is least_message_cost(X, L), low only where some messages are large (b^2 / 2) and few (L l)
// at once, which they cannot be. Likewise on w's k' in-links, counted from the end: message j
// of n starts at least (n - j + 1) latencies and its bytes and the later ones' before T, so
// sum_x (T - s(x)) is at least the same sum there. Both costs are convex in X, so the least
// total over links of equal bandwidth puts S / k bytes on each (B the fastest of them and L the
// lowest latency: both make the bound smaller), and (1) divided by S gives
//   T  >=  delta + X_r / 2 + phi(X_r) / X_r + X_w / 2 + phi(X_w) / X_w,
// X_r = S / (k B_r), X_w = S / (k' B_w), phi = least_message_cost. With equal sides that is
// X + 2 phi(X) / X, about X + 1.89 sqrt(X L): torus2d:16x16 at 64 MiB, X = 312.5 us, L = 0.5 us,
// delta = 14 latencies of 0.5 us: 343.57 us, 10% above the cut bound's 312.5. A pipeline of
// equal messages along a chain of D links gets (m + D - 1)(L + X / m) at best; the bound is the
// most it can say for any message sizes, whole chunks or not.
//
// Reduce is the same argument backwards: the partial sums that carry w's contribution leave w
// over its out-links and reach r over its in-links, a whole message at a time through each NPU.
//
// All-Reduce: every member's contribution is rooted at it. For members a and w at least 2 hops
// apart, every position's result at w depends on a's input there, so something carrying it (a
// partial sum or not) leaves a over its out-links (S bytes in all) and reaches w over its
// in-links through a chain of whole messages: (1) holds with a for r. It binds where a and w
// have few links and lie far apart, as a mesh's opposite corners: mesh2d:16x16 at 64 MiB, two
// links of 50 GB/s each side (X = 625 us), 30 hops of 0.5 us: 672.84 us, above the gossip
// bound's 664.06 (every link busy all the time).
#include "rooted_relay_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <span>
#include <vector>

#include "device_groups.h"
#include "latencies.h"
#include "npu_symmetry.h"
#include "tacos/common/units.h"

namespace tacos::bounds_detail {
namespace {

// Members whose own side a member group's part takes the largest of (each a valid bound).
constexpr int kMemberSidesPerGroup = 8;

// One side's links: r's out-links (or in-links), w's in-links (or out-links).
struct Side {
  double links = 0;
  double bytes_per_s = 0;  // the fastest
  double latency_s = 0;    // the lowest
  double largest_latency_s = 0;
};

Side side_of(const Topology& t, std::span<const LinkId> ids) {
  Side s;
  s.latency_s = std::numeric_limits<double>::infinity();
  for (const LinkId id : ids) {
    const Link& l = t.link(id);
    const double latency = static_cast<double>(l.latency_ps) * 1e-12;
    s.links += 1;
    s.bytes_per_s = std::max(s.bytes_per_s, l.bandwidth_gbps * kBytesPerGB);
    s.latency_s = std::min(s.latency_s, latency);
    s.largest_latency_s = std::max(s.largest_latency_s, latency);
  }
  return s;
}

// X / 2 + phi(X) / X for one side carrying `bytes`.
double side_seconds(const Side& s, double bytes) {
  const double x = bytes / (s.links * s.bytes_per_s);
  return x / 2 + least_message_cost(x, s.latency_s) / x;
}

// The least sum's message count n and level lambda (rooted_relay_bound.h): b_l = lambda - L l
// for l <= n, 0 beyond, with L n (n - 1) / 2 < X <= L n (n + 1) / 2. lambda is also the sum's
// derivative in X.
std::pair<double, double> least_messages(double x, double l) {
  double n = std::max(1.0, std::ceil((std::sqrt(1 + 8 * x / l) - 1) / 2));
  while (l * n * (n + 1) / 2 < x) n += 1;
  while (n > 1 && l * n * (n - 1) / 2 >= x) n -= 1;
  return {n, (x + l * n * (n + 1) / 2) / n};
}

}  // namespace

double least_message_cost(double seconds, double latency) {
  if (seconds <= 0 || latency <= 0) return 0;
  // Convex and separable (Lagrange): the level lambda is where every message's marginal cost
  // L l + b_l meets.
  const double x = seconds, l = latency;
  const auto [n, lambda] = least_messages(x, l);
  // sum over l <= n of (L l b_l + b_l^2 / 2) = sum (lambda^2 - L^2 l^2) / 2.
  return std::max(0.0, (n * lambda * lambda - l * l * n * (n + 1) * (2 * n + 1) / 6) / 2);
}

namespace {

// side_seconds where link i's messages cannot start before offsets[i] (the root side: its
// sender's least latency from the root) or must end that long before T (a member v's side: the
// least latency from the link's end to v, which the chain bringing a byte to v crosses after
// its last entry into v's group): each link's part of the sum gains B X_i o_i, and the least
// total puts X_i where every link's marginal cost X + lambda(X) + o_i meets (convex, found by
// bisection). All offsets 0: side_seconds.
double offset_side_seconds(const Side& s, std::span<const double> offsets, double bytes) {
  if (std::all_of(offsets.begin(), offsets.end(), [](double o) { return o <= 0; }))
    return side_seconds(s, bytes);
  const double total = bytes / s.bytes_per_s, l = s.latency_s;
  auto marginal = [&](double x) { return l <= 0 ? x : x + least_messages(x, l).second; };
  // The X whose marginal cost is `level` - o (0 where even the first byte costs more).
  auto share = [&](double level, double o) {
    double lo = 0, hi = std::max(0.0, level - o);
    if (marginal(0) >= level - o) return 0.0;
    for (int i = 0; i < 100 && hi - lo > 1e-15; ++i) {
      const double mid = (lo + hi) / 2;
      (marginal(mid) < level - o ? lo : hi) = mid;
    }
    return lo;
  };
  auto shared = [&](double level) {
    double sum = 0;
    for (const double o : offsets) sum += share(level, o);
    return sum;
  };
  double lo = 0, hi = marginal(total) + *std::max_element(offsets.begin(), offsets.end());
  for (int i = 0; i < 100 && hi - lo > 1e-15; ++i) {
    const double mid = (lo + hi) / 2;
    (shared(mid) < total ? lo : hi) = mid;
  }
  // The shares at the level just below the total's: a hair less cost, a smaller bound.
  double cost = 0;
  for (const double o : offsets) {
    const double x = share(lo, o);
    cost += x * x / 2 + least_message_cost(x, l) + o * x;
  }
  return cost / total;
}

// Broadcast through switches, a third end: a relaying group. Each byte x that reaches member
// group W other than straight from the root's group R came into some other group Y with NPUs
// (Y != R, W) and left it again: s_W(x) >= c(x) + (a message into Y) + (a message out of Y),
// each at least its latency, the one out of Y also its bytes. A switch forwards each message
// once, so every (x, W) pair delivered straight from R is a copy R sent (at most R's links'
// bandwidth x (T - latency) bytes in all), and every pair relayed is a copy on some Y's links
// out. Summing (1) over the M member groups: M S T >= M sum c(x) + sum over W of sum (T -
// s_W(x)) + sum over relayed pairs of the two messages. A port out of a relaying group that
// carries U of those copies (u = U / B seconds) in n messages, busy n L + u <= T, charges them
// at least U (L + u / n) >= B u L T / (T - u), convex in u: least with the relayed copies,
// A >= M S - R's copies, spread evenly over the P ports. So T >= base + (A L_in + P B u L T /
// (T - u)) / (M S) with u = A / (P B) and base the two ends' parts averaged over W, and the
// right side falls as T grows: the least T that satisfies it is the bound (bisection).
// dgx-h100:16 at 64 MiB: 180.83 -> 185.84 us (15 nodes' 120 NICs relay 13.8 of the 15 copies;
// 186.65 with the NVSwitch hop inside each end node, offset_side_seconds); switch:16: 1297.64 ->
// 1302.46 us. Not for Reduce: a partial sum carries several groups'
// contributions in one copy.
double relayed_bound(const Topology& t, const std::vector<int>& group_of, int root_group,
                     const std::vector<LinkId>& out_of_root, const std::vector<double>& offsets,
                     const std::vector<int>& member_groups, const std::vector<double>& member_part,
                     double root_part, double bytes) {
  const auto devices = static_cast<std::size_t>(t.devices());
  std::vector<char> has_npu(devices, 0);
  for (NpuId n = 0; n < t.npus(); ++n) has_npu[static_cast<std::size_t>(group_of[n])] = 1;
  // The relaying groups' links out and in (to and from other groups).
  std::vector<LinkId> relay_out, relay_in;
  for (LinkId id = 0; id < t.num_links(); ++id) {
    const int from = group_of[t.link(id).src], to = group_of[t.link(id).dst];
    if (from == to) continue;
    if (from != root_group && has_npu[static_cast<std::size_t>(from)]) relay_out.push_back(id);
    if (to != root_group && has_npu[static_cast<std::size_t>(to)]) relay_in.push_back(id);
  }
  if (relay_out.empty() || relay_in.empty()) return 0;
  const Side out = side_of(t, relay_out), in = side_of(t, relay_in);
  const auto m = static_cast<double>(member_groups.size());
  double base = root_part;
  for (const int g : member_groups) base += member_part[static_cast<std::size_t>(g)] / m;
  // Bytes R's links can send by T.
  auto root_copies = [&](double seconds) {
    double total = 0;
    for (std::size_t i = 0; i < out_of_root.size(); ++i) {
      const Link& l = t.link(out_of_root[i]);
      total += l.bandwidth_gbps * kBytesPerGB *
               std::max(0.0, seconds - offsets[i] - static_cast<double>(l.latency_ps) * 1e-12);
    }
    return total;
  };
  // T minus the right side: rising with T, negative below the bound.
  auto slack = [&](double seconds) {
    const double relayed = m * bytes - root_copies(seconds);
    if (relayed <= 0) return seconds - base;
    const double u = relayed / (out.links * out.bytes_per_s);
    if (u >= seconds) return -std::numeric_limits<double>::infinity();
    const double charged = relayed * in.latency_s + out.links * out.bytes_per_s * u *
                                                        out.latency_s * seconds / (seconds - u);
    return seconds - base - charged / (m * bytes);
  };
  double lo = base, hi = 2 * base;
  while (slack(hi) < 0) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-15; ++i) {
    const double mid = (lo + hi) / 2;
    (slack(mid) >= 0 ? hi : lo) = mid;
  }
  return lo;
}

// Through switches: groups of devices (single devices, or a DGX node with its NVSwitch: the
// gossip bound's groups) stand for r and w. Every byte leaves the root's group R over its links
// out and enters a member's group W over its links in; where no link joins R to W, some device
// between them (a switch or an NPU) forwards only whole messages, so s(x) >= c(x) and the sums
// above hold with R's and W's links as the two sides (delta = 0). For a member v of W, s(x) is
// the start of the last entry into W of the chain that brings x to v: it is one message per
// byte on W's links in, and after it the chain still crosses from that link's end to v
// (offset_side_seconds). One grouping.
double grouped_bound(const Topology& t, const Collective& c, bool reduce, double bytes,
                     double threshold, Latencies& latencies) {
  const std::vector<int> group_of = groups_joined_by(t, threshold);
  const int root_group = group_of[c.root()];
  const auto devices = static_cast<std::size_t>(t.devices());
  std::vector<std::vector<LinkId>> into(devices);  // per group: links in, from outside
  std::vector<LinkId> out_of_root;
  std::vector<char> next_to_root(devices, 0);
  for (LinkId id = 0; id < t.num_links(); ++id) {
    // In Broadcast's direction: Reduce's partial sums cross the same links the other way.
    const int from = group_of[reduce ? t.link(id).dst : t.link(id).src];
    const int to = group_of[reduce ? t.link(id).src : t.link(id).dst];
    if (from == to) continue;
    into[static_cast<std::size_t>(to)].push_back(id);
    if (from == root_group) {
      out_of_root.push_back(id);
      next_to_root[static_cast<std::size_t>(to)] = 1;
    }
  }
  if (out_of_root.empty()) return 0;
  // A link's end inside R (Broadcast: its sender; Reduce: its receiver) and inside a member's
  // group, and the least latency between that end and r or v.
  auto inner_end = [&](LinkId id, bool at_root) {
    const Link& l = t.link(id);
    return at_root != reduce ? l.src : l.dst;
  };
  auto offsets_for = [&](const std::vector<LinkId>& links, DeviceId npu, bool at_root) {
    std::vector<double> offsets(links.size(), 0);
    if (std::all_of(links.begin(), links.end(),
                    [&](LinkId id) { return inner_end(id, at_root) == npu; }))
      return offsets;
    // Broadcast: from r to a link out of R, from a link into W to v; Reduce the other way.
    const std::vector<Time>& d = at_root != reduce ? latencies.from(npu) : latencies.to(npu);
    for (std::size_t i = 0; i < links.size(); ++i)
      offsets[i] =
          static_cast<double>(d[static_cast<std::size_t>(inner_end(links[i], at_root))]) * 1e-12;
    return offsets;
  };
  const std::vector<double> offsets = offsets_for(out_of_root, c.root(), true);
  const double root_part = offset_side_seconds(side_of(t, out_of_root), offsets, bytes);
  // Each member group's side: the largest over a few of its members (any one gives a bound).
  std::vector<double> member_part(devices, 0);
  std::vector<int> sides_tried(devices, 0);
  std::map<std::vector<double>, double> by_offsets;
  for (const NpuId v : c.members()) {
    const auto g = static_cast<std::size_t>(group_of[v]);
    if (static_cast<int>(g) == root_group || sides_tried[g] == kMemberSidesPerGroup) continue;
    ++sides_tried[g];
    std::vector<double> o = offsets_for(into[g], v, false);
    std::sort(o.begin(), o.end());  // the part does not depend on the links' order
    auto [it, fresh] = by_offsets.try_emplace(o, 0.0);
    if (fresh) it->second = offset_side_seconds(side_of(t, into[g]), o, bytes);
    member_part[g] = std::max(member_part[g], it->second);
  }
  double best = 0;
  std::vector<char> done(devices, 0);
  std::vector<int> member_groups;
  bool any_next_to_root = false;
  for (const NpuId w : c.members()) {
    const auto g = static_cast<std::size_t>(group_of[w]);
    if (static_cast<int>(g) == root_group || done[g]) continue;
    done[g] = 1;
    member_groups.push_back(static_cast<int>(g));
    if (next_to_root[g]) {
      any_next_to_root = true;
      continue;
    }
    best = std::max(best, root_part + member_part[g]);
  }
  if (!reduce && !any_next_to_root && !member_groups.empty())
    best = std::max(best, relayed_bound(t, group_of, root_group, out_of_root, offsets,
                                        member_groups, member_part, root_part, bytes));
  return best;
}

// Members whose contributions the All-Reduce argument follows out: one where every NPU looks the
// same, every member up to 1,024 of them, else those with the least capacity out (the largest
// root part), at most 64: any set of pairs gives a valid bound.
std::vector<NpuId> all_reduce_sources(const Topology& t, const Collective& c) {
  const std::vector<NpuId>& members = c.members();
  if (static_cast<int>(members.size()) == t.npus() && npus_are_all_alike(t)) return {members[0]};
  if (members.size() <= 1024) return members;
  std::vector<std::pair<double, NpuId>> by_capacity;
  for (const NpuId m : members) {
    const Side s = side_of(t, t.out_links(m));
    if (s.links > 0) by_capacity.push_back({-s.links * s.bytes_per_s, m});
  }
  std::sort(by_capacity.begin(), by_capacity.end());
  std::vector<NpuId> sources;
  for (const auto& [negative_capacity, m] : by_capacity) {
    if (negative_capacity != by_capacity.front().first || sources.size() == 64) break;
    sources.push_back(m);
  }
  return sources;
}

double all_reduce_bound_seconds(const Topology& t, const Collective& c, double bytes) {
  const std::vector<NpuId>& members = c.members();
  std::vector<double> into(static_cast<std::size_t>(t.npus()), 0);  // w's part, per member
  std::vector<double> largest_in(static_cast<std::size_t>(t.npus()), 0);
  for (const NpuId w : members) {
    const Side s = side_of(t, t.in_links(w));
    if (s.links == 0) return 0;
    into[static_cast<std::size_t>(w)] = side_seconds(s, bytes);
    largest_in[static_cast<std::size_t>(w)] = s.largest_latency_s;
  }
  // Sources by their own part, largest first; one whose part plus the largest member's and the
  // longest latency any pair can have (through the first source, both ways) cannot pass the
  // best so far needs no search (on a mesh only the corners are searched).
  struct Source {
    double part;
    NpuId npu;
    double largest_latency_s;  // of its links out
  };
  std::vector<Source> sources;
  for (const NpuId a : all_reduce_sources(t, c)) {
    const Side at_a = side_of(t, t.out_links(a));
    if (at_a.links == 0) return 0;
    sources.push_back({side_seconds(at_a, bytes), a, at_a.largest_latency_s});
  }
  std::sort(sources.begin(), sources.end(), [](const Source& x, const Source& y) {
    return std::pair(x.part, x.npu) > std::pair(y.part, y.npu);
  });
  if (sources.empty()) return 0;
  Latencies latencies(t);
  const NpuId hub = sources.front().npu;
  const double largest_part = *std::max_element(into.begin(), into.end());
  // Without a path through the hub for some member, no source is skipped.
  double to_hub = 0, from_hub = 0;
  for (const bool forward : {true, false}) {
    const std::vector<Time>& d = forward ? latencies.from(hub) : latencies.to(hub);
    double& longest = forward ? from_hub : to_hub;
    for (const NpuId m : members)
      longest =
          d[static_cast<std::size_t>(m)] == kUnreachable
              ? std::numeric_limits<double>::infinity()
              : std::max(longest, static_cast<double>(d[static_cast<std::size_t>(m)]) * 1e-12);
  }
  double best = 0;
  for (const Source& source : sources) {
    const double root_part = source.part;
    const NpuId a = source.npu;
    if (root_part + largest_part + to_hub + from_hub <= best) continue;
    const std::vector<int> hops = hops_from(t, a);
    const std::vector<Time>& latency = latencies.from(a);
    for (const NpuId w : members) {
      const auto i = static_cast<std::size_t>(w);
      if (w == a || hops[i] < 2) continue;
      const double delta = std::max(
          0.0, static_cast<double>(latency[i]) * 1e-12 - source.largest_latency_s - largest_in[i]);
      best = std::max(best, delta + root_part + into[i]);
    }
  }
  return best;
}

}  // namespace

double rooted_relay_bound_seconds(const Topology& t, const Collective& c) {
  const CollectiveKind kind = c.kind();
  const double bytes = static_cast<double>(c.chunk_bytes()) * c.num_chunks();
  if (kind == CollectiveKind::kAllReduce) {
    const double buffer = static_cast<double>(c.chunk_bytes()) * c.chunks_per_buffer();
    return t.switches() > 0 ? 0 : all_reduce_bound_seconds(t, c, buffer) * (1 - 1e-12);
  }
  if (kind != CollectiveKind::kBroadcast && kind != CollectiveKind::kReduce) return 0;
  const bool reduce = kind == CollectiveKind::kReduce;
  double best = 0;
  if (t.switches() > 0) {
    // A multicast switch starts several messages from one, a reducing one combines partial
    // sums of its own: neither is the relay the argument counts.
    for (DeviceId d = t.npus(); d < t.devices(); ++d)
      if (t.is_multicast(d) || t.is_reducing(d)) return 0;
    Latencies latencies(t);
    for (const double threshold : grouping_thresholds(t, 64))
      best = std::max(best, grouped_bound(t, c, reduce, bytes, threshold, latencies));
    // Floating-point sums: err towards a smaller bound.
    return best * (1 - 1e-12);
  }
  const NpuId root = c.root();
  // Hops and least latency from the root along the links (Broadcast) or against them (Reduce).
  const std::vector<int> hops = hops_from(t, root, !reduce);
  Latencies latencies(t);
  const std::vector<Time>& latency = reduce ? latencies.to(root) : latencies.from(root);
  const Side at_root = side_of(t, reduce ? t.in_links(root) : t.out_links(root));
  if (at_root.links == 0) return 0;
  const double root_part = side_seconds(at_root, bytes);
  for (const NpuId w : c.members()) {
    if (w == root || hops[w] < 2) continue;
    const Side at_w = side_of(t, reduce ? t.out_links(w) : t.in_links(w));
    const double delta = std::max(0.0, static_cast<double>(latency[w]) * 1e-12 -
                                           at_root.largest_latency_s - at_w.largest_latency_s);
    best = std::max(best, delta + root_part + side_seconds(at_w, bytes));
  }
  return best * (1 - 1e-12);
}

}  // namespace tacos::bounds_detail
