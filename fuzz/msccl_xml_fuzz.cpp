// libFuzzer target: MSCCL-IR XML. The file is executed on a fully connected topology of its own
// ngpus (as `tacos verify` does without --topology), small ones only, and the result verified.
#include <charconv>

#include "fuzz_support.h"
#include "tacos/algorithm/verify.h"
#include "tacos/common/error.h"
#include "tacos/io/msccl_xml.h"
#include "tacos/topology/generators.h"

namespace {
// ngpus="N" anywhere in the text; 4 when absent or unreadable (the reader then says what is
// wrong).
int ngpus_of(std::string_view text) {
  const std::size_t at = text.find("ngpus=\"");
  if (at == std::string_view::npos) return 4;
  int n = 0;
  const char* begin = text.data() + at + 7;
  const auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), n);
  return ec == std::errc() && n >= 1 && n <= 16 ? n : 4;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = tacos_fuzz::as_text(data, size);
  try {
    const tacos::Topology topology =
        tacos::generate_topology("fc:" + std::to_string(ngpus_of(text)), tacos::LinkParams{});
    const tacos::Algorithm algorithm = tacos::algorithm_from_msccl_xml(
        text, "fuzz.xml", topology, tacos::LinkModel::kTacos, tacos::Bytes{1} << 20);
    (void)tacos::verify_algorithm(algorithm, topology, tacos::LinkModel::kTacos);
  } catch (const tacos::Error&) {
  }
  return 0;
}
