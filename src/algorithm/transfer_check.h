#pragma once
// One check of a single transfer against the topology it runs on, for everything that consumes
// an Algorithm (verify, simulate, the Chakra writer): both ends are devices of the topology and
// NPUs or reducing switches (any other switch only forwards), the transfer goes somewhere else,
// a direct link or a switch route joins its ends, and it carries chunks, each one of the
// collective's.
//
// The problem is one line that starts with describe_transfer ("transfer 3 (0 -> 2, chunk 1):
// the topology has no link 0 -> 2 and no path through switches"); callers put their own
// prefix ("simulate: ", "chakra: ") in front, or hand it to VerifyResult as it is.
#include <cstddef>
#include <span>
#include <string>

#include "tacos/algorithm/algorithm.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

struct TransferCheck {
  std::span<const LinkId> route;  // the links the transfer crosses, first hop first
  std::string error;              // "" when the transfer can run; else the first problem
  bool ok() const { return error.empty(); }
};

// Checks transfer `index` of `algorithm` on `topology`. The checks go in the order above, so a
// transfer with a bad device is never asked for a route.
TransferCheck check_transfer(const Algorithm& algorithm, const Topology& topology,
                             std::size_t index);

// The last two checks alone (it carries chunks, each one of the collective's), for a writer
// given no topology (every NPU pair a link of its own): "" or the problem, worded as above.
std::string check_transfer_chunks(const Algorithm& algorithm, std::size_t index);

}  // namespace tacos::detail
