#pragma once
#include <string_view>
#include <vector>

#include "tacos/common/types.h"

namespace tacos {

// "0-7,16-23,40" -> NPU ids in the order given. Throws Error on an empty list, a malformed
// item or a reversed range; duplicates and range checks are Collective::make's business.
std::vector<NpuId> parse_npu_list(std::string_view text);

}  // namespace tacos
