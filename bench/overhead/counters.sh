#!/usr/bin/env bash
# What GPU counters cost: the PyTorch eager step and kernels.cu under gpucap
# without counters, with NVML counters and with NVML and PM sampling, interleaved REPS times.
#   bench/overhead/counters.sh DIST YARDSTICK OUT [REPS]     YARDSTICK: bench/overhead/yardstick
set -uo pipefail
dist="$(cd "$1" && pwd)"; yard="$(cd "$2" && pwd)"; out="$3"; reps="${4:-5}"
mkdir -p "$out"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvcc -O2 -arch=sm_90 "$yard/kernels.cu" -o "$out/kernels" || exit 1
run() {
  local workload="$1" variant="$2"; shift 2
  local log="$out/$workload.$variant.log"
  timeout 120 "$@" >>"$log" 2>&1
  echo "RUN workload=$workload variant=$variant rc=$? $(grep -h '^RESULT' "$log" | tail -1)"
}
rec=("$dist/bin/gpucap" record -q -o "$out/cap.gpucap" --)
rec_nvml=("$dist/bin/gpucap" record -q --counters nvml -o "$out/cap.gpucap" --)
rec_pm=("$dist/bin/gpucap" record -q --counters nvml,pm -o "$out/cap.gpucap" --)
for ((i = 1; i <= reps; i++)); do
  run torch_work base python3 "$yard/torch_work.py" base
  run torch_work gpucap "${rec[@]}" python3 "$yard/torch_work.py" base
  run torch_work gpucap_nvml "${rec_nvml[@]}" python3 "$yard/torch_work.py" base
  run torch_work gpucap_nvml_pm "${rec_pm[@]}" python3 "$yard/torch_work.py" base
  run kernels base "$out/kernels"
  run kernels gpucap "${rec[@]}" "$out/kernels"
  run kernels gpucap_nvml "${rec_nvml[@]}" "$out/kernels"
  run kernels gpucap_nvml_pm "${rec_pm[@]}" "$out/kernels"
done
rm -f "$out/cap.gpucap"
