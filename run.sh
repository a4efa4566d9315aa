#!/usr/bin/env bash
# Builds tacos (Release) and synthesizes an All-Gather on the built-in default topology.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$root/scripts/setup.sh"
build="${TACOS_BUILD_DIR:-$root/build}"
if (($#)); then
  exec "$build/tacos" "$@"
fi
exec "$build/tacos" synthesize --topology torus2d:8x8 --collective all-gather --size 64MiB
