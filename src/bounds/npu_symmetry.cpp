#include "npu_symmetry.h"

#include <cstdint>
#include <vector>

namespace tacos::bounds_detail {

bool npus_are_all_alike(const Topology& topology) {
  if (topology.switches() > 0 || topology.npus() < 2) return false;
  const auto& dims = topology.shape().dimensions;
  if (dims.empty()) return false;
  std::int64_t product = 1;
  for (const ShapeDimension& d : dims) {
    // A line of two is a ring of two (hypercubes); longer lines fail the link check below.
    if (d.wiring == DimensionWiring::kSwitch) return false;
    if (d.size < 1) return false;
    product *= d.size;
    if (product > topology.npus()) return false;
  }
  if (product != topology.npus()) return false;
  // One link per ordered pair, so that "the link from a to b" names one bandwidth and latency.
  for (LinkId l = 0; l < topology.num_links(); ++l)
    if (topology.find_link(topology.link(l).src, topology.link(l).dst) != l) return false;
  std::int64_t stride = 1;
  for (const ShapeDimension& d : dims) {
    const std::int64_t size = d.size;
    const std::int64_t step = stride;
    // NPU id = sum of coordinate x stride, dimension 0 fastest: one step along d, wrapping.
    auto shift = [&](DeviceId v) {
      const std::int64_t coordinate = (v / step) % size;
      return static_cast<DeviceId>(coordinate + 1 < size ? v + step : v - (size - 1) * step);
    };
    for (const Link& link : topology.links()) {
      const LinkId image = topology.find_link(shift(link.src), shift(link.dst));
      if (image < 0) return false;
      const Link& other = topology.link(image);
      if (other.bandwidth_gbps != link.bandwidth_gbps || other.latency_ps != link.latency_ps)
        return false;
    }
    stride *= size;
  }
  return true;
}

}  // namespace tacos::bounds_detail
