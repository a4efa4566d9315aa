#pragma once
// Test sizes and wall-clock limits under the sanitizer build (scripts/sanitizer_test.sh: ASan +
// UBSan, -O1), which runs 10 to 30 times slower than Release on cores it shares with other work.
#include <cstdlib>
#include <string_view>

namespace tacos_test {

// Wall-clock limits of the speed tests are multiplied by this factor in a build with
// AddressSanitizer (detected at compile time); the work each test does stays the same.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr double kSpeedLimitFactor = 30;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr double kSpeedLimitFactor = 30;
#else
inline constexpr double kSpeedLimitFactor = 1;
#endif
#else
inline constexpr double kSpeedLimitFactor = 1;
#endif

// TACOS_TEST_SCALE=small (set by scripts/sanitizer_test.sh): the few tests that would take more
// than ctest's 600 s under the sanitizers run a smaller instance of the same check. Each such
// test says which size it uses; docs/hardening.md lists them.
inline bool small_test_sizes() {
  const char* scale = std::getenv("TACOS_TEST_SCALE");
  return scale != nullptr && std::string_view(scale) == "small";
}

}  // namespace tacos_test
