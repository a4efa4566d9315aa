#pragma once
#include <string>

#include "tacos/topology/topology.h"

namespace tacos {

struct TopologySummary {
  int npus = 0;
  int switches = 0;
  int multicast_switches = 0;  // switches declared multicast
  int reducing_switches = 0;   // switches declared reducing (in-network reduction)
  int links = 0;               // directed links
  int min_degree = 0;          // out-degree over all devices
  int max_degree = 0;
  int diameter_hops = 0;         // over NPU pairs, switches relay
  Time diameter_latency_ps = 0;  // largest shortest-path latency over NPU pairs
  double min_ingress_gbps = 0;   // per-NPU sum of in-link bandwidth
  double max_ingress_gbps = 0;
  bool connected = false;  // NPUs strongly connected
};

// Exact: one BFS and one Dijkstra per NPU (O(N * E log E)).
TopologySummary describe_topology(const Topology& topology);

}  // namespace tacos
