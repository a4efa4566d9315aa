#pragma once
// All-Gather and Broadcast on switch fabrics as a two-level relay with messages sized per port.
// NPUs fall into domains, the NPUs whose fastest port goes to the same switch (a DGX node's
// NVSwitch, a leaf). Each chunk has one distributor in its source's domain (the source itself
// for All-Gather; for Broadcast the root hands chunk c to member c mod |domain| first); the
// distributor sends it to every member of its domain and to one entry NPU in every other domain
// (the member at its own position: NIC g of a rail-optimized fabric reaches GPU g of the other
// nodes), and each entry sends it on to the rest of its domain. (Broadcast: the root's domain
// sends each chunk to one other domain, whose entry spreads it there and sends it on to the
// remaining domains, in some plans over the NIC of whichever member of its domain has least to
// send: on a pod of dozens of nodes one entry per chunk would leave NICs that received one chunk
// more than others sending it dozens of times more.) Every free sender port then sends one
// message to one receiver carrying as many of the chunks it owes that receiver as fit in a
// serialization time of a few times the route's latency, chunks it relays first.
//
// Why: the greedy matcher sends one chunk per message. Under the tacos link model every message
// holds each port for the route's latency as well, so the chunk count that pipelines a DGX
// node's NIC (small chunks) costs its NVSwitch port 15-30% of its time in latency; here the
// NVSwitch port sends a GPU's own data in large messages while the NIC stream stays fine.
#include <cstdint>
#include <optional>

#include "tacos/algorithm/algorithm.h"
#include "tacos/collective/collective.h"
#include "tacos/common/link_model.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

// The switch an NPU's fastest port into a switch leads to (ties: its first such link), or -1
// when it has none: the NPU's domain (a DGX node's NVSwitch, a fat-tree's leaf), as this relay
// and the relay baseline (baseline_relay.cpp) take it.
DeviceId domain_switch(const Topology& topology, NpuId npu);

// Beyond this many chunk deliveries (NPUs x chunks) the candidate is not tried: it costs a few
// plans and simulations each (docs/performance.md, "Measured costs").
constexpr double kDomainRelayMaxDeliveries = 262144;

// The fastest of a few message-size targets, compacted by the simulator (its time is the
// simulated time), or nullopt where it does not apply: no switches, a collective other than
// All-Gather or Broadcast over every NPU, a chunk with several sources, a domain an entry
// cannot reach through switches, or too large.
std::optional<Algorithm> domain_relay(const Topology& topology, const Collective& collective,
                                      LinkModel model);

}  // namespace tacos::detail
