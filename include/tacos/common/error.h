#pragma once
#include <stdexcept>
#include <string>

namespace tacos {

// Every user-facing failure (bad input, impossible request) is a tacos::Error whose message is
// one line that names the offending flag, file, line or field and what was expected.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace tacos
