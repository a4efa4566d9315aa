// TACOS All-Gather synthesis speed on 2D tori: 50 GB/s links, 0.5 us latency, 64 MiB, K = 1,
// one trial. Each size runs with and without the transfer list kept (keep_transfers), the
// latter being what `tacos synthesize --time-only` uses.
#include <benchmark/benchmark.h>

#include <string>
#include <utility>
#include <vector>

#include "tacos/collective/collective.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/synthesizer.h"
#include "tacos/topology/generators.h"

namespace {

void synthesize_all_gather(benchmark::State& state, const std::string& spec, bool keep_transfers) {
  const tacos::Topology topology =
      tacos::generate_topology(spec, tacos::parse_link_params("50", "0.5us")).unwind_switches();
  const tacos::Collective collective = tacos::Collective::make(
      tacos::CollectiveKind::kAllGather, topology.npus(), tacos::parse_size("64MiB"), 1);
  tacos::SynthesisOptions options;
  options.seed = 1;
  options.trials = 1;
  options.threads = 1;
  options.keep_transfers = keep_transfers;

  tacos::SynthesisResult result;
  for (auto _ : state) {
    result = tacos::synthesize_tacos(topology, collective, options);
    benchmark::DoNotOptimize(result);
    benchmark::ClobberMemory();
  }
  state.counters["npus"] = benchmark::Counter(static_cast<double>(topology.npus()));
  state.counters["transfers"] = benchmark::Counter(static_cast<double>(result.transfers));
  state.counters["collective_time_us"] =
      benchmark::Counter(tacos::to_micros(result.collective_time));
}

struct Size {
  const char* spec;
  int iterations;  // 0: let Google Benchmark choose
};

int register_benchmarks() {
  const std::vector<Size> sizes = {
      {"torus2d:8x8", 0},   {"torus2d:16x16", 0}, {"torus2d:32x32", 3},
      {"torus2d:45x45", 1}, {"torus2d:64x64", 1},
  };
  for (const Size& size : sizes) {
    for (const bool keep : {true, false}) {
      const std::string name =
          std::string("AllGather/") + size.spec + (keep ? "/keep_transfers" : "/time_only");
      benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
          name.c_str(), [spec = std::string(size.spec), keep](benchmark::State& state) {
            synthesize_all_gather(state, spec, keep);
          });
      b->Unit(benchmark::kMillisecond)->UseRealTime();
      if (size.iterations > 0) b->Iterations(size.iterations);
    }
  }
  return 0;
}

[[maybe_unused]] const int registered = register_benchmarks();

}  // namespace

BENCHMARK_MAIN();
