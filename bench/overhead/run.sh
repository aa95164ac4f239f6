#!/usr/bin/env bash
# Recorder overhead on the GPU machine, every variant of every workload run
# interleaved (A B C A B C ...) REPS times in one go, as the yardstick asks.
#
#   bench/overhead/run.sh DIST YARDSTICK OUT [REPS] [WORKLOADS]
#
# DIST: a gpucap dist/ (scripts/package); YARDSTICK: bench/overhead/yardstick
# (kernels.cu, null_cupti.cpp, torch_work.py, torch_graph.py); OUT: where
# logs and captures go. WORKLOADS: any of kernels,torch_work,torch_graph.
# Prints one RESULT line per run; bench/overhead/summarize.py makes the table.
set -uo pipefail
dist="$(cd "$1" && pwd)"; yard="$(cd "$2" && pwd)"; out="$3"; reps="${4:-5}"
workloads="${5:-kernels,torch_work,torch_graph}"
mkdir -p "$out"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
work="$(mktemp -d)"
nvcc -O2 -arch=sm_90 "$yard/kernels.cu" -o "$work/kernels" || exit 1
g++ -O2 -shared -fPIC "$yard/null_cupti.cpp" -I/usr/local/cuda/include -L/usr/local/cuda/lib64 \
    -L/usr/local/cuda/targets/x86_64-linux/lib -lcupti -o "$work/libnull_cupti.so" || exit 1
gpucap="$dist/bin/gpucap"

# run NAME VARIANT CMD...: one timed run, its RESULT line tagged.
run() {
  local workload="$1" variant="$2"; shift 2
  local log="$out/$workload.$variant.log"
  local t0=$(date +%s.%N)
  timeout 120 "$@" >>"$log" 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  local result=$(grep -h "^RESULT" "$log" | tail -1)
  local stop=$(grep -ho "stop took [0-9.]* ms" "$log" | tail -1)
  echo "RUN workload=$workload variant=$variant rc=$rc wall_s=$(python3 -c "print(round($t1 - $t0, 3))") $result ${stop:+stop_ms=${stop//[^0-9.]/}}"
}

# Variant prefixes: commands, so `timeout` can run them.
floor=(env CUDA_INJECTION64_PATH="$work/libnull_cupti.so" PROBE_MODE=null)
floor_lean=(env CUDA_INJECTION64_PATH="$work/libnull_cupti.so" PROBE_MODE=null PROBE_LEAN=1)
rec=("$gpucap" record -o "$out/cap-%p.gpucap" --)
rec_sync=("$gpucap" record --kinds default,synchronization,cuda_event -o "$out/cap-%p.gpucap" --)

for ((i = 1; i <= reps; i++)); do
  if [[ $workloads == *kernels* ]]; then
    run kernels base "$work/kernels"
    run kernels floor "${floor[@]}" "$work/kernels"
    run kernels floor_lean "${floor_lean[@]}" "$work/kernels"
    run kernels gpucap "${rec[@]}" "$work/kernels"
  fi
  if [[ $workloads == *torch_work* ]]; then
    run torch_work base python3 "$yard/torch_work.py" base
    run torch_work floor_lean "${floor_lean[@]}" python3 "$yard/torch_work.py" base
    run torch_work gpucap "${rec[@]}" python3 "$yard/torch_work.py" base
    run torch_work gpucap_sync "${rec_sync[@]}" python3 "$yard/torch_work.py" base
    run torch_work kineto_cuda python3 "$yard/torch_work.py" kineto_cuda
  fi
  if [[ $workloads == *torch_graph* ]]; then
    run torch_graph base python3 "$yard/torch_graph.py" base
    run torch_graph floor "${floor[@]}" python3 "$yard/torch_graph.py" base
    run torch_graph gpucap "${rec[@]}" python3 "$yard/torch_graph.py" base
    run torch_graph kineto python3 "$yard/torch_graph.py" kineto
  fi
  rm -f "$out"/cap-*.gpucap  # keep disk use flat; sizes are measured separately
done
rm -rf "$work"
