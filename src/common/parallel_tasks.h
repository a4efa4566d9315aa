#pragma once
// Independent tasks (the baselines of a comparison or a portfolio) on a few threads: each
// writes only its own result, so the outcome is the same at any thread count.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

namespace tacos::detail {

// Runs task(i) for every i in [0, count) on up to `threads` threads (0: every hardware thread),
// the calling thread included. After all have finished, the exception of the lowest index that
// threw (if any) is rethrown, as a loop over the indexes would have thrown it first.
inline void run_tasks(std::size_t count, int threads,
                      const std::function<void(std::size_t)>& task) {
  std::vector<std::exception_ptr> failures(count);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      try {
        task(i);
      } catch (...) {
        failures[i] = std::current_exception();
      }
    }
  };
  const unsigned cores = threads > 0 ? static_cast<unsigned>(threads)
                                     : std::max(1U, std::thread::hardware_concurrency());
  const std::size_t extra = std::min<std::size_t>(cores, count) - (count > 0 ? 1 : 0);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < extra; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // under a thread limit: the threads there are
    }
  }
  worker();
  for (std::thread& thread : pool) thread.join();
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

}  // namespace tacos::detail
