// The native half of `import tacos`: thin bindings over the functions the `tacos` command itself
// calls (src/cli/*_job.h, file_run.h), so every dict returned here is the command's --json object.
// The Python half (tacos/__init__.py) adds keyword arguments, numpy/pandas views and docstrings.
// The GIL is released around every call into C++, so Python threads can synthesize in parallel.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithm_outputs.h"
#include "bound_job.h"
#include "compare_job.h"
#include "file_run.h"
#include "json_to_python.h"
#include "synthesize_job.h"
#include "tacos/algorithm/verify.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/synthesis/request.h"
#include "tacos/topology/generators.h"
#include "tacos/topology/loader.h"
#include "topology_json.h"
#include "workload_job.h"

namespace py = pybind11;

namespace tacos::python {
namespace {

// A loaded topology plus the flags that made it (the CLI's --topology, --bandwidth, --latency,
// --switch-model), which the jobs need for validation and for the ASTRA-sim files' names.
struct NativeTopology {
  cli::TopologyOptions options;
  std::shared_ptr<const Topology> full;
};

NativeTopology load(const std::string& spec, const std::string& bandwidth,
                    const std::string& latency, const std::string& switch_model) {
  NativeTopology t;
  t.options.topology = spec;
  t.options.bandwidth = bandwidth;
  t.options.latency = latency;
  t.options.switch_model = switch_model;
  {
    py::gil_scoped_release release;
    t.full = std::make_shared<const Topology>(t.options.load());
    t.options.network(*t.full);  // validates --switch-model now rather than at first use
  }
  return t;
}

// The distinct link bandwidths (GB/s of 2^30 B/s, largest first) and latencies (us, smallest
// first) of the loaded topology: the values a sweep row was simulated with when its
// configuration left them to the generator's defaults.
py::tuple link_values(const NativeTopology& t) {
  std::vector<double> bandwidths;
  std::vector<Time> latencies;
  for (const Link& link : t.full->links()) {
    bandwidths.push_back(link.bandwidth_gbps);
    latencies.push_back(link.latency_ps);
  }
  std::sort(bandwidths.begin(), bandwidths.end(), std::greater<>());
  bandwidths.erase(std::unique(bandwidths.begin(), bandwidths.end()), bandwidths.end());
  std::sort(latencies.begin(), latencies.end());
  latencies.erase(std::unique(latencies.begin(), latencies.end()), latencies.end());
  py::list latencies_us;
  for (Time l : latencies) latencies_us.append(to_micros(l));
  return py::make_tuple(py::cast(bandwidths), latencies_us);
}

// The CLI's collective flags from keyword arguments (strings as the command line takes them).
struct CollectiveArgs {
  std::string collective, size, chunks_per_npu, link_model, all_reduce_mode;
  std::string portfolio = "on";
  std::string auto_budget = "0";  // --auto-budget seconds
  std::uint64_t seed = 1;
  int trials = 1, threads = 0;
  std::optional<NpuId> root;
  std::optional<std::string> npus;

  void apply(cli::SynthesisFlags& flags, cli::CollectiveOptions& c) const {
    flags.chunks_per_npu = chunks_per_npu;
    flags.seed = seed;
    flags.link_model = link_model;
    flags.portfolio = portfolio;
    flags.auto_budget = auto_budget;
    c.collective = collective;
    c.size = size;
    c.all_reduce_mode = all_reduce_mode;
    c.trials = trials;
    c.threads = threads;
    if (root) {
      c.root = *root;
      c.root_given = true;
    }
    if (npus) {
      c.npus = *npus;
      c.npus_given = true;
    }
  }
};

struct NativeResult {
  cli::SynthesizeJob job;
  std::shared_ptr<const Topology> full;
  cli::SynthesizeOutcome outcome;
  nlohmann::ordered_json report;  // the --json object, taken right after synthesis
};

std::shared_ptr<NativeResult> synthesize(const NativeTopology& topology, const CollectiveArgs& args,
                                         const std::string& algorithm, bool time_only) {
  auto result = std::make_shared<NativeResult>();
  result->job.topology = topology.options;
  args.apply(result->job.flags, result->job.collective);
  result->job.algorithm = algorithm;
  result->job.time_only = time_only;
  result->full = topology.full;
  py::gil_scoped_release release;
  result->outcome = cli::run_synthesize(result->job, *result->full);
  result->report = cli::synthesize_json(result->job, *result->full, result->outcome);
  return result;
}

// Columns of the transfer list; chunk ids flattened with per-transfer offsets (CSR).
py::dict transfer_columns(const NativeResult& r) {
  const Algorithm& a = r.outcome.run.result.algorithm;
  const auto& transfers = a.transfers();
  const auto n = static_cast<py::ssize_t>(transfers.size());
  py::array_t<std::int32_t> src(n), dst(n);
  py::array_t<std::int64_t> start(n), end(n), offsets(n + 1);
  py::array_t<bool> reduce(n);
  py::array_t<std::int32_t> multicast(n);
  std::vector<ChunkId> ids;
  ids.reserve(a.chunk_pool().size());
  auto s = src.mutable_unchecked<1>(), d = dst.mutable_unchecked<1>();
  auto st = start.mutable_unchecked<1>(), en = end.mutable_unchecked<1>();
  auto off = offsets.mutable_unchecked<1>();
  auto red = reduce.mutable_unchecked<1>();
  auto mc = multicast.mutable_unchecked<1>();
  for (py::ssize_t i = 0; i < n; ++i) {
    const Transfer& t = transfers[static_cast<std::size_t>(i)];
    s(i) = t.src;
    d(i) = t.dst;
    st(i) = t.start;
    en(i) = t.end;
    red(i) = t.reduce;
    mc(i) = t.multicast;
    off(i) = static_cast<std::int64_t>(ids.size());
    for (ChunkId c : a.chunks(t)) ids.push_back(c);
  }
  off(n) = static_cast<std::int64_t>(ids.size());
  py::dict out;
  out["src"] = src;
  out["dst"] = dst;
  out["start_ps"] = start;
  out["end_ps"] = end;
  out["reduce"] = reduce;
  out["multicast"] = multicast;  // Transfer::multicast: group id, -1 for unicast
  out["chunk_offsets"] = offsets;
  out["chunk_ids"] = py::array_t<std::int32_t>(static_cast<py::ssize_t>(ids.size()), ids.data());
  return out;
}

// Rebuilds an Algorithm from columns (possibly edited in Python) on the result's collective and
// replays it with the verifier every algorithm tacos reports passes through.
py::dict verify_columns(const NativeResult& r, py::array_t<std::int32_t> src,
                        py::array_t<std::int32_t> dst, py::array_t<std::int64_t> start,
                        py::array_t<std::int64_t> end, py::array_t<std::int64_t> offsets,
                        py::array_t<std::int32_t> ids, py::array_t<bool> reduce,
                        py::object multicast_ids) {
  const py::ssize_t n = src.shape(0);
  // Multicast group ids (one per row, -1 unicast), or None: every row unicast.
  std::vector<std::int32_t> multicast(static_cast<std::size_t>(n), -1);
  if (!multicast_ids.is_none()) {
    const auto column = multicast_ids.cast<py::array_t<std::int32_t>>();
    if (column.shape(0) != n) throw Error("transfers: columns of different lengths");
    auto m = column.unchecked<1>();
    for (py::ssize_t i = 0; i < n; ++i) multicast[static_cast<std::size_t>(i)] = m(i);
  }
  if (dst.shape(0) != n || start.shape(0) != n || end.shape(0) != n || reduce.shape(0) != n ||
      offsets.shape(0) != n + 1)
    throw Error("transfers: columns of different lengths");
  const Algorithm& original = r.outcome.run.result.algorithm;
  Algorithm rebuilt(original.collective());
  rebuilt.link_model = original.link_model;
  auto s = src.unchecked<1>(), d = dst.unchecked<1>();
  auto st = start.unchecked<1>(), en = end.unchecked<1>(), off = offsets.unchecked<1>();
  auto c = ids.unchecked<1>();
  auto red = reduce.unchecked<1>();
  const DeviceId devices = r.outcome.network.devices();
  for (py::ssize_t i = 0; i < n; ++i) {
    if (s(i) < 0 || s(i) >= devices || d(i) < 0 || d(i) >= devices)
      throw Error("transfers: row " + std::to_string(i) + ": device out of range");
    if (off(i) < 0 || off(i) > off(i + 1) || off(i + 1) > ids.shape(0))
      throw Error("transfers: row " + std::to_string(i) + ": bad chunk list");
    std::vector<ChunkId> chunks;
    for (std::int64_t k = off(i); k < off(i + 1); ++k) chunks.push_back(c(k));
    rebuilt.add_transfer(s(i), d(i), st(i), en(i), chunks, red(i),
                         multicast[static_cast<std::size_t>(i)]);
  }
  VerifyResult check;
  {
    py::gil_scoped_release release;
    check = verify_algorithm(rebuilt, r.outcome.network, r.outcome.options.link_model);
  }
  py::dict out;
  out["verified"] = check.ok;
  out["collective_time_us"] = to_micros(check.collective_time);
  out["transfers"] = n;
  out["verify_error"] = check.ok ? py::object(py::none()) : py::object(py::str(check.error));
  return out;
}

py::object write_formats(const NativeResult& r, const std::string& dir,
                         const std::string& formats) {
  nlohmann::ordered_json astra;
  {
    py::gil_scoped_release release;
    const Algorithm& a = r.outcome.run.result.algorithm;
    if (r.job.time_only)
      throw Error("--out cannot be combined with --time-only (no transfers are kept)");
    cli::write_algorithm_outputs(a, *r.full, dir, formats, {}, &r.outcome.network);
    astra = cli::astra_sim_expectation(a, *r.full, dir, formats);
  }
  return to_python(astra);
}

py::object compare(const NativeTopology& topology, const CollectiveArgs& args,
                   const std::string& algorithms) {
  cli::CompareJob job;
  job.topology = topology.options;
  args.apply(job.flags, job.collective);
  job.algorithms = algorithms;
  return json_without_gil([&] { return cli::run_compare(job, *topology.full).json; });
}

py::object bound(const NativeTopology& topology, const std::string& collective,
                 const std::string& size, const std::string& chunks_per_npu,
                 std::optional<NpuId> root, std::optional<std::string> npus,
                 const std::string& link_model) {
  cli::BoundJob job;
  job.topology = topology.options;
  job.collective = collective;
  job.size = size;
  job.flags.chunks_per_npu = chunks_per_npu;
  job.flags.link_model = link_model;
  if (root) {
    job.root = *root;
    job.root_given = true;
  }
  if (npus) job.npus = *npus;
  return json_without_gil([&] { return cli::run_bound(job, *topology.full).json; });
}

py::object workload(const NativeTopology& topology, const std::string& et,
                    const std::string& comm_groups, const std::string& out,
                    const std::string& algorithm, const std::string& chunks_per_npu,
                    std::uint64_t seed, double peak_tflops, double local_mem_bw) {
  cli::WorkloadJob job;
  job.peak_tflops = peak_tflops;
  job.local_mem_gbps = local_mem_bw;
  job.topology = topology.options;
  job.et_prefix = et;
  job.comm_groups = comm_groups;
  job.out_dir = out;
  job.algorithm = algorithm;
  job.chunks_per_npu = chunks_per_npu;
  job.seed = seed;
  return json_without_gil([&] { return cli::run_workload(job).json; });
}

py::object run_file(const std::string& path, const std::optional<NativeTopology>& topology,
                    const std::string& link_model, const std::optional<std::string>& size,
                    bool verify) {
  cli::FileRunOptions o;
  o.path = path;
  if (topology) {
    o.topology = topology->options;
    o.topology_given = true;
  }
  o.link_model = link_model;
  if (size) o.size = *size;
  return json_without_gil([&] {
    const cli::Outcome outcome = cli::run_file(o, /*nominal_size_if_missing=*/verify);
    nlohmann::ordered_json out = cli::outcome_json(outcome, o.link_model);
    if (verify) cli::require_verified(o, outcome);
    return out;
  });
}

}  // namespace
}  // namespace tacos::python

PYBIND11_MODULE(_tacos, m) {
  using namespace tacos::python;
  m.doc() = "Native bindings of tacos; use the `tacos` package, not this module.";
  py::register_exception<tacos::Error>(m, "Error", PyExc_ValueError);
  m.attr("version") = TACOS_VERSION;

  py::class_<NativeTopology>(m, "NativeTopology")
      .def_property_readonly("spec", [](const NativeTopology& t) { return t.options.topology; })
      .def_property_readonly("name", [](const NativeTopology& t) { return t.full->name(); })
      .def_property_readonly("npus", [](const NativeTopology& t) { return t.full->npus(); })
      .def_property_readonly("switches", [](const NativeTopology& t) { return t.full->switches(); })
      .def_property_readonly("links", [](const NativeTopology& t) { return t.full->num_links(); })
      .def("link_values", &link_values)
      .def("describe", [](const NativeTopology& t) {
        return json_without_gil([&] { return tacos::cli::describe_json(*t.full); });
      });
  // --size's parser, so that a sweep file's sizes are checked and read as the command reads them.
  m.def(
      "parse_size",
      [](const std::string& text, const std::string& what) {
        return tacos::parse_size(text, what);
      },
      py::arg("text"), py::arg("what"));
  m.def("load_topology", &load, py::arg("spec"), py::arg("bandwidth"), py::arg("latency"),
        py::arg("switch_model"));

  py::class_<CollectiveArgs>(m, "CollectiveArgs")
      .def(py::init<>())
      .def_readwrite("collective", &CollectiveArgs::collective)
      .def_readwrite("size", &CollectiveArgs::size)
      .def_readwrite("chunks_per_npu", &CollectiveArgs::chunks_per_npu)
      .def_readwrite("link_model", &CollectiveArgs::link_model)
      .def_readwrite("all_reduce_mode", &CollectiveArgs::all_reduce_mode)
      .def_readwrite("portfolio", &CollectiveArgs::portfolio)
      .def_readwrite("auto_budget", &CollectiveArgs::auto_budget)
      .def_readwrite("seed", &CollectiveArgs::seed)
      .def_readwrite("trials", &CollectiveArgs::trials)
      .def_readwrite("threads", &CollectiveArgs::threads)
      .def_readwrite("root", &CollectiveArgs::root)
      .def_readwrite("npus", &CollectiveArgs::npus);

  py::class_<NativeResult, std::shared_ptr<NativeResult>>(m, "NativeResult")
      .def("report", [](const NativeResult& r) { return to_python(r.report); })
      .def("transfer_columns", &transfer_columns)
      .def("verify_columns", &verify_columns, py::arg("src"), py::arg("dst"), py::arg("start"),
           py::arg("end"), py::arg("offsets"), py::arg("ids"), py::arg("reduce"),
           py::arg("multicast") = py::none())
      .def("write", &write_formats, py::arg("dir"), py::arg("formats"));
  m.def("synthesize", &synthesize, py::arg("topology"), py::arg("args"), py::arg("algorithm"),
        py::arg("time_only"));
  m.def("compare", &compare, py::arg("topology"), py::arg("args"), py::arg("algorithms"));
  // The one list of `tacos synthesize --json` keys, in order (src/cli/report.h).
  m.def("synthesize_keys", [] { return tacos::cli::synthesize_keys(); });
  // The library's registry (tacos/synthesis/request.h): name, one-line help, collectives.
  m.def("algorithms", [] {
    py::list entries;
    for (const tacos::AlgorithmInfo& info : tacos::algorithm_registry()) {
      py::list kinds;
      for (tacos::CollectiveKind kind : info.collectives) kinds.append(tacos::to_string(kind));
      entries.append(py::make_tuple(info.name, info.help, kinds));
    }
    return entries;
  });
  m.def("bound", &bound, py::arg("topology"), py::arg("collective"), py::arg("size"),
        py::arg("chunks_per_npu"), py::arg("root"), py::arg("npus"), py::arg("link_model"));
  m.def("workload", &workload, py::arg("topology"), py::arg("et"), py::arg("comm_groups"),
        py::arg("out"), py::arg("algorithm"), py::arg("chunks_per_npu"), py::arg("seed"),
        py::arg("peak_tflops"), py::arg("local_mem_bw"));
  m.def("run_file", &run_file, py::arg("path"), py::arg("topology"), py::arg("link_model"),
        py::arg("size"), py::arg("verify"));
}
