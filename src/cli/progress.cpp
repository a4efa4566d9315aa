#include "progress.h"

#include <unistd.h>

#include <cstdio>

namespace tacos::cli {

ProgressReporter::ProgressReporter(std::string label)
    : label_(std::move(label)),
      enabled_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

ProgressReporter::~ProgressReporter() { finish(); }

void ProgressReporter::update(double fraction) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 2.0) return;
  if (shown_ && std::chrono::duration<double>(now - last_print_).count() < 0.25) return;
  last_print_ = now;
  shown_ = true;
  if (fraction > 1.0) fraction = 1.0;
  if (fraction > 0.01) {
    const double left = elapsed * (1.0 - fraction) / fraction;
    std::fprintf(stderr, "\r%s: %5.1f%%  elapsed %.1f s, about %.1f s left   ", label_.c_str(),
                 100.0 * fraction, elapsed, left);
  } else {
    std::fprintf(stderr, "\r%s: %5.1f%%  elapsed %.1f s   ", label_.c_str(), 100.0 * fraction,
                 elapsed);
  }
  std::fflush(stderr);
}

void ProgressReporter::finish() {
  std::lock_guard lock(mutex_);
  if (shown_) {
    std::fprintf(stderr, "\n");
    std::fflush(stderr);
    shown_ = false;
  }
  enabled_ = false;
}

}  // namespace tacos::cli
