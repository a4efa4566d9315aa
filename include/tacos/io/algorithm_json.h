#pragma once
// tacos's own algorithm file (algorithm.json), documented in docs/formats.md and at the top of
// src/io/algorithm_json.cpp.
#include <string>
#include <string_view>

#include "tacos/algorithm/algorithm.h"

namespace tacos {

// Writes atomically (temporary file renamed into place). Byte-identical for equal algorithms.
void write_algorithm_json(const Algorithm& algorithm, const std::string& path);
std::string algorithm_to_json(const Algorithm& algorithm);
// Throws Error "FILE: field: what was expected" on malformed files.
Algorithm read_algorithm_json(const std::string& path);
// The same from text in memory; `source_name` stands for FILE in error messages.
Algorithm algorithm_from_json(std::string_view text, const std::string& source_name);

}  // namespace tacos
