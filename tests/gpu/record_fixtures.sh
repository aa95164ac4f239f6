#!/usr/bin/env bash
# On the GPU machine: records each fixture program under `gpucap record` and
# leaves the captures and the programs' manifests in OUT.
#
#   tests/gpu/record_fixtures.sh DIST OUT
#
# DIST is a scripts/package tree holding bin/gpucap, lib/ and gpu/ (the
# programs built by tests/gpu/build.sh, and torch_train.py).
set -uo pipefail
dist="$(cd "$1" && pwd)"; out="$2"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
g="$dist/bin/gpucap"
status=0
record() {
  local name="$1"; shift
  echo "== $name"
  timeout 300 "$g" record -o "$out/$name.gpucap" "$@" || { echo "FAILED: $name rc=$?"; status=1; }
  "$g" info "$out/$name.gpucap" || status=1
}
record basics -- "$dist/gpu/basics" "$out/basics.expect.json"
record graphs_nvtx -- "$dist/gpu/graphs_nvtx" "$out/graphs_nvtx.expect.json"
record counters --counters nvml,pm -- "$dist/gpu/busy" "$out/counters.expect.json"
# Not a fixture: PM sampling must stop cleanly when the program destroys its context.
record ctx_reset --counters pm -- "$dist/gpu/ctx_reset" "$out/ctx_reset.expect.json"
record torch_train --window-nvtx 'ProfilerStep#\d+' -- python3 "$dist/gpu/torch_train.py" "$out/torch_train.expect.json"
exit $status
