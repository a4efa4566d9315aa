#include "switch_suffix.h"

#include <string>

#include "spec_text.h"
#include "tacos/common/error.h"

namespace tacos::spec {

SwitchSuffix split_switch_suffix(std::string_view text, std::string_view spec) {
  SwitchSuffix result;
  text = trim(text);
  for (;;) {
    const std::size_t colon = text.rfind(':');
    // A word alone ("dgx-h100:nvls") is a word too: the size is then empty.
    const std::string_view word =
        trim(colon == std::string_view::npos ? text : text.substr(colon + 1));
    bool* flag = word == "multicast" ? &result.multicast
                 : word == "nvls"    ? &result.nvls
                 : word == "sharp"   ? &result.sharp
                                     : nullptr;
    if (flag == nullptr) break;
    if (*flag) throw Error(prefix(spec) + in_quotes(":" + std::string(word)) + " is given twice");
    *flag = true;
    if (colon == std::string_view::npos) {
      result.size_omitted = true;
      text = {};
      break;
    }
    text = trim(text.substr(0, colon));
  }
  if (result.multicast && result.nvls)
    throw Error(prefix(spec) +
                "':multicast' and ':nvls' both declare the NVSwitch; give one (nvls is multicast "
                "+ reduce)");
  result.size = text;
  return result;
}

}  // namespace tacos::spec
