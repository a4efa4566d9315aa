#pragma once
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

namespace tacos::cli {

// Each adds its subcommand to `app`; the subcommand's callback does the work and throws
// tacos::Error on bad input.
void add_synthesize_command(CLI::App& app);
void add_topology_command(CLI::App& app);
void add_bound_command(CLI::App& app);
void add_visualize_command(CLI::App& app);
void add_view_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_verify_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_astra_run_command(CLI::App& app);
void add_workload_command(CLI::App& app);

// Adds the subcommand `name` to `app`, run by `command->run()` when chosen; the callback keeps
// the command (its flags' storage) alive as long as `app`.
template <class Command>
CLI::App* add_command(CLI::App& app, const std::shared_ptr<Command>& command, std::string name,
                      std::string help) {
  CLI::App* sub = app.add_subcommand(std::move(name), std::move(help));
  sub->callback([command] { command->run(); });
  return sub;
}

// A CLI11 parse error of `app` as one line naming the flag and what it expects (CLI11 alone
// prints "Could not convert: --root = x" and a second line pointing at --help).
std::string describe_parse_error(CLI::App& app, const CLI::ParseError& error);

}  // namespace tacos::cli
