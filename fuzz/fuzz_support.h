#pragma once
// Shared by the libFuzzer targets: scratch files for readers that take a path, and the rule
// that only tacos::Error may leave a reader (anything else is a finding: libFuzzer reports the
// uncaught exception as a crash).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace tacos_fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A private scratch folder per process (fuzzers may run in parallel), under TMPDIR.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::filesystem::path d = std::filesystem::path(base && *base ? base : "/tmp") /
                              ("tacos_fuzz_" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Generators build legitimately large topologies within tacos's limits (2^24 links, which take
// seconds and gigabytes under ASan): not findings, but they would trip the fuzzer's time and
// memory limits. The targets skip generator specs whose link count may pass about 2^16: the
// product of every whole number in `spec` (each at least 1), squared when the spec has a fully
// connected part ("fc", N^2 links).
inline bool generator_too_big(std::string_view spec) {
  double product = 1;
  double number = -1;
  for (std::size_t i = 0; i <= spec.size(); ++i) {
    const bool digit = i < spec.size() && spec[i] >= '0' && spec[i] <= '9';
    if (digit) {
      number = (number < 0 ? 0 : number) * 10 + (spec[i] - '0');
    } else if (number >= 0) {
      product *= number < 1 ? 1 : number;
      number = -1;
    }
  }
  if (spec.find("fc") != std::string_view::npos) product *= product;
  return product > 65536;
}

// describe_topology is exact and quadratic (a Dijkstra per NPU): only small topologies.
inline constexpr int kDescribeDevices = 256;

inline std::filesystem::path write_scratch(const std::string& name, std::string_view bytes) {
  const std::filesystem::path path = scratch() / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
  return path;
}

}  // namespace tacos_fuzz
