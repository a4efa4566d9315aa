#pragma once
// Small text helpers the generator spec parsers share (generators.cpp, system_generators.cpp,
// switch_suffix.cpp): quoting for messages, trimming and the whole-number sizes of a spec.
#include <cstdint>
#include <string>
#include <string_view>

namespace tacos::spec {

// Caps keep a typo such as "fc:1000000" from exhausting memory before anything is reported.
inline constexpr std::int64_t kMaxNpus = std::int64_t{1} << 24;

// "'text'". Built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
std::string in_quotes(std::string_view text);

// Without leading and trailing spaces.
std::string_view trim(std::string_view text);

// "--topology 'SPEC': " in front of every spec error.
std::string prefix(std::string_view spec);

// A size of `spec`: a whole number from 1 to kMaxNpus, else Error naming the text.
std::int64_t parse_count(std::string_view text, std::string_view spec);

}  // namespace tacos::spec
