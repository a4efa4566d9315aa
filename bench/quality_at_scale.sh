#!/usr/bin/env bash
# Quality at 256 to 4,096 NPUs (issue "Near-optimal at 256 to 4,096 NPUs"): each case through
# `tacos compare --json` (64 MiB, --chunks-per-npu auto, --trials 1, tacos link model unless the
# case says otherwise) under /usr/bin/time (wall seconds, peak resident memory) and a timeout;
# writes one Markdown row per case into docs/quality.md between the quality-at-scale markers,
# keeping the rows of cases not run this time, and prints the table.
#
#   TACOS=build/tacos [CASES=REGEX] [TIMEOUT=600] [DOC=docs/quality.md] bench/quality_at_scale.sh
#
#   CASES    runs only the cases whose name (e.g. "torus2d:32x32 all-gather") matches the
#            extended regular expression (default: every case)
#   TIMEOUT  seconds per case (default 600); a case that takes longer is a row saying so
#   DOC      the page to write the table into (default docs/quality.md; DOC= writes nothing)
#   --list   prints the case names and exits
#
# Columns: tacos's time / the larger valid bound (the cut bound "lower" or the store-and-forward
# bound "s&f", docs/bound.md) and the chosen K; the best baseline and its ratio to the same bound;
# wall time, CPU time (user + system: the machine may be shared) and peak memory of the whole
# compare; the target (ratio, 60 s of wall time, 2 GiB) and whether each part is met. Exits non-zero when a case failed (not when a target is missed).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tacos="${TACOS:-$root/build/tacos}"
timeout_s="${TIMEOUT:-600}"
doc="${DOC-$root/docs/quality.md}"
filter="${CASES:-}"

# name | topology flags | collective | extra flags | target ratio
cases=(
  "torus2d:32x32 all-gather|--topology torus2d:32x32|all-gather||1.10"
  "torus2d:32x32 reduce-scatter|--topology torus2d:32x32|reduce-scatter||1.10"
  "torus2d:32x32 all-reduce|--topology torus2d:32x32|all-reduce||1.20"
  "torus2d:32x32 broadcast|--topology torus2d:32x32|broadcast||1.25"
  "torus2d:32x32 broadcast astra|--topology torus2d:32x32|broadcast|--link-model astra|1.25"
  "torus2d:32x32 all-to-all|--topology torus2d:32x32|all-to-all||1.15"
  "torus2d:16x16 broadcast|--topology torus2d:16x16|broadcast||1.25"
  "torus2d:64x64 all-gather|--topology torus2d:64x64|all-gather||1.10"
  "torus3d:8x8x8 all-gather|--topology torus3d:8x8x8|all-gather||1.10"
  "torus3d:8x8x8 reduce-scatter|--topology torus3d:8x8x8|reduce-scatter||1.10"
  "torus3d:8x8x8 all-reduce|--topology torus3d:8x8x8|all-reduce||1.20"
  "torus3d:8x8x8 broadcast|--topology torus3d:8x8x8|broadcast||1.25"
  "torus3d:8x8x8 all-to-all|--topology torus3d:8x8x8|all-to-all||1.15"
  "mesh2d:16x16 all-gather|--topology mesh2d:16x16|all-gather||1.10"
  "mesh2d:16x16 reduce-scatter|--topology mesh2d:16x16|reduce-scatter||1.10"
  "mesh2d:16x16 all-reduce|--topology mesh2d:16x16|all-reduce||1.20"
  "mesh2d:16x16 all-reduce astra|--topology mesh2d:16x16|all-reduce|--link-model astra|1.20"
  "mesh2d:16x16 broadcast|--topology mesh2d:16x16|broadcast||1.25"
  "mesh2d:16x16 all-to-all|--topology mesh2d:16x16|all-to-all||1.15"
  "hypercube:512 all-gather|--topology hypercube:512|all-gather||1.10"
  "hypercube:512 reduce-scatter|--topology hypercube:512|reduce-scatter||1.10"
  "hypercube:512 all-reduce|--topology hypercube:512|all-reduce||1.20"
  "hypercube:512 broadcast|--topology hypercube:512|broadcast||1.25"
  "hypercube:512 all-to-all|--topology hypercube:512|all-to-all||1.15"
  "dgx-h100:16 all-gather|--topology dgx-h100:16|all-gather||1.10"
  "dgx-h100:16 reduce-scatter|--topology dgx-h100:16|reduce-scatter||1.10"
  "dgx-h100:16 all-reduce|--topology dgx-h100:16|all-reduce||1.20"
  "dgx-h100:16 all-reduce astra|--topology dgx-h100:16|all-reduce|--link-model astra|1.20"
  "dgx-h100:16 broadcast|--topology dgx-h100:16|broadcast||1.25"
  "dgx-h100:16 broadcast astra|--topology dgx-h100:16|broadcast|--link-model astra|1.25"
  "dgx-h100:16 all-to-all|--topology dgx-h100:16|all-to-all||1.15"
  "dgx-h100:64 all-gather|--topology dgx-h100:64|all-gather||1.10"
  "dgx-h100:64 reduce-scatter|--topology dgx-h100:64|reduce-scatter||1.10"
  "dgx-h100:64 all-reduce|--topology dgx-h100:64|all-reduce||1.20"
  "dgx-h100:64 broadcast|--topology dgx-h100:64|broadcast||1.25"
  "dgx-h100:64 broadcast astra|--topology dgx-h100:64|broadcast|--link-model astra|1.25"
  "dgx-h100:64 all-to-all|--topology dgx-h100:64|all-to-all||1.15"
  "dgx-h100:128 all-gather|--topology dgx-h100:128|all-gather||1.10"
  "dgx-h100:128 all-reduce|--topology dgx-h100:128|all-reduce||1.20"
  "dgx-a100:32 all-gather|--topology dgx-a100:32|all-gather||1.10"
  "dgx-a100:32 reduce-scatter|--topology dgx-a100:32|reduce-scatter||1.10"
  "dgx-a100:32 all-reduce|--topology dgx-a100:32|all-reduce||1.20"
  "dgx-a100:32 broadcast|--topology dgx-a100:32|broadcast||1.25"
  "dgx-a100:32 broadcast astra|--topology dgx-a100:32|broadcast|--link-model astra|1.25"
  "dgx-a100:32 all-to-all|--topology dgx-a100:32|all-to-all||1.15"
  "fattree:32x16x32 all-gather|--topology fattree:32x16x32|all-gather||1.10"
  "fattree:32x16x32 reduce-scatter|--topology fattree:32x16x32|reduce-scatter||1.10"
  "fattree:32x16x32 all-reduce|--topology fattree:32x16x32|all-reduce||1.20"
  "fattree:32x16x32 broadcast|--topology fattree:32x16x32|broadcast||1.25"
  "fattree:32x16x32 all-to-all|--topology fattree:32x16x32|all-to-all||1.15"
  "fattree:32x32x32 all-gather|--topology fattree:32x32x32|all-gather||1.10"
  "fattree:32x32x32 reduce-scatter|--topology fattree:32x32x32|reduce-scatter||1.10"
  "fattree:32x32x32 all-reduce|--topology fattree:32x32x32|all-reduce||1.20"
)

if [[ "${1:-}" == "--list" ]]; then
  for c in "${cases[@]}"; do echo "${c%%|*}"; done
  exit 0
fi
if [[ ! -x "$tacos" ]]; then
  echo "quality_at_scale.sh: no tacos binary at $tacos (build it, or set TACOS=/path/to/tacos)" >&2
  exit 2
fi
if [[ ! -x /usr/bin/time ]]; then
  echo "quality_at_scale.sh: /usr/bin/time is needed for wall time and peak memory" >&2
  exit 2
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/tacos-at-scale.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
results="$tmp/results.tsv"  # name, status, json file, wall s, peak KiB, target, CPU s
: >"$results"
failed=0
for c in "${cases[@]}"; do
  IFS='|' read -r name topology collective extra target <<<"$c"
  if [[ -n "$filter" ]] && ! [[ "$name" =~ $filter ]]; then continue; fi
  json="$tmp/case$(wc -l <"$results").json"
  # shellcheck disable=SC2086
  /usr/bin/time -f '%e %M %U %S' -o "$tmp/time.txt" timeout --kill-after=10 "$timeout_s" \
    "$tacos" compare $topology --collective "$collective" --size 64MiB --chunks-per-npu auto \
    --trials 1 $extra --json >"$json" 2>"$tmp/err.txt"
  rc=$?
  # /usr/bin/time writes "Command exited with non-zero status N" first on failure.
  read -r wall peak user sys < <(tail -n 1 "$tmp/time.txt")
  cpu=$(awk -v u="${user:-0}" -v s="${sys:-0}" 'BEGIN { printf "%.1f", u + s }')
  status=ok
  if ((rc == 124 || rc == 137)); then
    status="timed out after ${timeout_s} s"
  elif ((rc != 0)); then
    status="failed (exit $rc): $(head -n 1 "$tmp/err.txt")"
    failed=1
    echo "quality_at_scale.sh: $name failed:" >&2
    cat "$tmp/err.txt" >&2
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$json" "$wall" "$peak" "$target" \
    "$cpu" >>"$results"
  echo "quality_at_scale.sh: $name: $status, ${wall} s" >&2
done

/usr/bin/python3 - "$results" "$doc" "$tacos" "${cases[@]}" <<'EOF'
import json, os, sys

results_path, doc, tacos = sys.argv[1:4]
case_names = [c.split("|")[0] for c in sys.argv[4:]]
targets = {c.split("|")[0]: c.split("|")[4] for c in sys.argv[4:]}
BEGIN = "<!-- quality-at-scale: begin (bench/quality_at_scale.sh writes this table) -->"
END = "<!-- quality-at-scale: end -->"
HEADER = ("| case | tacos / larger bound (which) | K | best baseline / same bound | wall (s) | "
          "CPU (s) | peak (GiB) | target | met? |")
RULE = "|---|---:|---:|---|---:|---:|---:|---|---|"
WALL_LIMIT, GIB_LIMIT = 60.0, 2.0
BOUND_NAMES = {"lower_bound": "lower", "store_and_forward_bound": "s&f"}


def row_for(name, status, json_path, wall, peak_kib, target, cpu):
    wall_s = float(wall) if wall else None
    gib = int(peak_kib) / 2**20 if peak_kib else None
    wall_text = "%.1f" % wall_s if wall_s is not None else "-"
    gib_text = "%.2f" % gib if gib is not None else "-"
    target_text = "%s, 60 s, 2 GiB" % target
    if status != "ok":
        return "| %s | %s | - | - | %s | %s | %s | %s | no |" % (
            name, status, wall_text, cpu, gib_text, target_text)
    results = json.load(open(json_path))["results"]
    t = next(r for r in results if r["algorithm"] == "tacos")
    ratio = t["binding_ratio"]
    bound = t["binding_bound_us"]
    which = BOUND_NAMES.get(t["binding_bound"], t["binding_bound"] or "-")
    ran = [r for r in results
           if r["algorithm"] != "tacos" and r["collective_time_us"] is not None]
    skipped = [r["algorithm"] for r in results
               if r["algorithm"] != "tacos" and r["collective_time_us"] is None
               and "budget" in (r["skipped_reason"] or "")]
    if ran and bound:
        b = min(ran, key=lambda r: r["collective_time_us"])
        best = "%s %.3f" % (b["algorithm"], b["collective_time_us"] / bound)
    else:
        best = "-"
    if skipped:
        best += " (over budget: %s)" % ", ".join(skipped)
    misses = []
    if ratio is None or ratio > float(target):
        misses.append("ratio")
    if wall_s is None or wall_s > WALL_LIMIT:
        misses.append("time")
    if gib is None or gib > GIB_LIMIT:
        misses.append("memory")
    met = "yes" if not misses else "no: " + ", ".join(misses)
    ratio_text = "%.3f (%s)" % (ratio, which) if ratio is not None else "-"
    return "| %s | %s | %d | %s | %s | %s | %s | %s | %s |" % (
        name, ratio_text, t["chunks_per_npu"], best, wall_text, cpu, gib_text, target_text, met)


rows = {}
if doc and os.path.exists(doc):
    text = open(doc).read()
    if BEGIN in text and END in text:
        for line in text.split(BEGIN)[1].split(END)[0].splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 9 and cells[0] in targets and "not run yet" not in line:
                rows[cells[0]] = line.strip()
for line in open(results_path):
    name, status, json_path, wall, peak, target, cpu = line.rstrip("\n").split("\t")
    rows[name] = row_for(name, status, json_path, wall, peak, target, cpu)
table = [HEADER, RULE]
for name in case_names:
    table.append(rows.get(name) or "| %s | not run yet | - | - | - | - | - | %s, 60 s, 2 GiB | - |"
                 % (name, targets[name]))
print("\n".join(table))
if doc:
    text = open(doc).read()
    if BEGIN not in text or END not in text:
        sys.exit("quality_at_scale.sh: %s has no quality-at-scale markers" % doc)
    before, rest = text.split(BEGIN, 1)
    after = rest.split(END, 1)[1]
    tmp = doc + ".tmp"
    with open(tmp, "w") as out:
        out.write(before + BEGIN + "\n" + "\n".join(table) + "\n" + END + after)
    os.replace(tmp, doc)
EOF
exit "$failed"
