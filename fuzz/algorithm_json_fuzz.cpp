// libFuzzer target: tacos algorithm JSON. A file that loads is verified (recorded times, under
// its own link model) and simulated on a fully connected topology of its NPUs, as `tacos
// verify` does without --topology (small ones only).
#include "fuzz_support.h"
#include "tacos/algorithm/verify.h"
#include "tacos/common/error.h"
#include "tacos/io/algorithm_json.h"
#include "tacos/simulation/simulator.h"
#include "tacos/topology/generators.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const tacos::Algorithm algorithm =
        tacos::algorithm_from_json(tacos_fuzz::as_text(data, size), "fuzz.json");
    const int npus = algorithm.collective().topology_npus();
    if (npus < 1 || npus > 32) return 0;
    const tacos::Topology topology =
        tacos::generate_topology("fc:" + std::to_string(npus), tacos::LinkParams{});
    (void)tacos::verify_algorithm(algorithm, topology, algorithm.link_model);
    const tacos::SimulationResult sim = tacos::simulate(algorithm, topology, algorithm.link_model);
    (void)tacos::verify_algorithm(tacos::with_simulated_times(algorithm, sim), topology,
                                  algorithm.link_model);
  } catch (const tacos::Error&) {
  }
  return 0;
}
