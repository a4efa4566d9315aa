#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "common_options.h"
#include "report.h"
#include "tacos/common/units.h"
#include "tacos/topology/describe.h"
#include "tacos/topology/generators.h"
#include "topology_json.h"

namespace tacos::cli {
namespace {

// " (2 multicast: one copy in, many out; 2 reducing: ...)", or "" when no switch does more
// than forward.
std::string switch_capabilities(const TopologySummary& s) {
  std::string text;
  if (s.multicast_switches > 0)
    text += std::to_string(s.multicast_switches) + " multicast: one copy in, many out";
  if (s.reducing_switches > 0)
    text += (text.empty() ? "" : "; ") + std::to_string(s.reducing_switches) +
            " reducing: add up the contributions that pass through";
  return text.empty() ? text : " (" + text + ")";
}

struct DescribeCommand {
  TopologyOptions topology;
  bool json = false;

  void run() const {
    const Topology t = topology.load();
    if (json) {
      std::cout << json_text(describe_json(t)) << std::endl;
      return;
    }
    const TopologySummary s = describe_topology(t);
    std::printf("topology          %s\n", t.name().c_str());
    std::printf("NPUs              %d\n", s.npus);
    std::printf("switches          %d%s\n", s.switches, switch_capabilities(s).c_str());
    std::printf("links             %d (directed)\n", s.links);
    std::printf("degree            %d .. %d (out-links per device)\n", s.min_degree, s.max_degree);
    std::printf("diameter          %d hops, %s us latency\n", s.diameter_hops,
                format_micros(s.diameter_latency_ps).c_str());
    std::printf("ingress bandwidth %g .. %g GB/s per NPU\n", s.min_ingress_gbps,
                s.max_ingress_gbps);
    std::printf("connected         %s\n", s.connected ? "yes" : "no");
  }
};

}  // namespace

void add_topology_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand("topology", "Inspect topologies");
  command->require_subcommand(1);
  auto describe = std::make_shared<DescribeCommand>();
  CLI::App* sub =
      add_command(*command, describe, "describe",
                  "NPUs, switches, links, degree range, diameter and ingress bandwidth");
  describe->topology.add_to(*sub);
  sub->add_flag("--json", describe->json, "Print one JSON object");
  sub->footer("Generators:\n" + generator_help());
}

}  // namespace tacos::cli
