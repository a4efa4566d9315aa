#!/usr/bin/env bash
# The sanitizer build (CI's second build): clang, AddressSanitizer + UndefinedBehaviorSanitizer
# with no recovery, -O1 -g, the libFuzzer targets included (the library is instrumented for
# them, so one build serves the test suite and the fuzzers). Configures and builds into
# build-asan/ (TACOS_ASAN_BUILD_DIR); Google Benchmark programs are left out.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TACOS_ASAN_BUILD_DIR:-$root/build-asan}"
cxx="${TACOS_ASAN_CXX:-clang++-14}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DTACOS_SANITIZE=ON -DTACOS_FUZZ=ON \
  -DTACOS_BUILD_BENCH=OFF >&2
cmake --build "$build" -j "$(nproc)" >&2
