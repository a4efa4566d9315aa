#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS each (default 60) and fails on any crash, sanitizer
# report, timeout (10 s per input), out-of-memory (2048 MiB) or leak.
#
#   bench/fuzz.sh [SECONDS] [TARGET...]
#
#   TARGET       names under fuzz/ (default: all): topology_yaml astra_network_yaml msccl_xml
#                algorithm_json chakra units topology_spec
#   FUZZ_JOBS    targets run at once (default 2)
#   FUZZ_SEED    libFuzzer's -seed (default: random; .ci/run fixes it so that CI replays the same
#                mutations run after run, and a local run with the same seed reproduces it)
#   TACOS_ASAN_BUILD_DIR  the sanitizer build holding the fuzzers (default build-asan; built
#                here by scripts/sanitizer_build.sh)
#
# Seeds come from fuzz/corpus/TARGET/ (read only); inputs the fuzzer finds go to
# BUILD/fuzz-corpus/TARGET/ and a crashing input to BUILD/fuzz-artifacts/. Prints one line per
# target: its executions, executions per second and the result.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TACOS_ASAN_BUILD_DIR:-$root/build-asan}"
seconds="${1:-60}"
shift || true
targets=("$@")
((${#targets[@]})) ||
  targets=(topology_yaml astra_network_yaml msccl_xml algorithm_json chakra units topology_spec)
jobs="${FUZZ_JOBS:-2}"
"$root/scripts/sanitizer_build.sh" || exit 1

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
logs="$build/fuzz-logs"
mkdir -p "$logs" "$build/fuzz-artifacts"

run_one() {
  local target="$1" work="$build/fuzz-corpus/$1"
  mkdir -p "$work"
  TMPDIR="$build/fuzz-tmp" && mkdir -p "$TMPDIR" && export TMPDIR
  "$build/fuzz/${target}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 ${FUZZ_SEED:+-seed="$FUZZ_SEED"} -artifact_prefix="$build/fuzz-artifacts/${target}-" \
    "$work" "$root/fuzz/corpus/$target" >"$logs/$target.log" 2>&1
  echo $? >"$logs/$target.rc"
}

status=0
started=()
for target in "${targets[@]}"; do
  if [ ! -x "$build/fuzz/${target}_fuzz" ]; then
    echo "fuzz: no target $target" >&2
    status=1
    continue
  fi
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
  rm -f "$logs/$target.rc"
  run_one "$target" &
  started+=("$target")
done
wait
for target in "${started[@]}"; do
  rc=$(cat "$logs/$target.rc" 2>/dev/null || echo 99)
  log="$logs/$target.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if ((rc == 0)); then
    printf 'fuzz %-20s %10s executions (%s/s) ok\n' "$target" "${execs:-?}" "${rate:-?}"
  else
    printf 'fuzz %-20s %10s executions FAILED (exit %d), log: %s\n' "$target" "${execs:-?}" \
      "$rc" "$log"
    grep -m 5 -E 'ERROR|runtime error|Test unit written|deadly signal' "$log" >&2 || true
    status=1
  fi
done
exit $status
