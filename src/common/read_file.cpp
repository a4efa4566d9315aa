#include "read_file.h"

#include <fstream>
#include <iterator>

#include "tacos/common/error.h"

namespace tacos::detail {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open for reading");
  std::string data(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>{});
  if (in.bad()) throw Error(path + ": read failed");
  return data;
}

}  // namespace tacos::detail
