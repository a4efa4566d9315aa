#include "tacos/topology/loader.h"

#include <filesystem>
#include <system_error>

#include "tacos/common/error.h"
#include "tacos/io/topology_yaml.h"

namespace tacos {
namespace {

bool has_yaml_extension(const std::string& text) {
  return text.find(".yml") != std::string::npos || text.find(".yaml") != std::string::npos;
}

}  // namespace

Topology load_topology(const std::string& spec_or_file, const LinkParams& params) {
  std::error_code ec;
  if (has_yaml_extension(spec_or_file) || std::filesystem::is_regular_file(spec_or_file, ec))
    return read_topology_yaml(spec_or_file);
  // No generator spec contains '/', so this was meant as a file that is not there.
  if (spec_or_file.find('/') != std::string::npos) throw Error(spec_or_file + ": cannot open");
  return generate_topology(spec_or_file, params);
}

}  // namespace tacos
