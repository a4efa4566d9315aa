#pragma once
// One private temporary folder per test process (ctest runs every test in a process of its
// own), made on first use under the system temp folder and removed when the process exits, so
// tests leave nothing behind in the system temp folder and never see each other's files.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace tacos_test {

class TestTempDir {
 public:
  static const std::filesystem::path& path() {
    static TestTempDir dir;  // made on first use, also during static initialisation
    return dir.path_;
  }

 private:
  TestTempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tacos_tests_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~TestTempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::filesystem::path path_;
};

// A path inside the process's temporary folder.
inline std::filesystem::path temp_path(const std::string& name) {
  return TestTempDir::path() / name;
}

}  // namespace tacos_test
