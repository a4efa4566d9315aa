#include "cut_bound.h"

#include <algorithm>
// GCC 12 reports a false -Wmaybe-uninitialized inside Boost.Graph's edge iterator (a
// boost::optional member), instantiated by the max-flow's edge loop; silence it for Boost only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#pragma GCC diagnostic pop
#include <deque>
#include <numeric>
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
        boost::edge_capacity_t, double,
        boost::property<boost::edge_residual_capacity_t, double,
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
    boost::put(boost::edge_capacity, g, e, 0.0);
    boost::put(boost::edge_capacity, g, r, 0.0);
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
                                std::span<const double> sink_cap) {
  Impl& m = *impl_;
  const int n = graph_.vertices;
  // "Infinite" arcs get more than every finite arc together, so no minimum cut contains one.
  double finite = 0;
  for (const Arc& a : graph_.arcs) finite += arc_scale * a.bandwidth_gbps;
  for (int v = 0; v < n; ++v) {
    if (source_cap[v] > 0) finite += source_cap[v];
    if (sink_cap[v] > 0) finite += sink_cap[v];
  }
  const double infinite = 2 * finite + 1;
  auto cap = boost::get(boost::edge_capacity, m.g);
  for (std::size_t i = 0; i < graph_.arcs.size(); ++i)
    cap[m.arc_edges[i]] = arc_scale * graph_.arcs[i].bandwidth_gbps;
  for (int v = 0; v < n; ++v) {
    cap[m.source_edges[v]] = source_cap[v] < 0 ? infinite : source_cap[v];
    cap[m.sink_edges[v]] = sink_cap[v] < 0 ? infinite : sink_cap[v];
  }
  boost::boykov_kolmogorov_max_flow(
      m.g, cap, boost::get(boost::edge_residual_capacity, m.g),
      boost::get(boost::edge_reverse, m.g), boost::get(boost::vertex_predecessor, m.g),
      boost::get(boost::vertex_color, m.g), boost::get(boost::vertex_distance, m.g),
      boost::get(boost::vertex_index, m.g), m.sigma, m.tau);

  // The source side: vertices reachable from sigma through arcs with residual capacity left.
  const double eps = 1e-12 * finite;
  auto residual = boost::get(boost::edge_residual_capacity, m.g);
  std::vector<char> reached(n + 2, 0);
  std::deque<int> queue{m.sigma};
  reached[m.sigma] = 1;
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    for (auto [it, end] = boost::out_edges(u, m.g); it != end; ++it) {
      const int v = static_cast<int>(boost::target(*it, m.g));
      if (!reached[v] && residual[*it] > eps) {
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
// is always a valid bound, and after the last anchor it is the maximum over all sets (up to the
// 1e-12 relative tolerance of the floating-point flow). Each step moves to a strictly better
// set among finitely many, so it terminates; in practice one or two max-flows per anchor,
// because t starts at the best single-vertex set.
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
      throw Error("bound: a set of devices containing " + std::string(anchor < 0 ? "" : "device ") +
                  std::to_string(anchor) +
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
  for (const auto& [ignored, a] : order) {
    sink_cap[a] = -1;  // infinite: a is in S
    for (int step = 0; step < 1000; ++step) {
      std::vector<char> s = cut.solve(best.ratio, source_cap, sink_cap);
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
  std::vector<char> s = cut.solve(1.0, source_cap, sink_cap);
  for (int v : fixed_in) s[v] = 1;
  for (int v : fixed_out) s[v] = 0;
  return s;
}

}  // namespace tacos::bounds_detail
