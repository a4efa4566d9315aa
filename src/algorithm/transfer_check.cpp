#include "transfer_check.h"

#include <utility>

#include "tacos/algorithm/verify.h"
#include "tacos/topology/switch_routes.h"

namespace tacos::detail {
namespace {

TransferCheck problem(const Algorithm& algorithm, std::size_t index, const std::string& what) {
  return TransferCheck{{}, describe_transfer(algorithm, index) + what};
}

// "" when the transfer's endpoints may send and receive data: NPUs, and reducing switches
// (Topology::is_reducing: they hold partial sums and copies, docs/design.md "Switch fabrics");
// otherwise why not (one line, without the transfer's name).
std::string check_switch_endpoints(const Topology& topology, const Transfer& t) {
  for (DeviceId d : {t.src, t.dst})
    if (topology.is_switch(d) && !topology.is_reducing(d))
      return "messages go between NPUs; " + describe_device(topology, d) +
             " does not reduce, so it only forwards them (only a reducing switch holds data)";
  return {};
}

}  // namespace

TransferCheck check_transfer(const Algorithm& algorithm, const Topology& topology,
                             std::size_t index) {
  const Transfer& t = algorithm.transfers()[index];
  const int devices = topology.devices();
  for (DeviceId d : {t.src, t.dst})
    if (d < 0 || d >= devices)
      return problem(algorithm, index,
                     ": device " + std::to_string(d) + " is not in the topology (devices 0.." +
                         std::to_string(devices - 1) + ")");
  if (std::string error = check_switch_endpoints(topology, t); !error.empty())
    return problem(algorithm, index, ": " + error);
  if (t.src == t.dst) return problem(algorithm, index, " sends to itself");
  const std::span<const LinkId> route = topology.switch_routes().route(t.src, t.dst);
  if (route.empty())
    return problem(algorithm, index,
                   ": the topology has no link " + std::to_string(t.src) + " -> " +
                       std::to_string(t.dst) +
                       (topology.is_switch(t.src) || topology.is_switch(t.dst)
                            ? " (a message to or from a reducing switch takes one direct link)"
                            : " and no path through switches"));
  if (std::string error = check_transfer_chunks(algorithm, index); !error.empty())
    return TransferCheck{{}, std::move(error)};
  return TransferCheck{route, {}};
}

std::string check_transfer_chunks(const Algorithm& algorithm, std::size_t index) {
  const auto chunks = algorithm.chunks(algorithm.transfers()[index]);
  if (chunks.empty()) return describe_transfer(algorithm, index) + " carries no chunks";
  const int num_chunks = algorithm.collective().num_chunks();
  for (ChunkId c : chunks)
    if (c < 0 || c >= num_chunks)
      return describe_transfer(algorithm, index) + ": chunk " + std::to_string(c) +
             " is not one of the collective's chunks 0.." + std::to_string(num_chunks - 1);
  return {};
}

}  // namespace tacos::detail
