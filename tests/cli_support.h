#pragma once
// Runs the built `tacos` command from tests and captures its output.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tacos/common/error.h"
#include "test_temp_dir.h"

namespace tacos_test {

namespace fs = std::filesystem;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline fs::path scratch_dir(const std::string& name) {
  const fs::path dir = tacos_test::TestTempDir::path() / ("tacos_cli_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs `tacos ARGS` (through the shell) in folder `dir` (empty: the current one).
inline RunResult run_tacos_in(const fs::path& dir, const std::string& args) {
  // ctest runs tests in parallel processes: one stderr file per process and call.
  static int calls = 0;
  const fs::path err_file =
      tacos_test::TestTempDir::path() /
      ("tacos_cli_stderr_" + std::to_string(getpid()) + "_" + std::to_string(++calls) + ".txt");
  const std::string command = (dir.empty() ? "" : "cd '" + dir.string() + "' && ") +
                              std::string(TACOS_CLI_PATH) + " " + args + " 2>" + err_file.string();
  RunResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_file(err_file);
  fs::remove(err_file);
  return result;
}

inline RunResult run_tacos(const std::string& args) { return run_tacos_in({}, args); }

// What `f` throws as a tacos::Error ("(no error)" when it throws nothing).
inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tacos::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Every ctest process of the suite writes the parameter files at start-up: write a private
// copy and rename it into place, so no process ever reads a half-written file.
inline fs::path write_temp(const std::string& name, const std::string& text) {
  const fs::path path = tacos_test::TestTempDir::path() / name;
  const fs::path partial = path.string() + "." + std::to_string(getpid()) + ".partial";
  std::ofstream(partial) << text;
  fs::rename(partial, path);
  return path;
}

// Runs `tacos ARGS` and parses its one JSON object (an empty object, and a failed expectation,
// if it did not exit with 0).
inline nlohmann::json run_json(const std::string& args) {
  const RunResult r = run_tacos(args);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

}  // namespace tacos_test
