#include "spec_text.h"

#include <charconv>

#include "tacos/common/error.h"

namespace tacos::spec {

std::string in_quotes(std::string_view text) {
  std::string result(1, '\'');
  result.append(text);
  result.push_back('\'');
  return result;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

std::string prefix(std::string_view spec) { return "--topology " + in_quotes(spec) + ": "; }

std::int64_t parse_count(std::string_view text, std::string_view spec) {
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    throw Error(prefix(spec) + "expected a whole number, got " + in_quotes(text));
  if (value <= 0) throw Error(prefix(spec) + "sizes must be at least 1, got " + in_quotes(text));
  if (value > kMaxNpus)
    throw Error(prefix(spec) + in_quotes(text) + " is too large (at most " +
                std::to_string(kMaxNpus) + " NPUs)");
  return value;
}

}  // namespace tacos::spec
