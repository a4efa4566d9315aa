#pragma once
// Internal: cut bounds over device sets with Boost.Graph max-flow.
//
// A FlowGraph is the topology as plain weighted arcs (bandwidth in GB/s), optionally reversed
// (arc u -> v becomes v -> u: a bound on data leaving sets becomes one on data entering them).
// Every bound here has the form  max over S of data(S) / B_in(S)  where B_in(S) is the
// bandwidth of the arcs entering S; data is in GiB (2^30 bytes), so the ratio is in seconds.
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "tacos/topology/topology.h"

namespace tacos::bounds_detail {

struct Arc {
  int src = 0;
  int dst = 0;
  double bandwidth_gbps = 0;
};

struct FlowGraph {
  int vertices = 0;
  std::vector<Arc> arcs;
  std::vector<std::vector<int>> in_arcs;   // arc ids entering each vertex
  std::vector<std::vector<int>> out_arcs;  // arc ids leaving each vertex
};

FlowGraph make_flow_graph(const Topology& topology, bool reversed);

// Bandwidth of the arcs entering S (in_set[v] != 0).
double in_bandwidth(const FlowGraph& g, const std::vector<char>& in_set);

// A reusable s-t minimum cut on the graph plus a super source (sigma) and super sink (tau) with
// an arc sigma -> v and v -> tau for every vertex (Boykov-Kolmogorov max-flow).
class MinCut {
 public:
  enum class Algorithm { kBoykovKolmogorov, kPushRelabel };
  explicit MinCut(const FlowGraph& graph);
  ~MinCut();
  MinCut(const MinCut&) = delete;
  MinCut& operator=(const MinCut&) = delete;

  // Graph arc a gets capacity arc_scale * bandwidth(a); sigma -> v gets source_cap[v] and
  // v -> tau gets sink_cap[v] (a negative value means "infinite": the vertex is forced to that
  // side). Returns the sink side of a minimum cut (vertices not reachable from sigma in the
  // residual graph), indexed by graph vertex.
  std::vector<char> solve(double arc_scale, std::span<const double> source_cap,
                          std::span<const double> sink_cap, Algorithm algorithm);

 private:
  struct Impl;
  const FlowGraph& graph_;
  std::unique_ptr<Impl> impl_;
};

// Per-arc loads of routing supply[v] from every vertex to `sink` along hop-shortest paths,
// split over next hops in proportion to bandwidth; nullopt when some supply cannot reach it.
std::optional<std::vector<double>> shortest_path_loads(const FlowGraph& g,
                                                       std::span<const double> supply, int sink);

// True when a flow of `amount` GB/s from root to every sink (one at a time) provably exists
// (two-stage routing: spread over the sinks, then collect; loads within bandwidth up to a 1e-9
// relative slack). False means "not shown", not "no such flow".
bool certify_rooted_connectivity(const FlowGraph& g, const FlowGraph& reversed, int root,
                                 std::span<const int> sinks, double amount);

struct CutResult {
  double ratio = 0;          // seconds
  std::vector<char> in_set;  // the maximizing S (empty when nothing needs to move)
};

// max over S with S ∩ anchors != {} of weight(V \ S) / B_in(S), exactly (up to floating-point
// rounding). weight is in GiB per vertex (>= 0). Throws Error when some such S with positive
// data has no bandwidth entering it.
CutResult max_closure_ratio(const FlowGraph& g, MinCut& cut, std::span<const double> weight,
                            std::span<const int> anchors);

// min B_in(S) over S with fixed_in vertices inside and fixed_out vertices outside (the others
// free): one max-flow.
std::vector<char> min_in_cut(const FlowGraph& g, MinCut& cut, std::span<const int> fixed_in,
                             std::span<const int> fixed_out);

}  // namespace tacos::bounds_detail
