#!/usr/bin/env bash
# In-network reduction table (issue "In-network reduction"): per fabric with reducing switches,
# collective and link model, `tacos compare --json` at 64 MiB with --chunks-per-npu auto and one
# trial; prints one markdown row per case: tacos (K, time, ratio to the lower bound, algbw and
# busbw), NCCL's algorithm for the fabric (nvls in one NVLink domain, else the faster of
# nvls-tree and collnet), ring, the bound, and the wall time of the whole compare.
# Usage: TACOS=build/tacos bench/in_network.sh [CASE...]   (CASE: "SPEC COLLECTIVE MODEL")
set -euo pipefail
tacos="${TACOS:-build/tacos}"
cases=("$@")
if ((${#cases[@]} == 0)); then
  cases=("switch:8:nvls all-reduce astra" "switch:8:nvls all-reduce tacos"
         "dgx-h100:1:nvls all-reduce astra" "dgx-h100:1:nvls all-reduce tacos"
         "dgx-h100:1:nvls reduce-scatter astra" "dgx-h100:1:nvls all-gather astra"
         "dgx-h100:4:nvls all-reduce astra" "dgx-h100:4:nvls:sharp all-reduce astra"
         "gb200-nvl72:1:nvls all-reduce astra" "gb200-nvl72:2:nvls all-reduce astra")
fi
echo "| fabric | collective | link model | tacos K | tacos (us) | tacos / bound | algbw / busbw (GB/s) | NCCL's | NCCL's / bound | ring / bound | bound (us) | compare (s) |"
echo "|---|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|"
for c in "${cases[@]}"; do
  read -r spec collective model <<<"$c"
  start=$(date +%s.%N)
  json=$("$tacos" compare --topology "$spec" --collective "$collective" --size 64MiB \
    --chunks-per-npu auto --trials 1 --link-model "$model" --json)
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[5])
rows = {r["algorithm"]: r for r in d["results"] if r["collective_time_us"] is not None}
t = rows["tacos"]
nccl = [rows[a] for a in ("nvls", "nvls-tree", "collnet") if a in rows]
n = min(nccl, key=lambda r: r["collective_time_us"]) if nccl else None
ring = rows.get("ring")
ns = "%s %.3f us" % (n["algorithm"], n["collective_time_us"]) if n else "-"
nr = "%.3f" % n["bound_ratio"] if n else "-"
rr = "%.3f" % ring["bound_ratio"] if ring else "-"
print("| %s | %s | %s | %d | %.3f | %.3f | %.1f / %.1f | %s | %s | %s | %.3f | %.1f |" % (
    sys.argv[1], sys.argv[2], sys.argv[3], t["chunks_per_npu"], t["collective_time_us"],
    t["bound_ratio"], t["algbw_gbps"], t["busbw_gbps"], ns, nr, rr, t["lower_bound_us"],
    float(sys.argv[4])))
' "$spec" "$collective" "$model" "$seconds" "$json"
done
