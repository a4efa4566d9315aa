#!/usr/bin/env bash
# Writes the seed corpora fuzz/corpus/<target>/ from tacos's own outputs (small topologies, so
# each seed stays a few KB) and from hand-written inputs. Re-run after a format changes:
#
#   fuzz/make_corpus.sh [TACOS]     (default: build/tacos)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tacos="${1:-$root/build/tacos}"
corpus="$root/fuzz/corpus"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rm -rf "$corpus"
mkdir -p "$corpus"/{topology_yaml,astra_network_yaml,msccl_xml,algorithm_json,chakra,units,topology_spec}

# tacos topology YAML: the examples, plus a generate: block.
for f in "$root"/examples/*.y*ml; do
  grep -q npus_count "$f" && cp "$f" "$corpus/astra_network_yaml/" || cp "$f" "$corpus/topology_yaml/"
done
printf 'generate:\n  topology: torus2d:2x3\n  bandwidth: 50,25\n  latency: 0.5us\n' \
  >"$corpus/topology_yaml/generate.yaml"
# A FullyConnected dimension of 2000 NPUs (4M links): the target must skip it (it took 12 s under
# ASan, past libFuzzer's timeout, before the skip counted FullyConnected as N^2 links).
printf 'topology: [ FullyConnected ]\nnpus_count: [ 2000 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n' \
  >"$corpus/astra_network_yaml/fc_2000.yml"
printf 'npus: 2\nswitches: 1\nlinks:\n  - {src: 0, dst: 2, bandwidth: 50, latency: 1us, bidirectional: true}\n  - {src: 1, dst: 2, bandwidth: 50, latency: 500ns, bidirectional: true}\n' \
  >"$corpus/topology_yaml/switch.yaml"

i=0
for job in "ring:4 all-gather 2" "fc:3 all-reduce 1" "mesh2d:2x2 reduce-scatter 2" \
  "switch:4 broadcast 1" "ring:4 all-to-all 1" "fc:4 gather 1"; do
  read -r topo coll k <<<"$job"
  i=$((i + 1))
  out="$work/out$i"
  "$tacos" synthesize --topology "$topo" --collective "$coll" --size 64KiB --chunks-per-npu "$k" \
    --out "$out" --format json,msccl,chakra >/dev/null
  cp "$out/algorithm.json" "$corpus/algorithm_json/$i-${coll}.json"
  for x in "$out"/msccl/*.xml; do [ -e "$x" ] && cp "$x" "$corpus/msccl_xml/$i-${coll}.xml"; done
  if [ -e "$out/astra/network.yml" ]; then cp "$out/astra/network.yml" "$corpus/astra_network_yaml/$i.yml"; fi
  # Chakra: the rank files joined by the chakra target's separator line.
  set -- "$out"/chakra/*.0.et
  if [ -e "$1" ]; then
    prefix="${1%.0.et}"
    n=$(ls "$out"/chakra/*.et | wc -l)
    {
      for ((r = 0; r < n; r++)); do
        ((r > 0)) && printf '\n--rank--\n'
        cat "$prefix.$r.et"
      done
    } >"$corpus/chakra/$i-${coll}.bin"
  fi
done

# Sizes, bandwidths, latencies (one per line; the target tries each as every kind).
printf '64MiB\n1GiB\n512KB\n1048576\n0.5us\n500ns\n1ms\n50\n25,50\n1e-3\n' >"$corpus/units/common"
printf '9223372036854775807\n1e20\n1e-12\n1000s\n-1\n0\n1TiB\n' >"$corpus/units/edges"
# Generator specs: line 1 the spec, then --bandwidth and --latency.
for spec in ring:4 uniring:5 fc:4 switch:4 mesh2d:2x3 torus2d:4x4 mesh3d:2x2x2 torus3d:2x2x3 \
  hypercube:8 "ring:4,fc:2" "ring:2,switch:4" dgx1 dgx-a100:2 dgx-h100:1 fattree:2x2x1 \
  fattree3:2x2x1x2; do
  printf '%s\n' "$spec" >"$corpus/topology_spec/${spec//[:,]/_}"
done
printf 'torus2d:2x3\n50,25\n0.5us,1us\n' >"$corpus/topology_spec/torus_params"
echo "fuzz: seeds written to $corpus ($(find "$corpus" -type f | wc -l) files)"
