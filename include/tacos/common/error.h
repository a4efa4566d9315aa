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

// An algorithm that tacos built fails its own verifier, or replays to another time than the one
// reported: a bug in tacos. Never taken for "this algorithm cannot run here".
class VerificationFailure : public Error {
 public:
  using Error::Error;
};

// A request names an algorithm that is not in the registry (tacos/synthesis/request.h).
class UnknownAlgorithm : public Error {
 public:
  using Error::Error;
};

}  // namespace tacos
