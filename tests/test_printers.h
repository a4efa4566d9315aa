#pragma once
// Readable GoogleTest parameters: tacos's enums print by name (GoogleTest would print their
// numbers, and structs as raw bytes), and test names are made from parameter text.
#include <cctype>
#include <ostream>
#include <string>

#include "tacos/collective/collective.h"
#include "tacos/common/link_model.h"
#include "tacos/synthesis/baselines.h"

namespace tacos {

inline void PrintTo(CollectiveKind kind, std::ostream* os) { *os << to_string(kind); }
inline void PrintTo(LinkModel model, std::ostream* os) { *os << to_string(model); }
inline void PrintTo(Baseline baseline, std::ostream* os) { *os << to_string(baseline); }

}  // namespace tacos

namespace tacos_test {

// A GoogleTest name from text: every character that is not a letter or digit becomes '_'.
inline std::string test_name(std::string text) {
  for (char& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return text;
}

}  // namespace tacos_test
