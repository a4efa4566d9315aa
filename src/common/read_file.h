#pragma once
// A whole file's bytes, as every reader of a format starts.
#include <string>

namespace tacos::detail {

// The bytes of `path`; throws Error "PATH: cannot open for reading" or "PATH: read failed".
std::string read_file(const std::string& path);

}  // namespace tacos::detail
