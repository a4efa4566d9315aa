#include "cut_bound.h"

#include <algorithm>
// GCC 12 reports a false -Wmaybe-uninitialized inside Boost.Graph's edge iterator (a
// boost::optional member), instantiated by the max-flow's edge loop; silence it for Boost only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#pragma GCC diagnostic pop
#include <cmath>
#include <deque>
#include <numeric>
#include <optional>
#include <string>

#include "tacos/common/error.h"

namespace tacos::bounds_detail {

FlowGraph make_flow_graph(const Topology& topology, bool reversed) {
  FlowGraph g;
  g.vertices = topology.devices();
  g.in_arcs.resize(g.vertices);
  g.out_arcs.resize(g.vertices);
  g.arcs.reserve(topology.links().size());
  for (const Link& l : topology.links()) {
    Arc a{l.src, l.dst, l.bandwidth_gbps};
    if (reversed) std::swap(a.src, a.dst);
    const int id = static_cast<int>(g.arcs.size());
    g.arcs.push_back(a);
    g.out_arcs[a.src].push_back(id);
    g.in_arcs[a.dst].push_back(id);
  }
  return g;
}

double in_bandwidth(const FlowGraph& g, const std::vector<char>& in_set) {
  double sum = 0;
  for (const Arc& a : g.arcs)
    if (!in_set[a.src] && in_set[a.dst]) sum += a.bandwidth_gbps;
  return sum;
}

// ---------------------------------------------------------------------------------------------
// Boost.Graph Boykov-Kolmogorov max-flow on (graph + sigma + tau), built once, re-solved with
// new capacities.

namespace {
using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using BGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS,
    boost::property<
        boost::vertex_color_t, boost::default_color_type,
        boost::property<boost::vertex_distance_t, long,
                        boost::property<boost::vertex_predecessor_t, Traits::edge_descriptor>>>,
    boost::property<
        boost::edge_capacity_t, long long,
        boost::property<boost::edge_residual_capacity_t, long long,
                        boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
using Edge = Traits::edge_descriptor;
}  // namespace

struct MinCut::Impl {
  BGraph g;
  int sigma = 0;
  int tau = 0;
  std::vector<Edge> arc_edges;     // graph arc -> forward edge
  std::vector<Edge> source_edges;  // vertex -> sigma -> v
  std::vector<Edge> sink_edges;    // vertex -> v -> tau

  Edge add(int u, int v) {
    const Edge e = boost::add_edge(u, v, g).first;
    const Edge r = boost::add_edge(v, u, g).first;
    boost::put(boost::edge_reverse, g, e, r);
    boost::put(boost::edge_reverse, g, r, e);
    boost::put(boost::edge_capacity, g, e, 0LL);
    boost::put(boost::edge_capacity, g, r, 0LL);
    return e;
  }
};

MinCut::MinCut(const FlowGraph& graph) : graph_(graph), impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  const int n = graph.vertices;
  m.g = BGraph(n + 2);
  m.sigma = n;
  m.tau = n + 1;
  m.arc_edges.reserve(graph.arcs.size());
  for (const Arc& a : graph.arcs) m.arc_edges.push_back(m.add(a.src, a.dst));
  for (int v = 0; v < n; ++v) m.source_edges.push_back(m.add(m.sigma, v));
  for (int v = 0; v < n; ++v) m.sink_edges.push_back(m.add(v, m.tau));
}

MinCut::~MinCut() = default;

std::vector<char> MinCut::solve(double arc_scale, std::span<const double> source_cap,
                                std::span<const double> sink_cap, Algorithm algorithm) {
  Impl& m = *impl_;
  const int n = graph_.vertices;
  // Capacities become integers (integer flows keep both max-flow algorithms free of
  // floating-point excess and termination trouble). "Infinite" arcs only have to exceed every
  // cut made of finite arcs, whose capacity is at most F, the sum of all finite capacities (as
  // long as no vertex is forced to both sides, some such cut exists): they get F + 1. The flow
  // algorithms then add capacities up, push-relabel all of the source's at once, so the total
  // of every arc, F + k (F + 1) for k infinite arcs, must stay inside 64 bits: finite
  // capacities are scaled by a power of two so that F <= 2^61 / (k + 2) (and at most 2^52, the
  // precision of a double, relative rounding 2^-53 per arc). Overflowing that sum was
  // undefined behaviour inside Boost (all-to-all bounds, with many forced vertices).
  double finite = 0;
  int infinite_arcs = 0;
  for (const Arc& a : graph_.arcs) finite += arc_scale * a.bandwidth_gbps;
  for (int v = 0; v < n; ++v) {
    for (const double c : {source_cap[v], sink_cap[v]}) {
      if (c > 0) finite += c;
      if (c < 0) ++infinite_arcs;
    }
  }
  const int budget_bits =
      std::min(52, 61 - static_cast<int>(std::ceil(std::log2(infinite_arcs + 2.0))));
  const double scale = finite > 0 ? std::ldexp(1.0, budget_bits - std::ilogb(finite) - 1) : 1.0;
  // Each rounded capacity is at most its scaled value + 0.5: F stays below 2^budget_bits plus
  // half a unit per arc.
  long long finite_total = 0;
  auto rounded = [scale](double x) { return std::llround(x * scale); };
  for (const Arc& a : graph_.arcs) finite_total += rounded(arc_scale * a.bandwidth_gbps);
  for (int v = 0; v < n; ++v) {
    if (source_cap[v] > 0) finite_total += rounded(source_cap[v]);
    if (sink_cap[v] > 0) finite_total += rounded(sink_cap[v]);
  }
  const long long infinite = finite_total + 1;
  auto integer = [&](double x) { return x < 0 ? infinite : rounded(x); };
  auto cap = boost::get(boost::edge_capacity, m.g);
  for (std::size_t i = 0; i < graph_.arcs.size(); ++i)
    cap[m.arc_edges[i]] = integer(arc_scale * graph_.arcs[i].bandwidth_gbps);
  for (int v = 0; v < n; ++v) {
    cap[m.source_edges[v]] = integer(source_cap[v]);
    cap[m.sink_edges[v]] = integer(sink_cap[v]);
  }
  auto residual = boost::get(boost::edge_residual_capacity, m.g);
  auto reverse = boost::get(boost::edge_reverse, m.g);
  auto index = boost::get(boost::vertex_index, m.g);
  // Push-relabel is several times faster when many vertices have supply (one augmenting path
  // each for Boykov-Kolmogorov); Boykov-Kolmogorov wins for a single source.
  if (algorithm == Algorithm::kPushRelabel) {
    boost::push_relabel_max_flow(m.g, m.sigma, m.tau, cap, residual, reverse, index);
  } else {
    boost::boykov_kolmogorov_max_flow(
        m.g, cap, residual, reverse, boost::get(boost::vertex_predecessor, m.g),
        boost::get(boost::vertex_color, m.g), boost::get(boost::vertex_distance, m.g), index,
        m.sigma, m.tau);
  }

  // The source side: vertices reachable from sigma through arcs with residual capacity left.
  std::vector<char> reached(n + 2, 0);
  std::deque<int> queue{m.sigma};
  reached[m.sigma] = 1;
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    for (auto [it, end] = boost::out_edges(u, m.g); it != end; ++it) {
      const int v = static_cast<int>(boost::target(*it, m.g));
      if (!reached[v] && residual[*it] > 0) {
        reached[v] = 1;
        queue.push_back(v);
      }
    }
  }
  std::vector<char> sink_side(n);
  for (int v = 0; v < n; ++v) sink_side[v] = !reached[v];
  return sink_side;
}

// ---------------------------------------------------------------------------------------------
// Cheap flow certificates (no max-flow): route every supply to the sink along hop-shortest
// paths, splitting at each vertex over its next hops in proportion to their bandwidth. Any
// feasible flow of the full supply proves that no cut is smaller, so when the loads fit the
// capacities the max-flow can be skipped; when they do not, the caller runs the max-flow.

std::optional<std::vector<double>> shortest_path_loads(const FlowGraph& g,
                                                       std::span<const double> supply, int sink) {
  const int n = g.vertices;
  std::vector<int> hops(n, -1);
  std::vector<int> order{sink};
  hops[sink] = 0;
  for (std::size_t head = 0; head < order.size(); ++head) {
    const int v = order[head];
    for (int id : g.in_arcs[v]) {
      const int u = g.arcs[id].src;
      if (hops[u] < 0) {
        hops[u] = hops[v] + 1;
        order.push_back(u);
      }
    }
  }
  for (int v = 0; v < n; ++v)
    if (supply[v] > 0 && hops[v] < 0) return std::nullopt;
  std::vector<double> through(supply.begin(), supply.end());
  std::vector<double> load(g.arcs.size(), 0.0);
  for (std::size_t i = order.size(); i-- > 1;) {  // farthest first; the sink (order[0]) last
    const int v = order[i];
    if (through[v] <= 0) continue;
    double bw = 0;
    for (int id : g.out_arcs[v])
      if (hops[g.arcs[id].dst] == hops[v] - 1) bw += g.arcs[id].bandwidth_gbps;
    for (int id : g.out_arcs[v]) {
      const Arc& a = g.arcs[id];
      if (hops[a.dst] != hops[v] - 1) continue;
      const double f = through[v] * a.bandwidth_gbps / bw;
      load[id] += f;
      through[a.dst] += f;
    }
  }
  return load;
}

namespace {
constexpr double kCertificateSlack = 1e-9;

bool fits(const FlowGraph& g, const std::vector<double>& load, double scale) {
  for (std::size_t i = 0; i < load.size(); ++i)
    if (load[i] > scale * g.arcs[i].bandwidth_gbps * (1 + kCertificateSlack)) return false;
  return true;
}
}  // namespace

bool certify_rooted_connectivity(const FlowGraph& g, const FlowGraph& reversed, int root,
                                 std::span<const int> sinks, double amount) {
  // Stage 1 spreads `amount` from the root evenly over the sinks (a convergecast to the root
  // on the reversed graph, read backwards); stage 2 collects the shares at one sink. Together
  // they route `amount` from the root to that sink.
  const int n = g.vertices;
  const double share = amount / static_cast<double>(sinks.size());
  std::vector<double> supply(n, 0.0);
  for (int v : sinks) supply[v] = share;
  supply[root] = 0;
  const auto spread = shortest_path_loads(reversed, supply, root);
  if (!spread) return false;
  for (int sink : sinks) {
    if (sink == root) continue;
    std::vector<double> stage2 = supply;
    stage2[root] = share;
    stage2[sink] = 0;
    auto load = shortest_path_loads(g, stage2, sink);
    if (!load) return false;
    for (std::size_t i = 0; i < load->size(); ++i) (*load)[i] += (*spread)[i];
    if (!fits(g, *load, 1.0)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Exact max over S of weight(V \ S) / B_in(S), S meeting the anchors.
//
// Why this is exact. Let N(S) = W - w(S) (W = total weight) and D(S) = B_in(S). For t >= 0,
// max_S N(S)/D(S) > t  iff  some S has N(S) - t D(S) > 0  iff  min_S [t D(S) + w(S)] < W.
// Split the sets by one anchor a they contain. min over S containing a of t D(S) + w(S) is an
// s-t minimum cut: sigma -> v with capacity w(v), u -> v with t * bandwidth, a -> tau infinite,
// and S = the sink side. The cut arcs are exactly sigma -> v for v in S (w(S)) and the graph
// arcs entering S (t D(S)); a -> tau forces a into S. So one max-flow decides whether a set
// containing a beats t, and returns the best such set (the one maximizing N - tD), whose own
// ratio is then > t. Dinkelbach's iteration: set t to that ratio and repeat until the cut
// finds nothing better, then go to the next anchor. t only grows, so a "nothing beats t" answer
// for an earlier anchor stays true; every value of t is the ratio of a real set, so the result
// is always a valid bound, and after the last anchor it is the maximum over all sets. Each step
// moves to a strictly better set among finitely many, so it terminates; t starts at the best
// single-vertex set, so usually each anchor needs one check. That check is first tried without
// a max-flow: if the shortest-path routing of every supply into a fits the capacities t * bw,
// that flow saturates every sigma arc, so every cut around a set containing a is >= W.
// Precision: capacities are rounded to integers (2^-52 relative) and certificates may exceed
// capacities by 1e-9 relative, so a set better by less than about 1e-9 could be missed.
CutResult max_closure_ratio(const FlowGraph& g, MinCut& cut, std::span<const double> weight,
                            std::span<const int> anchors) {
  const int n = g.vertices;
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  CutResult best;
  auto evaluate = [&](const std::vector<char>& s, int anchor) -> double {
    double inside = 0;
    for (int v = 0; v < n; ++v)
      if (s[v]) inside += weight[v];
    const double data = total - inside;
    const double bw = in_bandwidth(g, s);
    if (data <= 1e-15 * total) return 0;
    if (bw <= 0)
      throw Error("bound: a set of devices containing device " + std::to_string(anchor) +
                  " needs data but no link enters it (the topology is not connected)");
    return data / bw;
  };

  // Start from the best single-vertex set; try the most promising anchors first.
  std::vector<std::pair<double, int>> order;
  for (int a : anchors) {
    std::vector<char> s(n, 0);
    s[a] = 1;
    const double r = evaluate(s, a);
    order.emplace_back(r, a);
    if (r > best.ratio) best = CutResult{r, s};
  }
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });

  std::vector<double> source_cap(weight.begin(), weight.end());
  std::vector<double> sink_cap(n, 0.0);
  int supplied = 0;
  for (double x : weight) supplied += x > 0;
  const auto algorithm =
      supplied > 1 ? MinCut::Algorithm::kPushRelabel : MinCut::Algorithm::kBoykovKolmogorov;
  for (const auto& [ignored, a] : order) {
    sink_cap[a] = -1;  // infinite: a is in S
    for (int step = 0; step < 1000; ++step) {
      // The supply of every vertex but a fits into a at rate t: nothing containing a beats t.
      std::vector<double> supply(weight.begin(), weight.end());
      supply[a] = 0;
      const auto load = shortest_path_loads(g, supply, a);
      if (load && best.ratio > 0 && fits(g, *load, best.ratio)) break;
      std::vector<char> s = cut.solve(best.ratio, source_cap, sink_cap, algorithm);
      s[a] = 1;
      const double r = evaluate(s, a);
      if (!(r > best.ratio * (1 + 1e-12))) break;
      best = CutResult{r, std::move(s)};
    }
    sink_cap[a] = 0;
  }
  return best;
}

std::vector<char> min_in_cut(const FlowGraph& g, MinCut& cut, std::span<const int> fixed_in,
                             std::span<const int> fixed_out) {
  std::vector<double> source_cap(g.vertices, 0.0), sink_cap(g.vertices, 0.0);
  for (int v : fixed_out) source_cap[v] = -1;
  for (int v : fixed_in) sink_cap[v] = -1;
  std::vector<char> s = cut.solve(1.0, source_cap, sink_cap, MinCut::Algorithm::kPushRelabel);
  for (int v : fixed_in) s[v] = 1;
  for (int v : fixed_out) s[v] = 0;
  return s;
}

}  // namespace tacos::bounds_detail
