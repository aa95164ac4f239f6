#!/usr/bin/env bash
# The recorder's price, measured across processes well enough to resolve a
# point: every variant of one workload once per round, ROUNDS rounds, the
# order rotated and reversed from round to round (so no variant always runs
# first, or after the same neighbour), each run pinned to the same cores,
# each run reporting wall and launching-thread CPU time as medians of blocks
# inside the process. Two variants that are the same program (base, base2)
# show the method's own spread in the same run.
#
#   bench/overhead/price.sh OUT ROUNDS WORKLOAD VARIANT...
#
# WORKLOAD: step (bench/overhead/price_step.py, the yardstick's eager PyTorch
# step) or launch (bench/overhead/launch_loop.cu: empty kernels, alone and
# with the small runtime calls PyTorch makes around each); fork-step and
# fork-graph run the eager step / the graph replay through
# bench/overhead/price_fork.py (torch imported once, each run a fork; only
# variants that are environment settings). launch and fork-* runs pin their
# launching thread (PIN, default 3, -1: none) and time a calibration block
# before each block (launch_loop.cu's header says what that cancels).
# Environment: NEW, OLD: gpucap dists (scripts/package) to compare; TOOLS: a
# folder with libnull_cupti.so (../shared/yardstick/null_cupti.cpp) and
# launch_loop (built there with nvcc when missing); CPUS: taskset's list
# (default 2-9); RUN_TIMEOUT: seconds one run may take (default 120); DEADLINE:
# an epoch second after which no run starts.
# Prints one RUN line per run; bench/overhead/price_summary.py makes the tables.
set -uo pipefail
out="$1"; rounds="$2"; workload="$3"; shift 3
variants=("$@")
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
tools="${TOOLS:-$out/tools}"
mkdir -p "$tools"
if [[ ! -x $tools/launch_loop ]]; then nvcc -O2 -arch=sm_90 "$here/launch_loop.cu" "$here/thread_counters.c" -o "$tools/launch_loop" || exit 1; fi
if [[ ! -f $tools/libnull_cupti.so ]]; then
  g++ -O2 -shared -fPIC "$here/../../../shared/yardstick/null_cupti.cpp" -I/usr/local/cuda/include \
      -L/usr/local/cuda/targets/x86_64-linux/lib -lcupti -o "$tools/libnull_cupti.so" || exit 1
fi
cpus="${CPUS:-2-9}"
null="$tools/libnull_cupti.so"

# The command prefix of a variant, into the array `pre`.
#   base base2            nothing
#   none kernel kernel_cb lean   the yardstick's floors (null_cupti.cpp)
#   old_rec old_paused new_rec new_paused   `gpucap record [--start-paused]` of OLD / NEW
#   p_* r_*               NEW's recorder injected directly (no exec shim),
#                         paused from the start (p_) or recording (r_), with
#                         one thing changed: see the case below
#   NAME_nr               NAME with address-space randomisation off (setarch -R):
#                         whether a process's layout sets its speed
variant_prefix() {
  vextra=()
  local norand=0
  if [[ $1 == *_nr ]]; then
    norand=1
    set -- "${1%_nr}"
  fi
  local lib="$NEW/lib/libgpucap_recorder.so"
  local common=(CUDA_INJECTION64_PATH="$lib" GPUCAP_OUTPUT="$out/cap-%p.gpucap" GPUCAP_QUIET=1 GPUCAP_API=lean)
  local inj=(env NVTX_INJECTION64_PATH="$lib" "${common[@]}")
  local nonvtx=(env -u NVTX_INJECTION64_PATH "${common[@]}" GPUCAP_NVTX=0)
  local lean_kinds=kernel,memcpy,memset,runtime,driver,external_correlation,overhead
  case "$1" in
    base|base2) pre=() ;;
    base_np|base_np2) pre=(); vextra=(PIN_CPU=-1) ;;   # the launching thread not pinned
    t_label) pre=(); vextra=(TOGGLE=label) ;;          # in-process blocks, labels only
    t_rec) pre=("${inj[@]}"); vextra=(TOGGLE=signal) ;;  # recording and paused blocks in one process
    r_lat) pre=("${inj[@]}" GPUCAP_LATENCY_TIMESTAMPS=1) ;;
    r_graph) pre=("${inj[@]}" GPUCAP_CUDA_GRAPH_TRACE=graph) ;;
    none) pre=(env CUDA_INJECTION64_PATH="$null" PROBE_KINDS=none) ;;
    kernel) pre=(env CUDA_INJECTION64_PATH="$null" PROBE_KINDS=kernel) ;;
    kernel_cb) pre=(env CUDA_INJECTION64_PATH="$null" PROBE_KINDS=kernel_cb) ;;
    lean) pre=(env CUDA_INJECTION64_PATH="$null" PROBE_LEAN=1) ;;
    old_rec) pre=("$OLD/bin/gpucap" record -q -o "$out/cap-%p.gpucap" --) ;;
    old_paused) pre=("$OLD/bin/gpucap" record -q --start-paused -o "$out/cap-%p.gpucap" --) ;;
    new_rec) pre=("$NEW/bin/gpucap" record -q -o "$out/cap-%p.gpucap" --) ;;
    new_paused) pre=("$NEW/bin/gpucap" record -q --start-paused -o "$out/cap-%p.gpucap" --) ;;
    p_direct) pre=("${inj[@]}" GPUCAP_START_PAUSED=1) ;;
    p_nosub) pre=("${inj[@]}" GPUCAP_START_PAUSED=1 GPUCAP_PAUSED_GRAPHS=0) ;;
    p_domain) pre=("${inj[@]}" GPUCAP_START_PAUSED=1 GPUCAP_RESOURCE=domain) ;;
    p_nonvtx) pre=("${nonvtx[@]}" GPUCAP_START_PAUSED=1) ;;
    p_bare) pre=("${nonvtx[@]}" GPUCAP_START_PAUSED=1 GPUCAP_PAUSED_GRAPHS=0 GPUCAP_SYSTEM_TIDS=0 GPUCAP_FLUSH_MS=0) ;;
    r_direct) pre=("${inj[@]}") ;;
    r_cb) pre=("${inj[@]}" GPUCAP_API_RECORDS=callback) ;;       # API records from callbacks (api_records.h)
    p_cb) pre=("${inj[@]}" GPUCAP_START_PAUSED=1 GPUCAP_API_RECORDS=callback) ;;
    r_nosub) pre=("${inj[@]}" GPUCAP_SUBSCRIBE=0) ;;
    r_domain) pre=("${inj[@]}" GPUCAP_RESOURCE=domain) ;;
    r_tids) pre=("${inj[@]}" GPUCAP_SYSTEM_TIDS=0) ;;
    r_flush) pre=("${inj[@]}" GPUCAP_FLUSH_MS=0) ;;
    r_nonvtx) pre=("${nonvtx[@]}") ;;
    r_leankinds) pre=("${inj[@]}" GPUCAP_KINDS=$lean_kinds) ;;
    r_bare) pre=("${nonvtx[@]}" GPUCAP_SUBSCRIBE=0 GPUCAP_SYSTEM_TIDS=0 GPUCAP_FLUSH_MS=0 GPUCAP_KINDS=$lean_kinds) ;;
    *) echo "price.sh: unknown variant $1" >&2; return 1 ;;
  esac
  if ((norand)); then pre=(setarch "$(uname -m)" -R "${pre[@]}"); fi
}

pinning=(PIN_CPU="${PIN:-3}" CALIB="${CALIB:-1}")
case "$workload" in
  step) program=(python3 "$here/price_step.py"); pinning=() ;;
  launch) program=("$tools/launch_loop") ;;
  fork-step|fork-graph)
    # Each variant as `name VAR=value ... -UNSET ...` for price_fork.py.
    spec="$out/$workload.spec"; : >"$spec"
    for v in "${variants[@]}"; do
      variant_prefix "$v" || exit 2
      if ((${#pre[@]})) && [[ ${pre[0]} != env ]]; then echo "price.sh: $v is not an environment setting" >&2; exit 2; fi
      line="$v ${pinning[*]}"; skip=1; unset_next=0
      for a in "${pre[@]}" "${vextra[@]}"; do
        if ((skip)) && [[ $a == env ]]; then skip=0; continue; fi
        skip=0
        if ((unset_next)); then line+=" -$a"; unset_next=0; elif [[ $a == -u ]]; then unset_next=1; else line+=" $a"; fi
      done
      echo "$line" >>"$spec"
    done
    FORK_LOG="$out/$workload.log" taskset -c "$cpus" python3 "$here/price_fork.py" "$spec" "$rounds" "${workload#fork-}"
    exit $? ;;
  *) echo "price.sh: unknown workload $workload" >&2; exit 2 ;;
esac

n=${#variants[@]}
for ((r = 0; r < rounds; r++)); do
  order=()
  for ((i = 0; i < n; i++)); do order+=("${variants[$(((i + r) % n))]}"); done
  if ((r % 2)); then
    rev=(); for ((i = n - 1; i >= 0; i--)); do rev+=("${order[$i]}"); done; order=("${rev[@]}")
  fi
  for v in "${order[@]}"; do
    variant_prefix "$v" || exit 2
    if [[ -n ${DEADLINE:-} ]] && (($(date +%s) >= DEADLINE)); then echo "price.sh: deadline reached"; exit 0; fi
    t0=$(date +%s.%N)
    taskset -c "$cpus" timeout "${RUN_TIMEOUT:-120}" env "${pinning[@]}" "${vextra[@]}" "${pre[@]}" "${program[@]}" >"$out/run.log" 2>&1
    rc=$?
    wall=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
    echo "RUN workload=$workload variant=$v round=$r rc=$rc run_s=$wall $(grep -h '^RESULT' "$out/run.log" | tail -1 | cut -d' ' -f2-)"
    cat "$out/run.log" >>"$out/$workload.$v.log"
    rm -f "$out"/cap-*.gpucap
  done
done
