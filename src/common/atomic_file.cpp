#include "tacos/common/atomic_file.h"

#include <cstdio>
#include <fstream>

#include "tacos/common/error.h"

namespace tacos {

void write_file_atomically(const std::string& path, std::string_view contents) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path + ": cannot open for writing");
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw Error(path + ": write failed");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw Error(path + ": cannot move into place");
  }
}

}  // namespace tacos
