// libFuzzer target: tacos topology YAML and ASTRA-sim network YAML (one reader tells them apart
// by their keys; the two corpora seed one format each). A topology that loads is described,
// which walks every link (small ones only: it is quadratic).
#include <yaml-cpp/yaml.h>

#include "fuzz_support.h"
#include "tacos/common/error.h"
#include "tacos/io/topology_yaml.h"
#include "tacos/topology/describe.h"

namespace {
// The generator behind an ASTRA-sim file (npus_count and its FullyConnected dimensions) or a
// tacos `generate:` block, as text (see generator_too_big); empty when there is none or the YAML
// does not parse.
std::string generator_sizes(std::string_view text) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) return "";
    std::string sizes;
    if (const YAML::Node counts = root["npus_count"]; counts && counts.IsSequence())
      for (const YAML::Node& n : counts)
        if (n.IsScalar()) sizes += n.Scalar() + " ";
    // The reader turns a FullyConnected dimension into "fc:N" (N^2 links): generator_too_big
    // must see it as such, or a mutated npus_count of a few thousand builds millions of links.
    if (const YAML::Node blocks = root["topology"]; blocks && blocks.IsSequence())
      for (const YAML::Node& b : blocks)
        if (b.IsScalar() && b.Scalar() == "FullyConnected") sizes += "fc ";
    if (const YAML::Node generate = root["generate"]; generate && generate.IsMap())
      if (const YAML::Node spec = generate["topology"]; spec && spec.IsScalar())
        sizes += spec.Scalar();
    return sizes;
  } catch (const YAML::Exception&) {
    return "";
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (tacos_fuzz::generator_too_big(generator_sizes(tacos_fuzz::as_text(data, size)))) return 0;
  const auto path = tacos_fuzz::write_scratch("topology.yml", tacos_fuzz::as_text(data, size));
  try {
    const tacos::Topology topology = tacos::read_topology_yaml(path.string());
    if (topology.devices() <= tacos_fuzz::kDescribeDevices)
      (void)tacos::describe_topology(topology);
  } catch (const tacos::Error&) {
  }
  return 0;
}
