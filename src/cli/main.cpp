#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <new>

#include "commands.h"
#include "tacos/common/error.h"

int main(int argc, char** argv) {
  CLI::App app{
      "tacos " TACOS_VERSION
      ": synthesizes topology-aware collective communication algorithms (TACOS method) and\n"
      "verifies and simulates them. Sizes take B, KB, MB, GB (10^3) or KiB, MiB, GiB (2^10)\n"
      "suffixes; bandwidth is GB/s meaning 2^30 bytes per second; times print in microseconds."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tacos ") + TACOS_VERSION);
  tacos::cli::add_synthesize_command(app);
  tacos::cli::add_topology_command(app);
  tacos::cli::add_bound_command(app);
  tacos::cli::add_visualize_command(app);
  tacos::cli::add_compare_command(app);
  tacos::cli::add_simulate_command(app);
  tacos::cli::add_verify_command(app);
  tacos::cli::add_convert_command(app);
  tacos::cli::add_astra_run_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message; a bad command line is exit 1 like any other bad input (its own
    // codes, 105, 106, ..., are not tacos's contract), --help and --version exit 0.
    return app.exit(e) == 0 ? 0 : 1;
  } catch (const tacos::Error& e) {
    std::fprintf(stderr, "tacos: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "tacos: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tacos: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
