// Uses the installed tacos library: All-Gather of 1 MiB on ring:4, prints the collective time.
#include <cstdio>
#include <exception>

#include "tacos/collective/collective.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"

int main() {
  try {
    const tacos::Topology topology =
        tacos::generate_topology("ring:4", tacos::parse_link_params("50", "0.5us"));
    const tacos::Topology network = topology.unwind_switches();
    const tacos::Collective collective = tacos::Collective::make(
        tacos::CollectiveKind::kAllGather, network.npus(), tacos::parse_size("1MiB"), 1);
    tacos::SynthesisOptions options;
    options.threads = 1;
    const tacos::SynthesisResult result = tacos::synthesize_tacos(network, collective, options);
    if (result.collective_time <= 0 || result.transfers <= 0) {
      std::fprintf(stderr, "consumer: unexpected result (time %lld ps, %lld transfers)\n",
                   static_cast<long long>(result.collective_time),
                   static_cast<long long>(result.transfers));
      return 1;
    }
    std::printf("all-gather 1 MiB on ring:4: %s us (%lld transfers)\n",
                tacos::format_micros(result.collective_time).c_str(),
                static_cast<long long>(result.transfers));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
