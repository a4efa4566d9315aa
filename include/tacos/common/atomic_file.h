#pragma once
#include <string>
#include <string_view>

namespace tacos {

// Writes `contents` to `path` through a temporary file in the same directory that is renamed
// into place only when everything was written, so a failure never leaves a partial file.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace tacos
