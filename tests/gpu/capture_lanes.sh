#!/usr/bin/env bash
# Issue 17 items 3 and 4 on the GPU machine, in one call: records
# capture_lanes with the recorder's defaults (capture-stream tracking on) and
# latency timestamps, and with the tracking off (GPUCAP_CAPTURE_STREAMS=0),
# builds both, and checks the lanes (check_capture_lanes.py).
#
#   tests/gpu/capture_lanes.sh DIST OUT
#
# DIST is a scripts/package tree (bin/gpucap, lib/) with gpu/capture_lanes
# built by tests/gpu/build.sh. OUT gets the captures, traces and a log; keep
# capture_lanes.gpucap and its expect.json as the fixture if the check passes.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dist="$(cd "$1" && pwd)"; out="$2"
mkdir -p "$out"; out="$(cd "$out" && pwd)"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
g="$dist/bin/gpucap"
status=0
run() { echo "+ $*"; "$@" || { echo "FAILED rc=$?: $*"; status=1; }; }
# Without the recorder: the program itself works.
run "$dist/gpu/capture_lanes" "$out/plain.expect.json"
run timeout 120 "$g" record --kinds default,cuda_event --latency-timestamps -o "$out/capture_lanes.gpucap" \
  -- "$dist/gpu/capture_lanes" "$out/capture_lanes.expect.json"
GPUCAP_CAPTURE_STREAMS=0 run timeout 120 "$g" record --kinds default,cuda_event -o "$out/capture_lanes_off.gpucap" \
  -- "$dist/gpu/capture_lanes" "$out/capture_lanes_off.expect.json"
run "$g" info "$out/capture_lanes.gpucap"
run "$g" info "$out/capture_lanes_off.gpucap"
"$g" info --json "$out/capture_lanes.gpucap" > "$out/info.json" || status=1
run "$g" build "$out/capture_lanes.gpucap" -o "$out/lanes.json"
run "$g" build "$out/capture_lanes.gpucap" --graph-lanes cupti -o "$out/cupti.json"
run "$g" build "$out/capture_lanes_off.gpucap" -o "$out/off.json"
run "$g" build "$out/capture_lanes.gpucap" -o "$out/lanes.pftrace"
run python3 "$here/check_capture_lanes.py" "$out"
echo "capture_lanes.sh: status $status"
exit $status
