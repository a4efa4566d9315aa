// The store-and-forward bound of All-Gather (and, backwards, Reduce-Scatter) on networks of NPUs
// alone, under the tacos link model: every message holds its link for latency + bytes /
// bandwidth, and an NPU sends a byte on only once the whole message that brought it has arrived.
//
// An NPU v must take in every byte it lacks over its links in. A link u -> v carries only bytes
// u held when each message started, and u holds at most its own bytes plus what its other links
// in can have brought (each at most its bandwidth x (t - its latency); bytes from v are not new
// to v). So a link's first message is small, the next can only be as large as u has gathered
// meanwhile, and a few large messages near the end must wait for u: the link needs several
// messages, a latency each, beyond its share of the bytes. With G_m(t) the most seconds of
// bytes m messages can have delivered by t and H(t) what u holds,
//   G_m(t) = max over the last message's start s <= t - L of min(G_{m-1}(s) + t - L - s, H(s)),
// G_0 = 0 (the messages before end by s; the last carries the rest of what u held at s); the
// link delivers at most max_m G_m(t) by t, and for m beyond those computed at most
// min(t - m L, H(t - L)). The bound for v is the least T at which its links in together can
// deliver what v lacks; the bound is the largest over NPUs. torus2d:64x64 All-Gather at 64 MiB
// (312.42 us of bytes per link, 0.5 us latency): six messages per link, 315.73 us.
//
// Reduce-Scatter is the same argument on the reversed links: a Reduce-Scatter run backwards is an
// All-Gather (each partial sum's message, reversed, carries the shard it feeds).
#include "link_fill_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "tacos/common/units.h"

namespace tacos::bounds_detail {
namespace {

constexpr int kGridPoints = 1 << 17;
// Message counts computed per link; beyond, the envelope min(t - m L, H(t - L)).
constexpr int kMostMessages = 64;
// Kinds of link (latency, bandwidth, what its sender can gather) computed per bound; NPUs whose
// links need more are skipped (the bound is the largest over the NPUs it reads).
constexpr std::size_t kMostLinkKinds = 64;
// Beyond its bytes, a link's time is searched up to this many of the largest latency.
constexpr double kLatenciesSearched = 128;

double seconds(Time ps) { return static_cast<double>(ps) * 1e-12; }

}  // namespace

std::vector<double> link_fill_capacity(double latency, double step, int points,
                                       const std::function<double(double)>& holds) {
  const auto n = static_cast<std::size_t>(points);
  std::vector<double> best(n, 0);
  if (latency <= 0) {
    for (std::size_t i = 0; i < n; ++i) {
      const double t = static_cast<double>(i) * step;
      best[i] = std::min(t, holds(t));
    }
    return best;
  }
  // holds at the next grid time: over [grid[i], grid[i+1]] the sender holds at most that.
  std::vector<double> next_holds(n), lagged_holds(n), prev(n, 0), cur(n), p_hat(n), key(n);
  for (std::size_t i = 0; i < n; ++i) {
    next_holds[i] = holds(static_cast<double>(i + 1) * step);
    lagged_holds[i] = holds(std::max(0.0, static_cast<double>(i) * step - latency));
  }
  bool all_counted = false;
  int m = 1;
  for (; m <= kMostMessages && !all_counted; ++m) {
    // G(s) - s does not increase with s (a message cut short by d delivers d less), so for
    // s in [grid[i], grid[i+1]] min(G(s) + t - L - s, H(s)) <= min(p_hat[i] + t - L, H(grid[i+1]))
    // with p_hat the largest G - s from i on; the first term falls with i, the second rises.
    double run = -std::numeric_limits<double>::infinity();
    for (std::size_t i = n; i-- > 0;) {
      run = std::max(run, prev[i] - static_cast<double>(i) * step);
      p_hat[i] = run;
      key[i] = next_holds[i] - p_hat[i];
    }
    std::size_t lim = 0, first = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double t = static_cast<double>(j) * step;
      const double free_by = t - latency;  // the last message starts by then
      // Starts at grid[i] <= free_by (with a hair of slack: more candidates only raise it).
      while (lim < n && static_cast<double>(lim) * step <= free_by + 1e-9 * step) ++lim;
      while (first < n && key[first] <= free_by) ++first;
      const std::size_t crossing = std::min(lim, first);
      double value = 0;
      if (crossing >= 1) value = next_holds[crossing - 1];
      if (crossing < lim) value = std::max(value, p_hat[crossing] + free_by);
      cur[j] = std::max(value, j > 0 ? cur[j - 1] : 0.0);
    }
    all_counted = true;
    for (std::size_t j = 0; j < n; ++j) {
      best[j] = std::max(best[j], cur[j]);
      const double t = static_cast<double>(j) * step;
      const double more = std::min(t - (m + 1) * latency, lagged_holds[j]);
      if (more > best[j]) all_counted = false;
    }
    prev.swap(cur);
  }
  if (!all_counted)
    for (std::size_t j = 0; j < n; ++j) {
      const double t = static_cast<double>(j) * step;
      best[j] = std::max(best[j], std::min(t - m * latency, lagged_holds[j]));
    }
  return best;
}

double link_fill_bound_seconds(const Topology& t, const Collective& c) {
  const CollectiveKind kind = c.kind();
  if (kind != CollectiveKind::kAllGather && kind != CollectiveKind::kReduceScatter) return 0;
  if (t.switches() > 0) return 0;
  // Reduce-Scatter: the All-Gather on the reversed links, each NPU starting with its shard.
  const bool reversed = kind == CollectiveKind::kReduceScatter;
  const auto npus = static_cast<std::size_t>(t.npus());
  const double chunk = static_cast<double>(c.chunk_bytes());
  std::vector<double> own(npus, 0), need(npus, 0);
  for (ChunkId k = 0; k < c.num_chunks(); ++k) {
    const auto starts = reversed ? c.destinations(k) : c.sources(k);
    const auto ends = reversed ? c.sources(k) : c.destinations(k);
    for (const NpuId u : starts) own[static_cast<std::size_t>(u)] += chunk;
    for (const NpuId v : ends)
      if (std::find(starts.begin(), starts.end(), v) == starts.end())
        need[static_cast<std::size_t>(v)] += chunk;
  }
  auto into = [&](NpuId v) { return reversed ? t.out_links(v) : t.in_links(v); };
  auto sender = [&](LinkId id) { return reversed ? t.link(id).dst : t.link(id).src; };
  auto bytes_per_s = [&](LinkId id) { return t.link(id).bandwidth_gbps * kBytesPerGB; };

  // Slowest NPUs first by their bytes alone; the grid reaches past the slowest by latencies.
  std::vector<std::pair<double, NpuId>> order;
  double largest_latency = 0;
  for (LinkId id = 0; id < t.num_links(); ++id)
    largest_latency = std::max(largest_latency, seconds(t.link(id).latency_ps));
  for (NpuId v = 0; v < t.npus(); ++v) {
    if (need[static_cast<std::size_t>(v)] <= 0) continue;
    double rate = 0;
    for (const LinkId id : into(v)) rate += bytes_per_s(id);
    if (rate <= 0) return 0;  // unreachable: the cut bound says so
    order.emplace_back(need[static_cast<std::size_t>(v)] / rate, v);
  }
  if (order.empty()) return 0;
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  const double horizon = order.front().first + kLatenciesSearched * largest_latency;
  const double step = horizon / (kGridPoints - 1);

  // A link's kind: its latency and bandwidth, its sender's bytes and links in (not from v), and
  // what v lacks (no sender holds more of it).
  using Feed = std::pair<Time, double>;
  using Kind = std::tuple<Time, double, double, std::vector<Feed>, double>;
  std::map<Kind, std::vector<double>> capacity;  // bytes by each grid time
  auto kind_of = [&](LinkId id, NpuId v) {
    const NpuId u = sender(id);
    std::vector<Feed> feeds;
    for (const LinkId f : into(u))
      if (sender(f) != v) feeds.emplace_back(t.link(f).latency_ps, bytes_per_s(f));
    std::sort(feeds.begin(), feeds.end());
    return Kind{t.link(id).latency_ps, bytes_per_s(id), own[static_cast<std::size_t>(u)],
                std::move(feeds), need[static_cast<std::size_t>(v)]};
  };
  auto compute = [&](const Kind& k) {
    // Named: clang before 16 cannot capture structured bindings in a lambda.
    const Time latency_ps = std::get<0>(k);
    const double rate = std::get<1>(k), own_bytes = std::get<2>(k), lacks = std::get<4>(k);
    const std::vector<Feed>& feeds = std::get<3>(k);
    auto holds = [&](double time) {  // seconds of this link's bytes
      double bytes = own_bytes;
      for (const auto& [feed_latency, feed_rate] : feeds)
        bytes += feed_rate * std::max(0.0, time - seconds(feed_latency));
      return std::min(bytes, lacks) / rate;
    };
    std::vector<double> cap = link_fill_capacity(seconds(latency_ps), step, kGridPoints, holds);
    for (double& x : cap) x *= rate;
    return cap;
  };

  double best = 0;
  bool read_one = false;
  std::set<std::vector<Kind>> read;  // NPUs alike (every NPU of a torus) are read once
  for (const auto& [fluid, v] : order) {
    std::vector<Kind> kinds;
    std::size_t missing = 0;
    for (const LinkId id : into(v)) {
      kinds.push_back(kind_of(id, v));
      if (!capacity.count(kinds.back())) ++missing;
    }
    if (read_one && capacity.size() + missing > kMostLinkKinds) continue;
    read_one = true;
    std::sort(kinds.begin(), kinds.end());
    if (!read.insert(kinds).second) continue;
    std::vector<const std::vector<double>*> caps;
    for (const Kind& k : kinds) {
      auto it = capacity.find(k);
      if (it == capacity.end()) it = capacity.emplace(k, compute(k)).first;
      caps.push_back(&it->second);
    }
    // The first grid time by which v's links in can have delivered what it lacks (each
    // capacity grows with time, so their sum does); any earlier time falls short, so the
    // collective takes longer than the grid time before it.
    const double lacks = need[static_cast<std::size_t>(v)];
    auto short_of = [&](std::size_t j) {
      double total = 0;
      for (const auto* cap : caps) total += (*cap)[j];
      return total < lacks;
    };
    std::size_t lo = 0, hi = kGridPoints;  // short_of holds below lo, fails from hi on
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (short_of(mid))
        lo = mid + 1;
      else
        hi = mid;
    }
    const double bound_v = lo == 0 ? 0 : static_cast<double>(lo - 1) * step;
    best = std::max(best, bound_v);
  }
  // Floating-point sums: err towards a smaller bound.
  return best * (1 - 1e-12);
}

}  // namespace tacos::bounds_detail
