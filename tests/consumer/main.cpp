// Uses the installed tacos library: All-Gather of 1 MiB on ring:4 through the one request
// (tacos::synthesize: the portfolio and verification, as `tacos synthesize`), prints the time.
#include <cstdio>
#include <exception>

#include "tacos/collective/collective.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/request.h"
#include "tacos/topology/generators.h"

int main() {
  try {
    const tacos::Topology topology =
        tacos::generate_topology("ring:4", tacos::parse_link_params("50", "0.5us"));
    tacos::SynthesisRequest request;
    request.collective = tacos::CollectiveKind::kAllGather;
    request.size = tacos::parse_size("1MiB");
    request.options.threads = 1;
    const tacos::SynthesisRun run = tacos::synthesize(topology, request);
    const tacos::SynthesisResult& result = run.result;
    if (result.collective_time <= 0 || result.transfers <= 0 || !run.verified.value_or(false)) {
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
