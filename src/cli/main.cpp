#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>

#include "commands.h"
#include "tacos/common/error.h"

int main(int argc, char** argv) {
  CLI::App app{
      "tacos " TACOS_VERSION
      ": synthesizes topology-aware collective communication algorithms (TACOS method) and\n"
      "verifies and simulates them. Sizes take B, KB, MB, GB (10^3) or KiB, MiB, GiB (2^10)\n"
      "suffixes. Link bandwidth given as input is GB/s meaning 2^30 bytes per second (ASTRA-sim's\n"
      "convention); reported algbw and busbw are GB/s meaning 10^9 bytes per second (nccl-tests'\n"
      "convention). Times print in microseconds."};
  app.name("tacos");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tacos ") + TACOS_VERSION);
  tacos::cli::add_synthesize_command(app);
  tacos::cli::add_topology_command(app);
  tacos::cli::add_bound_command(app);
  tacos::cli::add_visualize_command(app);
  tacos::cli::add_view_command(app);
  tacos::cli::add_compare_command(app);
  tacos::cli::add_simulate_command(app);
  tacos::cli::add_verify_command(app);
  tacos::cli::add_convert_command(app);
  tacos::cli::add_astra_run_command(app);
  tacos::cli::add_workload_command(app);
  if (argc < 2) {
    // No subcommand: say what there is (CLI11 alone would only say one is required).
    std::fputs(app.help().c_str(), stderr);
    return 1;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0 through CLI11; a bad command line is one line and exit 1 like
    // any other bad input (CLI11's own codes, 105, 106, ..., are not tacos's contract, nor is
    // its second line "Run with --help for more information.").
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::fprintf(stderr, "tacos: error: %s\n", tacos::cli::describe_parse_error(app, e).c_str());
    return 1;
  } catch (const tacos::Error& e) {
    std::fprintf(stderr, "tacos: error: %s\n", e.what());
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // A file the user named cannot be read or written (too long a name, a file where a folder
    // is needed, no permission, ...): the user's input, not tacos's fault.
    if (e.path1().empty())
      std::fprintf(stderr, "tacos: error: %s\n", e.what());
    else
      std::fprintf(stderr, "tacos: error: %s: %s\n", e.path1().c_str(), e.code().message().c_str());
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
