// CLI11's parse errors as tacos's one-line errors.
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "commands.h"

namespace tacos::cli {
namespace {

// The option called `name` in the subcommand the command line chose (else anywhere in `app`).
const CLI::Option* find_option(CLI::App& app, const std::string& name) {
  const CLI::Option* fallback = nullptr;
  std::function<const CLI::Option*(CLI::App&)> walk = [&](CLI::App& a) -> const CLI::Option* {
    if (const CLI::Option* o = a.get_option_no_throw(name)) {
      if (a.parsed()) return o;
      if (fallback == nullptr) fallback = o;
    }
    for (CLI::App* sub : a.get_subcommands([](CLI::App*) { return true; }))
      if (const CLI::Option* o = walk(*sub)) return o;
    return nullptr;
  };
  const CLI::Option* found = walk(app);
  return found != nullptr ? found : fallback;
}

std::string expected_of(const std::string& type) {
  if (type == "INT") return "an integer";
  if (type == "UINT") return "a non-negative integer";
  if (type == "FLOAT" || type == "NUMBER") return "a number";
  if (type == "TEXT") return "text";
  return type.empty() ? "a valid value" : type;
}

}  // namespace

std::string describe_parse_error(CLI::App& app, const CLI::ParseError& error) {
  const std::string message = error.what();
  // "Could not convert: --root = 2147483648": name the flag and what it takes.
  static const std::regex conversion(R"(Could not convert: (\S+) = (.*))");
  std::smatch m;
  if (std::regex_match(message, m, conversion)) {
    const std::string name = m[1];
    const std::string value = m[2];
    const CLI::Option* option = find_option(app, name);
    const std::string type = option != nullptr ? option->get_type_name() : std::string();
    static const std::regex integer(R"([+-]?[0-9]+)");
    const bool out_of_range = (type == "INT" || type == "UINT") && std::regex_match(value, integer);
    return name + ": expected " + expected_of(type) + ", got '" + value + "'" +
           (out_of_range ? " (out of range)" : "");
  }
  // Every other CLI11 message is one line already; a line break would split it.
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  return line;
}

}  // namespace tacos::cli
