#!/usr/bin/env bash
# Builds the sanitizer build (scripts/sanitizer_build.sh) and runs the whole ctest suite in it.
# Any ASan or UBSan report aborts the process that made it, so its test fails. Extra arguments
# go to ctest.
#
# Sizes: the suite runs in full but for the browser tests (below). Speed tests multiply their
# wall-clock limits under ASan, and TACOS_TEST_SCALE=small (exported here unless set) makes the
# few tests that would pass ctest's 600 s under the sanitizers run a smaller instance
# (tests/test_scale.h, docs/hardening.md). Scratch files go to BUILD/test-tmp (TEST_TMPDIR),
# apart from other runs.
#
# Left out: tests labelled `browser` (ViewerBrowser: python and headless Chromium driving
# `tacos view` pages). They exercise no C++ beyond what the trace and viewer tests of
# tacos_tests already run here under the sanitizers, and their 5 s load-and-animate limit
# would time a sanitized page writer.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TACOS_ASAN_BUILD_DIR:-$root/build-asan}"
"$root/scripts/sanitizer_build.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TACOS_TEST_SCALE="${TACOS_TEST_SCALE:-small}"
export TEST_TMPDIR="$build/test-tmp"
rm -rf "$TEST_TMPDIR" && mkdir -p "$TEST_TMPDIR"
cd "$build"
ctest --output-on-failure -j "$(nproc)" -LE browser "$@"
