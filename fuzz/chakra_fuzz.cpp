// libFuzzer target: Chakra ET. The input is a set of rank files joined by the separator line
// "\n--rank--\n" (rank 0 first, at most 8); they are written as fuzz.0.et .. and read as one
// trace, then run on a fully connected topology of their rank count, and turned back into an
// algorithm when they carry tacos's metadata.
#include "fuzz_support.h"
#include "tacos/common/error.h"
#include "tacos/io/chakra.h"
#include "tacos/topology/generators.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static constexpr std::string_view kSeparator = "\n--rank--\n";
  std::string_view rest = tacos_fuzz::as_text(data, size);
  int ranks = 0;
  while (ranks < 8) {
    const std::size_t at = rest.find(kSeparator);
    tacos_fuzz::write_scratch("fuzz." + std::to_string(ranks) + ".et", rest.substr(0, at));
    ++ranks;
    if (at == std::string_view::npos) break;
    rest.remove_prefix(at + kSeparator.size());
  }
  // A file left from a longer earlier input would join this trace.
  std::filesystem::remove(tacos_fuzz::scratch() / ("fuzz." + std::to_string(ranks) + ".et"));
  try {
    const tacos::EtTrace trace = tacos::read_chakra((tacos_fuzz::scratch() / "fuzz").string());
    const tacos::Topology topology =
        tacos::generate_topology("fc:" + std::to_string(trace.npus()), tacos::LinkParams{});
    for (const auto model : {tacos::LinkModel::kTacos, tacos::LinkModel::kAstra})
      (void)tacos::simulate_chakra(trace, topology, model, tacos::Bytes{1} << 20);
    if (trace.tacos) (void)tacos::chakra_to_algorithm(trace, topology, tacos::LinkModel::kTacos);
  } catch (const tacos::Error&) {
  }
  return 0;
}
