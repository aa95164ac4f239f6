#!/usr/bin/env bash
# Which part of the recorder costs what on the eager PyTorch step: variants
# that each switch one thing off, interleaved REPS times.
#   bench/overhead/ablate.sh DIST YARDSTICK OUT [REPS]     YARDSTICK: bench/overhead/yardstick
set -uo pipefail
dist="$(cd "$1" && pwd)"; yard="$(cd "$2" && pwd)"; out="$3"; reps="${4:-3}"
mkdir -p "$out"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
work="$(mktemp -d)"
g++ -O2 -shared -fPIC "$yard/null_cupti.cpp" -I/usr/local/cuda/include -L/usr/local/cuda/targets/x86_64-linux/lib \
    -lcupti -o "$work/libnull_cupti.so" || exit 1
lean_kinds=kernel,memcpy,memset,runtime,driver,external_correlation,overhead
run() {
  local variant="$1"; shift
  local log="$out/$variant.log"
  env "$@" >>"$log" 2>&1
  echo "RUN workload=torch_work variant=$variant rc=$? $(grep -h '^RESULT' "$log" | tail -1)"
}
rec() { echo "$dist/bin/gpucap" record -q -o "$out/cap.gpucap" --; }
for ((i = 1; i <= reps; i++)); do
  run base python3 "$yard/torch_work.py" base
  run floor_lean CUDA_INJECTION64_PATH="$work/libnull_cupti.so" PROBE_LEAN=1 python3 "$yard/torch_work.py" base
  run gpucap $(rec) python3 "$yard/torch_work.py" base
  run gpucap_no_sync_event GPUCAP_KINDS=kernel,memcpy,memcpy2,memset,runtime,driver,external_correlation,overhead $(rec) python3 "$yard/torch_work.py" base
  run gpucap_lean_kinds GPUCAP_KINDS=$lean_kinds $(rec) python3 "$yard/torch_work.py" base
  run gpucap_lean_nosub GPUCAP_KINDS=$lean_kinds GPUCAP_SUBSCRIBE=0 $(rec) python3 "$yard/torch_work.py" base
  run gpucap_lean_nosub_tid GPUCAP_KINDS=$lean_kinds GPUCAP_SUBSCRIBE=0 GPUCAP_SYSTEM_TIDS=0 GPUCAP_FLUSH_MS=0 $(rec) python3 "$yard/torch_work.py" base
done
rm -rf "$work"
