#pragma once
// Progress on stderr for long runs: only when stderr is a terminal and only after ~2 seconds.
#include <chrono>
#include <mutex>
#include <string>

namespace tacos::cli {

class ProgressReporter {
 public:
  explicit ProgressReporter(std::string label);
  ~ProgressReporter();
  void update(double fraction);
  void finish();

 private:
  std::string label_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
  std::mutex mutex_;
};

}  // namespace tacos::cli
