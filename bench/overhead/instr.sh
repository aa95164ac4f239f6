#!/usr/bin/env bash
# The recorder's price in instructions retired: each variant's workload run
# under valgrind's callgrind, which counts every instruction the launching
# thread retires in each block of launches (callgrind_mark.h). A count does
# not move with the vCPU's speed, so where the H200's VM has no hardware PMU
# (bench/README.md, "Instructions retired, fastest blocks, one process's
# level") this still tells variants apart by a fraction of a point, and says
# in which shared object (libcuda, libcupti, the recorder) the difference is.
# What it cannot see: cycles (cache misses, the IPC of CUPTI's code), and work
# that scales with time rather than launches (the recorder's periodic
# threads), whose instructions valgrind's slowdown inflates per launch.
#
#   bench/overhead/instr.sh OUT WORKLOAD VARIANT...
#
# WORKLOAD: launch (launch_loop: empty kernels, alone and with PyTorch's small
# calls around each), step (price_step.py, the yardstick's eager PyTorch
# step; only the main thread's regions, backward runs on autograd's thread)
# or paused_after (paused_after.cu: paused stretches before and after
# recorded NVTX ranges, for the range_* and signal_* variants), or nvtx
# (nvtx_ranges.cc: NVTX ranges of each kind, no CUDA; instructions per
# range, i.e. per push+pop or start+end).
# VARIANT: variants.sh's (base, none, lean, p_*, r_*, range, signal, ...). Runs go JOBS at a time (default 8; valgrind runs a process's
# threads on one CPU, so each run takes one), each REPEAT times (default 1).
# Environment: NEW (a gpucap dist), TOOLS (launch_loop, paused_after,
# libcallgrind_mark.so and libnull_cupti.so, built where valgrind's headers
# are: see below),
# VALGRIND (default: valgrind on PATH) with VALGRIND_LIB where it is carried,
# RUN_TIMEOUT (s, default 600), BLOCKS, PER, KEEP_CG (a variant whose callgrind
# dumps stay in OUT/VARIANT-REPEAT/).
# Prints the INSTR/THREADS lines of callgrind_blocks.py (also in
# OUT/instr.txt), then its table.
#
# Build the tools where valgrind's headers are (Debian: apt install valgrind):
#   nvcc -O2 -arch=sm_90 launch_loop.cu thread_counters.c callgrind_mark.c -o TOOLS/launch_loop
#   nvcc -O2 -arch=sm_90 paused_after.cu callgrind_mark.c -o TOOLS/paused_after
#   gcc -O2 -shared -fPIC callgrind_mark.c -o TOOLS/libcallgrind_mark.so
#   g++ -O2 -std=c++20 -I/usr/local/cuda/include nvtx_ranges.cc callgrind_mark.c -ldl -o TOOLS/nvtx_ranges
set -uo pipefail
out="$1"; workload="$2"; shift 2
variants=("$@")
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
tools="${TOOLS:?TOOLS: launch_loop and libcallgrind_mark.so built with valgrind headers}"
null="$tools/libnull_cupti.so"
source "$here/variants.sh"
valgrind=(${VALGRIND:-valgrind} --tool=callgrind --instr-atstart=no --separate-threads=yes --dump-instr=no
          --dump-line=no --compress-strings=no --compress-pos=no)
blocks=${BLOCKS:-5}
case "$workload" in
  launch) program=("$tools/launch_loop"); per=${PER:-3000}
          wl_env=(MARK=callgrind BLOCKS="$blocks" PER="$per" PIN_CPU=-1 CALIB=0) ;;
  step) program=(python3 "$here/price_step.py"); per=${PER:-10}
        wl_env=(MARK=callgrind CG_MARK_LIB="$tools/libcallgrind_mark.so" BLOCKS="$blocks" PER="$per" WARMUP=20) ;;
  paused_after) program=("$tools/paused_after"); per=${PER:-1000}
                # The recorder's switches take far longer under valgrind: SETTLE_MS gives them room.
                wl_env=(MARK=callgrind PHASES=3 BLOCKS="$blocks" PER="$per" RANGE=300 SETTLE_MS="${SETTLE_MS:-4000}") ;;
  # nvtx_ranges.cc: NVTX ranges alone, no CUDA call (no GPU needed).
  nvtx) program=("$tools/nvtx_ranges"); per=${PER:-2000}
        wl_env=(MARK=callgrind BLOCKS="$blocks" PER="$per" WARMUP="${WARMUP:-2000}") ;;
  *) echo "instr.sh: unknown workload $workload" >&2; exit 2 ;;
esac

one_run() {  # variant repeat
  local v=$1 i=$2 dir="$out/$1-$2"
  rm -rf "$dir"; mkdir -p "$dir"
  local out="$dir"  # the run's capture goes beside its dumps (variants.sh reads $out)
  variant_prefix "$v" || return 2
  local t0=$SECONDS
  # `gpucap record` variants run valgrind as their program: the recorder is
  # injected into the program valgrind runs.
  timeout "${RUN_TIMEOUT:-600}" env "${wl_env[@]}" "${vextra[@]}" "${pre[@]}" \
    "${valgrind[@]}" --callgrind-out-file="$dir/cg.%p" "${program[@]}" >"$dir/run.log" 2>&1
  local rc=$?
  echo "RUN workload=$workload variant=$v run=$i rc=$rc run_s=$((SECONDS - t0)) $(grep -h '^RESULT' "$dir/run.log" | tail -1 | cut -d' ' -f2-)"
  python3 "$here/callgrind_blocks.py" run "$dir" "$v" "$i" "$per"
  for c in "$dir"/cap-*.gpucap; do
    [[ -e $c ]] && echo "CAPTURE variant=$v run=$i $("$NEW/bin/gpucap" info --json "$c" 2>&1 | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    sys.exit(print("unreadable"))
drops = d.get("drops", {})
stats = {k: v for k, v in {**drops, **drops.get("recorder_counters", {})}.items()
         if ("detach" in k or "drop" in k) and isinstance(v, int)}
print(" ".join(f"{k}={v}" for k, v in {**d["records"]["by_kind"], **stats}.items()),
      "clean=%s" % d.get("shutdown", {}).get("clean"))')"
  done
  ((rc == 0)) || tail -5 "$dir/run.log" | sed "s/^/$v-$i: /" >&2
  # Tens of MB per run; the lines above are what is kept, except the dumps of
  # the variant named by KEEP_CG (for callgrind_annotate: who calls what).
  [[ $v == "${KEEP_CG:-}" ]] || rm -f "$dir"/cg.*
  rm -f "$dir"/cap-*.gpucap
}

jobs_max=${JOBS:-8}
for ((i = 0; i < ${REPEAT:-1}; i++)); do
  for v in "${variants[@]}"; do
    while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n; done
    one_run "$v" "$i" >"$out/$v-$i.lines" &
  done
done
wait
cat "$out"/*.lines >"$out/instr.txt"
cat "$out/instr.txt"
python3 "$here/callgrind_blocks.py" table "$out/instr.txt"
