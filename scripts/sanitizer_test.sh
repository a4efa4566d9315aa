#!/usr/bin/env bash
# Builds the sanitizer build (scripts/sanitizer_build.sh) and runs the whole ctest suite in it.
# Any ASan or UBSan report aborts the process that made it, so its test fails. Extra arguments
# go to ctest.
#
# Sizes: the suite runs in full. TACOS_TEST_SCALE=sanitizer is exported (unless already set) for
# tests that are too slow under ASan to lower their sizes; docs/hardening.md lists those that do.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TACOS_ASAN_BUILD_DIR:-$root/build-asan}"
"$root/scripts/sanitizer_build.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TACOS_TEST_SCALE="${TACOS_TEST_SCALE:-sanitizer}"
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
