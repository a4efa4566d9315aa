#pragma once
// The capability words a generator spec may end with (docs/switch-fabrics.md, "Declaring
// switch capabilities"): KIND:SIZE[:WORD]..., each WORD at most once, in any order.
//   multicast  the scale-up switches copy (one copy in, many out)
//   nvls       the scale-up switches multicast and reduce (NVLink SHARP)
//   sharp      the InfiniBand leaves and spines of a pod multicast and reduce (SHARP)
// Which words a kind accepts is the generator's business; this only splits them off.
#include <string_view>

namespace tacos::spec {

struct SwitchSuffix {
  std::string_view size;      // what precedes the words (trimmed; may be empty or hold a ':')
  bool size_omitted = false;  // the text began with a word ("nvls:sharp"), not "SIZE:..."
  bool multicast = false;
  bool nvls = false;
  bool sharp = false;
  bool any() const { return multicast || nvls || sharp; }
};

// Splits the capability words off the end of `text` (the spec item after "KIND:"). Throws
// Error, naming `spec`, for a word given twice or for :multicast together with :nvls.
SwitchSuffix split_switch_suffix(std::string_view text, std::string_view spec);

}  // namespace tacos::spec
