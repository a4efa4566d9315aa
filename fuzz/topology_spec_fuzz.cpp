// libFuzzer target: generator specs ("torus2d:4x4", "dgx-a100:2", "fattree:...",
// "ring:4,fc:8"). Line 1 is the spec, optional lines 2 and 3 the --bandwidth and --latency
// lists. A topology that is built is described, which walks every link (small ones only: it is
// quadratic).
#include "fuzz_support.h"
#include "tacos/common/error.h"
#include "tacos/topology/describe.h"
#include "tacos/topology/generators.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = tacos_fuzz::as_text(data, size);
  std::string_view lines[3] = {"", "50", "0.5us"};
  for (int i = 0; i < 3; ++i) {
    const std::size_t end = text.find('\n');
    lines[i] = text.substr(0, end);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  if (tacos_fuzz::generator_too_big(lines[0])) return 0;
  try {
    const tacos::LinkParams params = tacos::parse_link_params(lines[1], lines[2]);
    const tacos::Topology topology = tacos::generate_topology(lines[0], params);
    if (topology.devices() <= tacos_fuzz::kDescribeDevices)
      (void)tacos::describe_topology(topology);
  } catch (const tacos::Error&) {
  }
  return 0;
}
