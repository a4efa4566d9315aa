#include "tacos/collective/npu_list.h"

#include <charconv>
#include <string>

#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos {
namespace {

NpuId parse_id(std::string_view text, std::string_view item) {
  NpuId value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0)
    throw Error("--npus: expected NPU ids or ranges like 0-7,16-23, got '" + std::string(item) +
                "'");
  return value;
}

}  // namespace

std::vector<NpuId> parse_npu_list(std::string_view text) {
  if (text.find_first_not_of(' ') == std::string_view::npos)
    throw Error("--npus: the list is empty");
  std::vector<NpuId> npus;
  for (const std::string& item : split_list(text)) {
    const std::size_t dash = item.find('-');
    if (dash == std::string::npos) {
      npus.push_back(parse_id(item, item));
      continue;
    }
    const NpuId first = parse_id(std::string_view(item).substr(0, dash), item);
    const NpuId last = parse_id(std::string_view(item).substr(dash + 1), item);
    if (last < first) throw Error("--npus: range '" + item + "' runs backwards");
    if (last - first > (1 << 24)) throw Error("--npus: range '" + item + "' is too large");
    for (NpuId n = first; n <= last; ++n) npus.push_back(n);
  }
  return npus;
}

}  // namespace tacos
