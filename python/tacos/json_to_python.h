#pragma once
// nlohmann JSON -> Python objects, so the module hands Python exactly the values (and the key
// order) that the command line's --json prints.
#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

namespace tacos::python {

inline pybind11::object to_python(const nlohmann::ordered_json& value) {
  namespace py = pybind11;
  switch (value.type()) {
    case nlohmann::ordered_json::value_t::null:
      return py::none();
    case nlohmann::ordered_json::value_t::boolean:
      return py::bool_(value.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return py::int_(value.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return py::int_(value.get<std::uint64_t>());
    case nlohmann::ordered_json::value_t::number_float:
      return py::float_(value.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return py::str(value.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      py::list list;
      for (const auto& item : value) list.append(to_python(item));
      return list;
    }
    case nlohmann::ordered_json::value_t::object: {
      py::dict dict;
      for (const auto& [key, item] : value.items()) dict[py::str(key)] = to_python(item);
      return dict;
    }
    default:
      return py::none();  // binary and discarded values never occur in tacos reports
  }
}

// Runs `make_json` (a command's work, returning its --json) with the GIL released, so other
// Python threads go on meanwhile, and converts the result.
template <class MakeJson>
pybind11::object json_without_gil(const MakeJson& make_json) {
  nlohmann::ordered_json out;
  {
    pybind11::gil_scoped_release release;
    out = make_json();
  }
  return to_python(out);
}

}  // namespace tacos::python
