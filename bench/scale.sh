#!/usr/bin/env bash
# Scale run: synthesizes a 64 MiB All-Gather with the built `tacos` on each topology and prints
# a Markdown table with the synthesized collective time, the synthesis time and peak memory.
#
#   bench/scale.sh [TOPOLOGY...] [-- EXTRA_FLAGS...]
#
#   TOPOLOGY     generator specs (default: torus2d:8x8 16x16 32x32 45x45 64x64)
#   EXTRA_FLAGS  passed through to `tacos synthesize`, e.g. -- --time-only --chunks-per-npu 2.
#                An argument starting with '-' before any '--' also starts the pass-through
#                list (so `bench/scale.sh torus2d:8x8 --time-only` works).
#   TACOS        the tacos binary (default: build/tacos under the repository root)
#   SIZE         collective size (default: 64MiB)
#
# Peak memory is the maximum resident set size from `/usr/bin/time -f %M`; without
# /usr/bin/time it is read from the JSON (`peak_memory_mib`) when tacos reports it, else "n/a".
# Exits non-zero if any run failed (its row says so; its stderr goes to our stderr).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tacos="${TACOS:-$root/build/tacos}"
size="${SIZE:-64MiB}"

topologies=()
extra=()
while (($#)); do
  case "$1" in
    --) shift; extra+=("$@"); break ;;
    -h | --help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) extra+=("$@"); break ;;
    *) topologies+=("$1"); shift ;;
  esac
done
if ((${#topologies[@]} == 0)); then
  topologies=(torus2d:8x8 torus2d:16x16 torus2d:32x32 torus2d:45x45 torus2d:64x64)
fi

if [[ ! -x "$tacos" ]]; then
  echo "scale.sh: no tacos binary at $tacos (build it, or set TACOS=/path/to/tacos)" >&2
  exit 2
fi
have_time=0
[[ -x /usr/bin/time ]] && have_time=1

tmp="$(mktemp -d "${TMPDIR:-/tmp}/tacos-scale.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# json_value FILE KEY: the scalar value of "KEY" in tacos's pretty-printed JSON, or "".
json_value() {
  sed -n -E "s/^[[:space:]]*\"$2\":[[:space:]]*\"?([^\",]*)\"?,?[[:space:]]*\$/\1/p" "$1" | head -n 1
}

echo "tacos synthesize --size $size${extra[*]:+ ${extra[*]}} ($tacos)"
echo
echo "| topology | NPUs | transfers | collective time (us) | synthesis (s) | wall (s) | peak memory (MiB) |"
echo "|---|---:|---:|---:|---:|---:|---:|"

failed=0
for topology in "${topologies[@]}"; do
  out="$tmp/out.json"
  err="$tmp/err.txt"
  rss="$tmp/rss.txt"
  : >"$rss"
  cmd=("$tacos" synthesize --topology "$topology" --size "$size" --json "${extra[@]}")
  start=$(date +%s.%N)
  if ((have_time)); then
    /usr/bin/time -f '%M' -o "$rss" "${cmd[@]}" >"$out" 2>"$err"
  else
    "${cmd[@]}" >"$out" 2>"$err"
  fi
  rc=$?
  end=$(date +%s.%N)
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
  if ((rc != 0)); then
    failed=1
    echo "| $topology | failed (exit $rc) | | | | $wall | |"
    {
      echo "scale.sh: $topology failed:"
      cat "$err"
    } >&2
    continue
  fi
  npus=$(json_value "$out" npus)
  transfers=$(json_value "$out" transfers)
  time_us=$(json_value "$out" collective_time_us)
  synth=$(json_value "$out" synthesis_seconds)
  [[ -n "$synth" ]] && synth=$(awk -v s="$synth" 'BEGIN { printf "%.3f", s }')
  # /usr/bin/time writes "Command exited..." lines first on failure; the last line is %M (KiB).
  peak_kib=$(tail -n 1 "$rss" 2>/dev/null | tr -d '[:space:]')
  if [[ "$peak_kib" =~ ^[0-9]+$ ]]; then
    peak=$(awk -v k="$peak_kib" 'BEGIN { printf "%.1f", k / 1024 }')
  else
    peak=$(json_value "$out" peak_memory_mib)
    [[ -z "$peak" ]] && peak="n/a"
  fi
  [[ -n "$time_us" ]] && time_us=$(awk -v t="$time_us" 'BEGIN { printf "%.3f", t }')
  echo "| $topology | ${npus:-?} | ${transfers:-?} | ${time_us:-?} | ${synth:-?} | $wall | $peak |"
done
exit "$failed"
