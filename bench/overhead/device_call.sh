#!/usr/bin/env bash
# One call on the GPU machine: the recorder's measurements and checks, chosen
# by argument, from a clean checkout. It replaces the one-off scripts each
# device session used to write (their runs are in git history); every figure
# in bench/README.md that came from the GPU names the parts that make it.
#
#   bench/overhead/device_call.sh PART [-- PART ...]
#
# A PART is [VAR=value ...] [bg] NAME ARGS...: the assignments hold for that
# part only (CPUS, BLOCKS, PER, JOBS, RUN_TIMEOUT, ...; until=S stops starting
# runs S seconds after the call began; DETACH=on|off passes --pause-detach to
# sampled-steps, stress and compile-sample, which otherwise take gpucap
# record's default: pauses detach where ranges are given), `bg` runs it beside the parts after
# it (e.g. instructions on CPUs 0-11 while checks run on 12-15). Parts:
#
#   price WORKLOAD ROUNDS VARIANT...   time per launch / step across processes, variants interleaved
#                                      (price.sh: WORKLOAD launch, step, fork-step, fork-graph; VARIANT:
#                                      variants.sh's), with price_summary.py's ratios to the first variant
#   instr WORKLOAD VARIANT...          instructions retired on the launching thread under callgrind
#                                      (instr.sh: launch, step, paused_after); needs VALGRIND
#   paused-after ROUNDS VARIANT...     time of paused stretches before/after recorded ranges, in one process
#                                      (paused_after.sh, paused_after_summary.py)
#   sample ROUNDS VARIANT...           `--sample 100` over 2000 eager steps against base (sample.sh)
#   sampled-steps [N]                  N `--sample 100` runs (exit status, detach counters), each one's
#                                      sampled steps against a whole recording (sampled_steps.py)
#   drops [N] [RECORD-ARG...]          kernels.cu (~1M launches/s) under `gpucap record` N times: drops
#   ring-storm [MB...]                 kernels.cu (KERNELS launches eager, then as 100-kernel graphs) recorded plainly
#                                      and in ring mode with --ring-mb MB (default 16 64) and --ring-dump-at-exit:
#                                      the process's peak RSS, the ring's high-water mark against its bound, drops
#   stress [N] [signal|range|sample]   the 64-thread stress (tests/gpu/stress.cu) toggled by SIGUSR2, under a
#                                      capture range, or both with --sample 3 --sample-random (sample), N runs with
#                                      libsegv_trace.so preloaded; a run past HANG_S (default 20) s has every
#                                      thread's stack printed, then is killed
#   compile-sample [N] [SAMPLE]        compile_job.py (torch.compile training + CUDA-graph inference in step#N
#                                      ranges) under --sample SAMPLE (default 10) --sample-random, N runs: each
#                                      checked for its RESULT line and a capture with a trailer; the detaches'
#                                      holds (p50/p99/max per capture) summed up by detach_holds.py
#   compile-probe SPEC...              compile_job.py once per SPEC, PAR (default 3) at a time, to find what makes
#                                      its inference fault after a detach: SPEC is BASE[+VAR=value...], BASE one of
#                                      none (no gpucap), attached (--sample SAMPLE, CUPTI kept at pauses), detach
#                                      (the same, CUPTI finalized at pauses), gate (detach on, nothing ever recorded);
#                                      the assignments go to gpucap and the job (TRAIN, INFER, INFER_MODE,
#                                      CUDA_LAUNCH_BLOCKING, GPUCAP_KINDS, ...); each run's RESULT, FAILED or error
#                                      line, libsegv_trace.so's stack of a host crash
#   graph-detach [CASE...]             tests/gpu/graph_detach.cu's cases (a graph instantiated before, while and after
#                                      recording, replayed across detaches and re-attaches), --pause-detach on
#   emit-nvtx ROUNDS VARIANT...        emit_nvtx_rounds.sh (base, emit, emit_old: OLD's gpucap, emit_new: this dist's)
#   ranks ARGS...                      bench/ranks/scale.sh ARGS (report, stats, export, merge over synthetic jobs)
#   nvtx-price ROUNDS VARIANT...       nvtx_price.sh: ns per NVTX range natively, rotated rounds (PER, BLOCKS, CPUS)
#   emit-traces                        emit_nvtx_job.py recorded by OLD twice and by this dist once, traces compared
#                                      per thread lane (same_ranges.py) and whole (same_trace.py)
#   paused-graph                       a graph captured while paused, replayed while recording: recorded,
#                                      --start-paused, --start-paused --paused-graphs (graph_kernels.py)
#   toggle [N]                         the yardstick's toggle_ab.py under SIGUSR2, N runs
#   api-records                        torch_train.py with API records from CUPTI's activity and from
#                                      callbacks: the same trace? (same_trace.py)
#   fixtures NAME...                   tests/gpu/record_fixtures.sh NAME..., the captures and manifests tarred into
#                                      $OUT/fixtures-<n>.tgz (a call brings back at most 8 files), the recording's
#                                      log and checks in $OUT/<n>-fixtures.txt
#   kineto-pairs NAME...               tests/gpu/record_kineto_pairs.sh NAME... (gpucap beside Kineto), tarred into
#                                      $OUT/kineto-pairs-<n>.tgz
#   lanes                              tests/gpu/capture_lanes.sh into $OUT/lanes
#   graph-fixtures                     fixtures/torch_graph_{nodemode,graphmode}.gpucap again (torch_graph.py,
#                                      ITERS=50, --cuda-graph-trace node|graph) into $OUT
#   yardstick [REPS] [WORKLOADS]       the yardstick's workloads, every variant interleaved (run.sh)
#   scale ARGS...                      bench/build/scale.sh $OUT/scale ARGS (the builder on this machine's cores)
#
# What it needs, built when missing:
#   DIST   a gpucap dist (scripts/package). Default: dist/ if it holds bin/gpucap, else built here (scripts/setup,
#          tests/gpu/build.sh, scripts/package). The device machine has no Debian build packages: build it where
#          they are (`./scripts/setup && tests/gpu/build.sh && scripts/package dist`), carry dist/.
#   TOOLS  launch_loop, paused_after, kernels, libnull_cupti.so, libcallgrind_mark.so, libsegv_trace.so; built
#          into $WORK/tools with nvcc, g++ and gcc (valgrind's headers for the callgrind marks: VALGRIND_INCLUDE).
#   VALGRIND, VALGRIND_LIB   for `instr` (Debian 12's valgrind, carried where the machine has none).
#   OLD    for the *_old variants, emit-nvtx and emit-traces: a dist of the recorder to compare against, made
#          where Debian's packages are: `git worktree add /tmp/old REV && cd /tmp/old && ./scripts/setup &&
#          scripts/package /tmp/old-dist` (issue 44's figures: REV 11a9517), carried beside this checkout.
#   OUT    where results go (the device machine's $OUT); WORK scratch (default /tmp/device_call).
# Results: $OUT/<n>-<part>.txt per part, and $OUT/summary.txt (each part's start, end and exit status).
#
# Example (bench/README.md, "Recorder price"): on the H200,
#   bench/overhead/device_call.sh JOBS=12 CPUS=0-11 bg instr launch base none lean p_direct r_direct \
#     -- CPUS=12-15 stress 6 signal -- until=540 paused-after 30 base paused range signal
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/bench/overhead"
: "${OUT:?OUT: where the results go}"
mkdir -p "$OUT"; OUT="$(cd "$OUT" && pwd)"
WORK="${WORK:-/tmp/device_call}"; mkdir -p "$WORK"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
S="$OUT/summary.txt"
[[ -z ${DETACH:-} || $DETACH == on || $DETACH == off ]] || { echo "device_call: DETACH must be on or off, not '$DETACH'" >&2; exit 2; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1; echo "cpus $(nproc)"; } >>"$S"

# --- what the parts need ------------------------------------------------------------------------------
dist() {
  if [[ -z ${DIST:-} ]]; then
    if [[ -x $root/dist/bin/gpucap ]]; then DIST="$root/dist"
    else
      (cd "$root" && ./scripts/setup && tests/gpu/build.sh && scripts/package "$WORK/dist") >>"$OUT/build.log" 2>&1 ||
        { echo "device_call: building the dist failed, see build.log" >&2; exit 1; }
      DIST="$WORK/dist"
    fi
  fi
  DIST="$(cd "$DIST" && pwd)"; export NEW="$DIST" LD_LIBRARY_PATH="$DIST/lib:$LD_LIBRARY_PATH"
  g="$DIST/bin/gpucap"
}
tools() {
  export TOOLS="${TOOLS:-$WORK/tools}"; mkdir -p "$TOOLS"
  local nvcc="${NVCC:-nvcc}" cuda=/usr/local/cuda vg=() y="$here/yardstick"
  [[ -n ${VALGRIND_INCLUDE:-} ]] && vg=(-I"$VALGRIND_INCLUDE")
  [[ -x $TOOLS/launch_loop ]] || "$nvcc" -O2 -arch=sm_90 "${vg[@]}" "$here/launch_loop.cu" "$here/thread_counters.c" \
    "$here/callgrind_mark.c" -o "$TOOLS/launch_loop"
  [[ -x $TOOLS/paused_after ]] || "$nvcc" -O2 -arch=sm_90 "${vg[@]}" "$here/paused_after.cu" "$here/callgrind_mark.c" \
    -o "$TOOLS/paused_after"
  [[ -x $TOOLS/kernels ]] || "$nvcc" -O2 -arch=sm_90 "$y/kernels.cu" -o "$TOOLS/kernels"
  [[ -f $TOOLS/libnull_cupti.so ]] || g++ -O2 -shared -fPIC "$y/null_cupti.cpp" -I$cuda/include \
    -L$cuda/targets/x86_64-linux/lib -lcupti -o "$TOOLS/libnull_cupti.so"
  [[ -f $TOOLS/libcallgrind_mark.so ]] || gcc -O2 -shared -fPIC "${vg[@]}" "$here/callgrind_mark.c" \
    -o "$TOOLS/libcallgrind_mark.so"
  [[ -f $TOOLS/libsegv_trace.so ]] || gcc -O1 -g -shared -fPIC "$here/segv_trace.c" -o "$TOOLS/libsegv_trace.so" -ldl
}
# The counters of a capture that the checks print.
info() { "$g" info --json "$1" 2>&1 | grep -oE '"(ring_[a-z_]+|trigger|cupti_detaches|cupti_recorded_ahead|buffers_reclaimed_at_detach|buffers_completed_unlent|correlation_overlaps|cupti_sessions|cupti_stage_[a-z_]+_ns_(p50|p99|max)|cupti_attaches_prepared|cupti_quiet_waits|cupti_quiet_timeouts|cupti_quiet_shallow|buffers_dropped_pool_empty|cupti_dropped_records|cupti_detach_give_ups|cupti_detach_busy|cupti_detach_hold_ns_p50|cupti_detach_hold_ns_p99|cupti_detach_hold_ns_max|cupti_(detach|switch)_stall_ns_(p50|p99|max)|cupti_switches_gated|cupti_switch_give_ups|cupti_switch_hold_ns_p50|cupti_switch_hold_ns_p99|cupti_switch_hold_ns_max|cupti_resumes_dropped|cupti_flushes_not_made|cupti_flushes_ungated|entry_gate_stubs|entry_gate_held_calls|entry_gate_tables_unwrapped|clean|clean_shutdown|frames_lost|CONCURRENT_KERNEL|RUNTIME)": ("[^"]*"|[a-z0-9]+)' |
  tr -d '"' | tr '\n' ' '; }
pin() { echo taskset -c "${CPUS:-2-9}"; }
deadline() { [[ -n ${until:-} ]] && echo $(( t0 + until )) || echo ""; }
past() { [[ -n ${until:-} ]] && (( $(el) > until )); }

# --- the parts -----------------------------------------------------------------------------------------
part_price() {  # WORKLOAD ROUNDS VARIANT...
  local w=$1 r=$2; shift 2
  DEADLINE=$(deadline) bash "$here/price.sh" "$WORK/price-$n" "$r" "$w" "$@" | tee "$WORK/price-$n.runs"
  python3 "$here/price_summary.py" "$WORK/price-$n.runs" "$1"
}
part_instr() { bash "$here/instr.sh" "$WORK/instr-$n" "$@"; }
part_paused-after() {  # ROUNDS VARIANT...
  local r=$1; shift
  DEADLINE=$(deadline) bash "$here/paused_after.sh" "$TOOLS/paused_after" "$DIST" "$WORK/pa-$n" "$r" "$@" | tee "$WORK/pa-$n.runs"
  python3 "$here/paused_after_summary.py" "$WORK/pa-$n.runs"
}
part_sample() {  # ROUNDS VARIANT...
  local r=$1; shift
  DEADLINE=$(deadline) bash "$here/sample.sh" "$DIST" "$WORK/sample-$n" "$r" "$@" | tee "$WORK/sample-$n.runs"
  python3 "$here/price_summary.py" "$WORK/sample-$n.runs" "$1"
}
part_sampled-steps() {  # [N]
  local d="$WORK/ss-$n" fails=0 runs=0; mkdir -p "$d"
  for ((i = 1; i <= ${1:-1}; i++)); do
    past && break
    timeout -k 3 60 $(pin) "$g" record -q ${DETACH:+--pause-detach "$DETACH"} --capture-range 'nvtx:step#\d+' --sample 100 \
      -o "$d/s$i.gpucap" -- \
      python3 "$here/sample_steps.py" >"$d/s$i.out" 2>"$d/s$i.err"
    local rc=$?; runs=$((runs + 1)); grep -q RESULT "$d/s$i.out" || rc=99
    echo "sample $i rc=$rc $(grep -o 'ms_per_iter=[0-9.]*' "$d/s$i.out" | head -1) $(info "$d/s$i.gpucap")"
    ((rc)) && { fails=$((fails + 1)); tail -c 1500 "$d/s$i.err"; }
  done
  echo "sampled runs failed: $fails of $runs"
  BLOCKS=2 timeout -k 3 60 $(pin) "$g" record -q --window-nvtx 'step#\d+' -o "$d/full.gpucap" -- \
    python3 "$here/sample_steps.py" >/dev/null 2>&1
  echo "whole recording rc=$?"
  # Every run's sampled steps against the whole recording: a lucky first run
  # once hid a join that lost whole steps in other runs (session 27).
  for ((i = 1; i <= runs; i++)); do
    [[ -f $d/s$i.gpucap ]] || continue
    timeout -k 3 90 python3 "$here/sampled_steps.py" "$g" "$d/s$i.gpucap" "$d/full.gpucap" "$d/w$i" >"$d/complete$i.json"
    echo "sample $i: $(grep -h '"sampled_equal\|"sampled_windows"\|without_flow\|outside' "$d/complete$i.json" | tr -d ' \n')"
  done
  cp "$d/complete1.json" "$OUT/$n-complete.json" 2>/dev/null
}
part_drops() {  # [N] [RECORD-ARG...]
  local runs=${1:-10}; shift || true
  for ((i = 1; i <= runs; i++)); do
    past && break
    timeout -k 3 60 $(pin) "$g" record -q "$@" -o "$WORK/k.gpucap" -- "$TOOLS/kernels" >"$WORK/k.log" 2>&1
    echo "kernels run $i rc=$? $(grep -h RESULT "$WORK/k.log" | tail -1) | $("$g" info "$WORK/k.gpucap" 2>&1 | grep -E '^ *drops' | head -1)"
    rm -f "$WORK/k.gpucap"
  done
}
part_ring-storm() {  # [MB...]: the flight recorder's bound under a launch storm (issue 46)
  local d="$WORK/rs-$n" k=${KERNELS:-2000000}; mkdir -p "$d"
  for mb in plain ${*:-16 64}; do
    local args=(); [[ $mb != plain ]] && args=(--ring-mb "$mb" --ring-dump-at-exit)
    rm -f "$d/k-$mb".*
    # The peak RSS of the largest process below python: the recorded program (record execs it).
    python3 -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:]).returncode
print("rc=%d maxrss_mb=%.1f" % (rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))' \
      timeout -k 3 180 $(pin) "$g" record -q "${args[@]}" -o "$d/k-$mb.gpucap" -- "$TOOLS/kernels" "$k" >"$d/k-$mb.log" 2>&1
    echo "ring-storm $mb: $(grep -hE '^(rc=|RESULT)' "$d/k-$mb.log" | tr '\n' ' ')"
    for f in "$d/k-$mb".*gpucap; do
      [[ -e $f ]] || continue
      echo "  $(basename "$f") $(du -m "$f" | cut -f1) MiB: $(info "$f")"
    done
    rm -f "$d/k-$mb".*gpucap
  done
}
part_stress() {  # [N] [signal|range]
  local d="$WORK/stress-$n" hangs=0 fails=0 runs=0 mode=${2:-signal} rec args; mkdir -p "$d"
  if [[ $mode == range ]]; then rec=(--capture-range 'nvtx:worker0' --capture-range-end repeat); args=(64 3 0 exit)
  elif [[ $mode == sample ]]; then  # sampled ranges and SIGUSR2 toggles at once: detaches from both
    rec=(--capture-range 'nvtx:worker0' --sample 3 --sample-random --capture-range-end repeat); args=(64 ${STRESS_S:-2} 1 exit)
  else rec=(); args=(64 ${STRESS_S:-4} 1 exit); fi
  # The recorder's default where ranges are given; a run without any keeps
  # CUPTI attached at SIGUSR2 pauses unless told, so signal mode asks.
  local det=(${DETACH:+--pause-detach "$DETACH"})
  [[ $mode == signal && -z ${DETACH:-} ]] && det=(--pause-detach on)
  for ((i = 1; i <= ${1:-6}; i++)); do
    past && break
    LD_PRELOAD="$TOOLS/libsegv_trace.so" $(pin) "$g" record ${det[@]+"${det[@]}"} ${rec[@]+"${rec[@]}"} --max-mb 64 \
      -o "$d/st$i.gpucap" -- \
      "$DIST/gpu/stress" "${args[@]}" >"$d/st$i.log" 2>&1 &
    local pid=$! waited=0; runs=$((runs + 1))
    while kill -0 $pid 2>/dev/null && ((waited < ${HANG_S:-20})); do sleep 1; waited=$((waited + 1)); done
    if kill -0 $pid 2>/dev/null; then
      hangs=$((hangs + 1))
      local prog; prog=$(pgrep -n -f "$DIST/gpu/stress ${args[*]}")
      echo "HANG run $i (program $prog)"
      [[ -n $prog ]] && { kill -QUIT "$prog"; sleep 2; kill -KILL "$prog"; }
      kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null; grep segv_trace "$d/st$i.log" | head -60
    else
      wait $pid; local rc=$?
      echo "stress $mode $i rc=$rc $(info "$d/st$i.gpucap")"
      ((rc)) && { fails=$((fails + 1)); grep -v '^gpucap: \(paused\|recording\)' "$d/st$i.log" | tail -40; }
    fi
  done
  echo "stress $mode: $fails failed, $hangs hung, of $runs runs"
}
part_compile-sample() {  # [N] [SAMPLE]
  local d="$WORK/cs-$n" fails=0 hangs=0 runs=0; mkdir -p "$d"
  for ((i = 1; i <= ${1:-30}; i++)); do
    past && break
    timeout -k 5 ${RUN_TIMEOUT:-240} $(pin) "$g" record -q ${DETACH:+--pause-detach "$DETACH"} \
      --capture-range 'nvtx:step#\d+' --sample "${2:-10}" \
      --sample-random -o "$d/c$i.gpucap" -- python3 "$here/compile_job.py" >"$d/c$i.out" 2>"$d/c$i.err"
    local rc=$?; runs=$((runs + 1))
    ((rc == 124 || rc == 137)) && hangs=$((hangs + 1))
    if ((rc == 0)) && ! grep -q '^RESULT' "$d/c$i.out"; then rc=98; fi  # no result line
    "$g" info --json "$d/c$i.gpucap" >"$d/c$i.json" 2>&1
    if ((rc == 0)) && ! grep -q '"clean": true' "$d/c$i.json"; then rc=97; fi  # no trailer
    echo "compile $i rc=$rc $(grep -hE '^(RESULT|FAILED)' "$d/c$i.out" | tail -1) $(info "$d/c$i.gpucap")"
    ((rc)) && { fails=$((fails + 1)); tail -c 1500 "$d/c$i.err"; }
  done
  echo "compile-sample: $fails failed ($hangs hung), of $runs runs"
  python3 "$here/detach_holds.py" "$d"/c*.json
}
part_compile-probe() {  # SPEC...
  local d="$WORK/cp-$n" k=0; mkdir -p "$d"
  for spec in "$@"; do
    k=$((k + 1))
    (
      IFS=+ read -r base assigns <<<"$spec"; IFS=+ read -ra vars <<<"$assigns"
      local range='nvtx:step#\d+' detach=1 rec=1
      case $base in none) rec=0 ;; attached) detach=0 ;; detach) ;; gate) range='nvtx:never#\d+' ;;
        *) echo "compile-probe: unknown base $base" >&2; exit 2 ;; esac
      local cmd=(python3 "$here/compile_job.py")
      ((rec)) && cmd=("$g" record -q --capture-range "$range" --sample "${SAMPLE:-5}" -o "$d/p$k.gpucap" -- "${cmd[@]}")
      # libsegv_trace.so names the native frames of a host crash (Python's faulthandler chains to it).
      env LD_PRELOAD="$TOOLS/libsegv_trace.so" GPUCAP_PAUSE_DETACH=$detach TRAIN=${TRAIN:-30} INFER=${INFER:-30} "${vars[@]}" \
        timeout -k 5 ${RUN_TIMEOUT:-200} "${cmd[@]}" >"$d/p$k.out" 2>"$d/p$k.err"
      local rc=$? what
      what=$(grep -hE '^(RESULT|FAILED)' "$d/p$k.out" | tail -1)
      [[ -z $what ]] && what=$(grep -hE 'Error|error:|line [0-9]+, in' "$d/p$k.err" | tail -3 | tr '\n' ' ')
      echo "probe $spec rc=$rc $what $( ((rec)) && info "$d/p$k.gpucap")"
    ) &
    (( k % ${PAR:-3} == 0 )) && wait
  done
  wait
  for ((i = 1; i <= k; i++)); do
    grep -q '^RESULT' "$d/p$i.out" || { echo "--- p$i"; tail -n 12 "$d/p$i.err"; grep segv_trace "$d/p$i.err" | head -40; }
  done
}
part_graph-detach() {  # tests/gpu/graph_detach.cu's cases under capture ranges, the detach on
  local d="$WORK/gd-$n"; mkdir -p "$d"
  for c in ${*:-before attached detached attached-reattach module-detached module-attached cycles busy inflight inflight-graph queued paused-launch}; do
    timeout -k 3 60 "$g" record -q --pause-detach on --capture-range 'nvtx:rec#\d+' --capture-range-end repeat \
      -o "$d/$c.gpucap" -- "$DIST/gpu/graph_detach" "$c" >"$d/$c.log" 2>&1
    echo "graph_detach $c rc=$? $(info "$d/$c.gpucap")"; grep -v '^gpucap: \(paused\|recording\)' "$d/$c.log" | tail -6
  done
}
part_emit-nvtx() {  # ROUNDS VARIANT...: emit_nvtx_rounds.sh (OLD: the dist before, NEW: this one)
  local r=$1; shift
  END=${until:+$((until - $(el)))} bash "$here/emit_nvtx_rounds.sh" "$WORK/emit-$n" "$r" "$@" | grep -v '^ROUND'
}
part_ranks() { bash "$root/bench/ranks/scale.sh" "$@"; }
part_nvtx-price() {  # ROUNDS VARIANT...: nvtx_price.sh (PER, BLOCKS, CPUS), ns per range natively
  local r=$1; shift
  bash "$here/nvtx_price.sh" "$WORK/nvtx-price-$n" "$r" "$@" | tail -16
}
part_emit-traces() {  # emit_nvtx_job.py's traces: OLD twice, NEW once (3 steps after 1), per thread lane
  local d="$WORK/et-$n"; mkdir -p "$d"
  for x in old:o1 old:o2 new:n1; do
    local dist_of=$OLD; [[ ${x%:*} == new ]] && dist_of=$NEW
    EMIT=1 STEPS=3 WARMUP=1 timeout -k 3 60 "$dist_of/bin/gpucap" record -q -o "$d/${x#*:}.gpucap" -- \
      python3 "$here/emit_nvtx_job.py" | tail -1
    "$g" info "$d/${x#*:}.gpucap" 2>&1 | grep -E "^(ranges|drops|closed|damage)"
    "$g" build -q "$d/${x#*:}.gpucap" -o "$d/${x#*:}.json"
  done
  echo "old against old"; python3 "$here/same_ranges.py" "$d/o1.json" "$d/o2.json"
  echo "old against new"; python3 "$here/same_ranges.py" "$d/o1.json" "$d/n1.json"
  python3 "$here/same_trace.py" "$d/o1.json" "$d/n1.json" | grep -v "^same"
}
part_paused-graph() {
  local d="$WORK/pg-$n"; mkdir -p "$d"
  for v in recorded start_paused start_paused_graphs; do
    local pre=("$g" record -q)
    [[ $v == start_* ]] && pre=(env START_PAUSED=1 "$g" record -q --start-paused)
    [[ $v == start_paused_graphs ]] && pre+=(--paused-graphs)
    timeout -k 3 90 $(pin) "${pre[@]}" -o "$d/$v.gpucap" -- python3 "$here/paused_graph.py" >"$d/$v.log" 2>&1
    local rc=$?; "$g" build -q "$d/$v.gpucap" -o "$d/$v.json" >/dev/null 2>&1
    echo "paused_graph $v rc=$rc build=$? $(info "$d/$v.gpucap") $(python3 "$here/graph_kernels.py" "$d/$v.json" 2>&1)"
    ((rc)) && tail -c 800 "$d/$v.log"
  done
}
part_toggle() {  # [N]
  for ((i = 1; i <= ${1:-4}; i++)); do
    past && break
    BLOCKS=${BLOCKS:-40} PER=${PER:-20} timeout -k 3 90 $(pin) "$g" record -q -o "$WORK/toggle.gpucap" -- \
      python3 "$here/yardstick/toggle_ab.py" signal >"$WORK/toggle.log" 2>&1
    echo "toggle $i rc=$? $(grep -h RESULT "$WORK/toggle.log" | tail -1) $(info "$WORK/toggle.gpucap")"
  done
}
part_api-records() {
  local d="$WORK/api-$n"; mkdir -p "$d"
  for m in activity callback; do
    (cd "$d" && GPUCAP_API_RECORDS=$m timeout -k 3 100 "$g" record -o "$d/train-$m.gpucap" -- \
      python3 "$DIST/gpu/torch_train.py" "$d/train-$m.expect.json" >"$d/train-$m.log" 2>&1; echo "train $m rc=$?")
    "$g" info "$d/train-$m.gpucap" 2>&1 | grep -E "DRIVER|RUNTIME|drops" | head -4
    timeout 60 "$g" build -q "$d/train-$m.gpucap" -o "$d/train-$m.json"
  done
  python3 "$here/same_trace.py" "$d/train-activity.json" "$d/train-callback.json"; echo "same_trace rc=$?"
}
part_fixtures() {
  local d="$WORK/fx-$n"; rm -rf "$d"
  timeout 400 bash "$root/tests/gpu/record_fixtures.sh" "$DIST" "$d" "$@"
  local rc=$?
  (cd "$d" && find . -maxdepth 1 \( -name '*.gpucap' -o -name '*.expect.json' \) -print0 |
    tar czf "$OUT/fixtures-$n.tgz" --null -T -) && ls -la "$d"
  return $rc
}
part_lanes() { timeout 120 bash "$root/tests/gpu/capture_lanes.sh" "$DIST" "$OUT/lanes"; }
part_graph-fixtures() {
  for m in node graph; do
    ITERS=50 timeout -k 3 60 "$g" record -q --cuda-graph-trace $m -o "$OUT/torch_graph_${m}mode.gpucap" -- \
      python3 "$here/yardstick/torch_graph.py" base >"$WORK/tg_$m.log" 2>&1
    echo "torch_graph $m rc=$? $(grep -h RESULT "$WORK/tg_$m.log" | tail -1)"
    "$g" info "$OUT/torch_graph_${m}mode.gpucap" | grep -E "GRAPH|KERNEL|drops"
  done
}
part_yardstick() { bash "$here/run.sh" "$DIST" "$here/yardstick" "$WORK/yard-$n" "${1:-5}" "${2:-kernels,torch_work,torch_graph}" |
  tee "$WORK/yard-$n.runs"; python3 "$here/summarize.py" "$WORK/yard-$n.runs"; }
part_kineto-pairs() {  # NAME...: tests/gpu/record_kineto_pairs.sh, the pairs tarred into $OUT/kineto-pairs-<n>.tgz
  local d="$WORK/kp-$n"; rm -rf "$d"
  PAIR_TIMEOUT=${PAIR_TIMEOUT:-150} $(pin) bash "$root/tests/gpu/record_kineto_pairs.sh" "$DIST" "$d" "$@"
  echo "record_kineto_pairs rc=$?"
  grep -h -E "FAILED|Error" "$d"/*.log | head -20
  (cd "$d" && tar czf "$OUT/kineto-pairs-$n.tgz" --exclude='work-*' .) && ls -la "$d"
}
part_scale() { bash "$root/bench/build/scale.sh" "$OUT/scale-$n" "$@"; }

# --- the call ------------------------------------------------------------------------------------------
n=0; bgs=(); ready=0
run_part() {
  n=$((n + 1))
  local envs=() bg=0
  while (($#)) && [[ $1 == *=* || $1 == bg ]]; do [[ $1 == bg ]] && bg=1 || envs+=("$1"); shift; done
  (($#)) || return 0
  local name=$1; shift
  declare -F "part_$name" >/dev/null || { echo "device_call: unknown part $name" >&2; exit 2; }
  if [[ $name != scale && $name != ranks ]] && ((!ready)); then  # the dist and tools, once, before the first GPU part
    dist; tools >>"$OUT/build.log" 2>&1 || { echo "device_call: building the tools failed, see build.log" >&2; exit 1; }
    ready=1
  fi
  (
    for e in "${envs[@]}"; do export "${e?}"; done
    echo "part $n $name $* start t=$(el)s" >>"$S"
    "part_$name" "$@" >"$OUT/$n-$name.txt" 2>&1
    echo "part $n $name rc=$? end t=$(el)s" >>"$S"
  ) &
  if ((bg)); then bgs+=($!); else wait $!; fi
}
args=()
for a in "$@" --; do
  if [[ $a == -- ]]; then run_part "${args[@]}"; args=(); else args+=("$a"); fi
done
((${#bgs[@]})) && wait "${bgs[@]}"
echo "done t=$(el)s" >>"$S"
cat "$S"
