// libFuzzer target: size, bandwidth and latency strings as the command line and the files give
// them. Each input line is tried as every kind; values that parse are combined into a message
// time, the arithmetic that overflowed before.
#include "fuzz_support.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/topology/generators.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest = tacos_fuzz::as_text(data, size);
  tacos::Bytes bytes = 1;
  double gbps = 1;
  while (true) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    try {
      bytes = tacos::parse_size(line);
    } catch (const tacos::Error&) {
    }
    try {
      gbps = tacos::parse_bandwidth(line);
    } catch (const tacos::Error&) {
    }
    try {
      (void)tacos::parse_latency(line, tacos::kPicosPerMicro);
      (void)tacos::parse_latency(line, tacos::kPicosPerNano);
    } catch (const tacos::Error&) {
    }
    try {
      (void)tacos::parse_link_params(line, line);
    } catch (const tacos::Error&) {
    }
    try {
      (void)tacos::format_micros(tacos::serialization_time(bytes, gbps));
    } catch (const tacos::Error&) {
    }
    (void)tacos::format_bytes(bytes);
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return 0;
}
