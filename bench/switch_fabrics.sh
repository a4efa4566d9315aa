#!/usr/bin/env bash
# Switch fabrics quality table (issue "Switch fabrics"): for each fabric, collective and link
# model, tacos and every baseline with --chunks-per-npu auto, 64 MiB, 8 trials, through
# `tacos compare --json`; prints one markdown row per case: tacos's K and ratio to the lower
# bound (and, under the tacos link model, to the larger of it and the store-and-forward bound),
# the best baseline and its ratio, whether tacos is at least as fast, and whose schedule
# the portfolio kept (with the greedy's own ratio when a baseline won; PORTFOLIO=off: the greedy).
# Usage: TACOS=build/tacos [COLLECTIVES="all-reduce ..."] bench/switch_fabrics.sh [MODELS...]
# (default: astra tacos; every collective of the table)
set -euo pipefail
tacos="${TACOS:-build/tacos}"
portfolio="${PORTFOLIO:-on}"
models=("$@")
((${#models[@]})) || models=(astra tacos)
fabrics=("dgx-a100:2" "dgx-a100:4" "dgx-h100:2" "dgx-h100:4" "switch:8" "switch:16"
         "fattree:8x4x2 --bandwidth 50,200")
echo "| topology | collective | link model | tacos K | tacos / bound | tacos / max(bound, s&f bound) | best baseline / bound | tacos <= baseline | schedule kept |"
echo "|---|---|---|---:|---:|---:|---|---|---|"
for model in "${models[@]}"; do
  for fabric in "${fabrics[@]}"; do
    for collective in ${COLLECTIVES:-all-gather reduce-scatter all-reduce broadcast}; do
      # shellcheck disable=SC2086
      "$tacos" compare --topology $fabric --collective "$collective" --size 64MiB \
        --chunks-per-npu auto --trials 8 --link-model "$model" --portfolio "$portfolio" --json |
        /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = [r for r in d["results"] if r["collective_time_us"] is not None]
t = next(r for r in rows if r["algorithm"] == "tacos")
base = [r for r in rows if r["algorithm"] != "tacos"]
b = min(base, key=lambda r: r["collective_time_us"]) if base else None
fabric, collective, model = sys.argv[1:4]
bs = "%s %.3f" % (b["algorithm"], b["bound_ratio"]) if b else "-"
ok = "yes" if not b or t["collective_time_us"] <= b["collective_time_us"] * 1.000001 else "NO"
w = t.get("portfolio_winner") or "tacos"
g = t["greedy_time_us"]
kept = w if w == "tacos" else "%s (greedy %s)" % (w, "%.3f" % (g / t["lower_bound_us"]) if g else "not finished")
# Under the tacos link model the larger of the two bounds is the bound that holds.
sf = "%.3f" % min(t["bound_ratio"], t["store_and_forward_ratio"]) if t["store_and_forward_ratio"] else "-"
print("| %s | %s | %s | %d | %.3f | %s | %s | %s | %s |" % (fabric, collective, model, t["chunks_per_npu"], t["bound_ratio"], sf, bs, ok, kept))
' "$fabric" "$collective" "$model"
    done
  done
done
