#pragma once
// The two-thread split of a large round: the caller cuts the work at an NPU boundary into two
// halves that touch disjoint state and applies their effects afterwards in one fixed order, so
// which thread ran which half, or whether a second thread was available at all, cannot change
// the result.
#include <system_error>
#include <thread>

namespace tacos::detail {

// Runs `second` on a helper thread and `first` on this one, and returns when both are done.
// Under a process or thread limit both run on this thread.
template <class First, class Second>
void run_on_two_threads(const First& first, const Second& second) {
  std::thread helper;
  try {
    helper = std::thread(second);
  } catch (const std::system_error&) {
    second();
  }
  first();
  if (helper.joinable()) helper.join();
}

}  // namespace tacos::detail
