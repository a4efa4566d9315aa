#!/usr/bin/env bash
# Quality suite (issue "Near-optimal everywhere"): for each topology, collective, chunk count and
# size, tacos and every baseline through `tacos compare --json` (same K, same trials); prints one
# markdown row per case (tacos's K, time and ratio to the lower bound, the best baseline and its
# ratio, whether tacos is within 0.1% of it or faster, and whose schedule the portfolio kept with
# the greedy's own ratio when a baseline won) and then the cases that miss the targets.
# PORTFOLIO=off measures the pure TACOS greedy.
# Usage: TACOS=build/tacos [TOPOLOGIES="ring:8;fc:8"] [COLLECTIVES="all-gather ..."]
#        [CHUNKS="1 4 auto"] [SIZES="64MiB"] [TRIALS=8] [MODEL=tacos] bench/quality.sh
set -euo pipefail
tacos="${TACOS:-build/tacos}"
IFS=';' read -r -a topologies <<<"${TOPOLOGIES:-ring:8;fc:8;switch:8;mesh2d:4x4;mesh2d:4x4 --bandwidth 50,25;mesh2d:8x8;torus2d:4x4;torus3d:3x3x3;hypercube:16;ring:4,ring:4;dgx1}"
collectives=(${COLLECTIVES:-all-gather reduce-scatter all-reduce broadcast reduce gather scatter all-to-all})
chunks=(${CHUNKS:-1 4 auto})
sizes=(${SIZES:-1MiB 64MiB})
trials="${TRIALS:-8}"
model="${MODEL:-tacos}"
portfolio="${PORTFOLIO:-on}"
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
echo "| topology | collective | size | K | tacos K | tacos (us) | tacos / bound | best baseline / bound | tacos <= baseline x 1.001 | schedule kept |"
echo "|---|---|---|---|---:|---:|---:|---|---|---|"
for topology in "${topologies[@]}"; do
  for collective in "${collectives[@]}"; do
    for size in "${sizes[@]}"; do
      for k in "${chunks[@]}"; do
        # shellcheck disable=SC2086
        "$tacos" compare --topology $topology --collective "$collective" --size "$size" \
          --chunks-per-npu "$k" --trials "$trials" --link-model "$model" \
          --portfolio "$portfolio" --json |
          /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
topology, collective, size, k = sys.argv[1:5]
rows = [r for r in d["results"] if r["collective_time_us"] is not None]
t = next(r for r in rows if r["algorithm"] == "tacos")
base = [r for r in rows if r["algorithm"] != "tacos"]
b = min(base, key=lambda r: r["collective_time_us"]) if base else None
bs = "%s %.3f" % (b["algorithm"], b["bound_ratio"]) if b else "-"
ok = "yes" if not b or t["collective_time_us"] <= b["collective_time_us"] * 1.001 else "NO"
w = t.get("portfolio_winner") or "tacos"
g = t["greedy_time_us"]
kept = w if w == "tacos" else "%s (greedy %s)" % (w, "%.3f" % (g / t["lower_bound_us"]) if g else "not finished")
print("| %s | %s | %s | %s | %d | %.3f | %.3f | %s | %s | %s |" % (topology, collective, size,
      k, t["chunks_per_npu"], t["collective_time_us"], t["bound_ratio"], bs, ok, kept))
' "$topology" "$collective" "$size" "$k" | tee -a "$rows"
      done
    done
  done
done
# The targets of "Near-optimal everywhere" (64 MiB, K = auto): All-Gather, Reduce-Scatter <= 1.10
# x bound; All-Reduce <= 1.20; the rest <= 1.25; and tacos <= best baseline x 1.001 everywhere.
/usr/bin/python3 - "$rows" <<'EOF'
import sys
limits = {"all-gather": 1.10, "reduce-scatter": 1.10, "all-reduce": 1.20}
missed = []
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    topology, collective, size, k, _, _, ratio, _, ok = cells[:9]
    if ok != "yes":
        missed.append("slower than a baseline: " + line.strip())
    if k == "auto" and size == "64MiB" and float(ratio) > limits.get(collective, 1.25):
        missed.append("above %.2f x bound: %s" % (limits.get(collective, 1.25), line.strip()))
print()
print("%d cases missing a target" % len(missed))
for m in missed:
    print("- " + m)
EOF
