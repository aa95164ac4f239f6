# The recorder's price variants, shared by price.sh and instr.sh: sourced, it
# defines variant_prefix NAME, which sets the arrays `pre` (the command prefix
# that runs a program as that variant) and `vextra` (environment settings of
# the workload itself). Needs: $NEW (a gpucap dist, scripts/package), $out
# (captures go to $out/cap-%p.gpucap), $null (libnull_cupti.so, the
# yardstick's floors).

# The command prefix of a variant, into the array `pre`.
#   base base2            nothing
#   none kernel kernel_cb lean floor_all   the yardstick's floors (null_cupti.cpp)
#   old_rec old_paused new_rec new_paused   `gpucap record [--start-paused]` of OLD / NEW
#   p_* r_*               NEW's recorder injected directly (no exec shim),
#                         paused from the start (p_) or recording (r_), with
#                         one thing changed: see the case below
#   range range_*         `gpucap record` of NEW with a capture range over the
#                         NVTX ranges rec#K (paused_after.cu's): its defaults
#                         (since 7ddde47, pauses detach: the gate preloaded),
#                         or with one thing changed; a variant run through
#                         `gpucap record` with a range, a sample or a paused
#                         start takes the same default (GPUCAP_PAUSE_DETACH=0
#                         in a variant, as *_attached set it, keeps CUPTI)
#   signal signal_*       `gpucap record --start-paused` of NEW, the workload
#                         toggling it by SIGUSR2 (TOGGLE=signal); base_signal:
#                         the same workload without gpucap
#   NAME_nr               NAME with address-space randomisation off (setarch -R):
#                         whether a process's layout sets its speed
#   NAME_old              NAME with $OLD's gpucap and recorder instead of $NEW's
#   NAME+VAR=value+...    NAME with those environment settings too (a knob
#                         tried without a variant of its own)
variant_prefix() {
  vextra=()
  local settings=()
  if [[ $1 == *+* ]]; then
    local rest="${1#*+}"
    IFS=+ read -r -a settings <<<"$rest"
    set -- "${1%%+*}"
  fi
  local norand=0
  if [[ $1 == *_nr ]]; then
    norand=1
    set -- "${1%_nr}"
  fi
  local dist=$NEW
  if [[ $1 == *_old ]]; then
    dist=$OLD
    set -- "${1%_old}"
  fi
  local lib="$dist/lib/libgpucap_recorder.so"
  local common=(CUDA_INJECTION64_PATH="$lib" GPUCAP_OUTPUT="$out/cap-%p.gpucap" GPUCAP_QUIET=1 GPUCAP_API=lean)
  local inj=(env NVTX_INJECTION64_PATH="$lib" "${common[@]}")
  local nonvtx=(env -u NVTX_INJECTION64_PATH "${common[@]}" GPUCAP_NVTX=0)
  local lean_kinds=kernel,memcpy,memset,runtime,driver,external_correlation,overhead
  local rec=("$dist/bin/gpucap" record -q -o "$out/cap-%p.gpucap")
  local range=("${rec[@]}" --capture-range 'nvtx:rec#\d+' --capture-range-end repeat --)
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
    floor_all) pre=(env CUDA_INJECTION64_PATH="$null") ;;   # every runtime and driver call
    old_rec) pre=("$OLD/bin/gpucap" record -q -o "$out/cap-%p.gpucap" --) ;;
    old_paused) pre=("$OLD/bin/gpucap" record -q --start-paused -o "$out/cap-%p.gpucap" --) ;;
    new_rec) pre=("${rec[@]}" --) ;;
    new_paused|paused) pre=("${rec[@]}" --start-paused --) ;;
    range) pre=("${range[@]}") ;;
    range_attached) pre=(env GPUCAP_PAUSE_DETACH=0 "${range[@]}") ;;   # CUPTI kept attached while paused (--pause-detach=off)
    range_detach) pre=(env GPUCAP_PAUSE_DETACH=1 "${range[@]}") ;;     # CUPTI finalized after each range (as range since 7ddde47)
    # --sample 100 over steps in NVTX ranges step#N (price_step.py with RANGES=steps)
    sample100) pre=("${rec[@]}" --capture-range 'nvtx:step#\d+' --sample 100 --) ;;
    sample100_random) pre=("${rec[@]}" --capture-range 'nvtx:step#\d+' --sample 100 --sample-random=1 --) ;;
    sample100_attached) pre=(env GPUCAP_PAUSE_DETACH=0 "${rec[@]}" --capture-range 'nvtx:step#\d+' --sample 100 --) ;;
    range_nohold) pre=(env GPUCAP_PAUSE_DETACH=1 GPUCAP_PAUSED_GRAPHS=0 "${range[@]}") ;;  # detached, not attached again
    range_noapi) pre=(env GPUCAP_API=none "${range[@]}") ;;
    base_signal) pre=(); vextra=(TOGGLE=signal) ;;
    signal) pre=("${rec[@]}" --start-paused --); vextra=(TOGGLE=signal) ;;
    signal_attached) pre=(env GPUCAP_PAUSE_DETACH=0 "${rec[@]}" --start-paused --); vextra=(TOGGLE=signal) ;;
    signal_detach) pre=(env GPUCAP_PAUSE_DETACH=1 "${rec[@]}" --start-paused --); vextra=(TOGGLE=signal) ;;
    signal_nohold) pre=(env GPUCAP_PAUSE_DETACH=1 GPUCAP_PAUSED_GRAPHS=0 "${rec[@]}" --start-paused --); vextra=(TOGGLE=signal) ;;
    p_direct) pre=("${inj[@]}" GPUCAP_START_PAUSED=1) ;;
    # NVTX range patterns (nvtx_ranges.cc's steps are ProfilerStep#k): windows
    # while recording, a capture range waiting (paused) for a name that never
    # comes; _re: patterns with no literal to screen names by (the regex on
    # every name, a cached answer for a repeated one).
    r_window) pre=("${inj[@]}" 'GPUCAP_WINDOW_NVTX=ProfilerStep#\d+') ;;
    r_window_re) pre=("${inj[@]}" 'GPUCAP_WINDOW_NVTX=(Profiler)?Step#\d+') ;;
    # The flight recorder's ring, alone and with its step triggers (issue 46),
    # with and without --window-nvtx naming the steps.
    ring) pre=("${inj[@]}" GPUCAP_RING_MB=64) ;;
    ring_steps) pre=("${inj[@]}" GPUCAP_RING_MB=64 GPUCAP_RING_HANG_S=30 GPUCAP_RING_SLOW_STEP=3) ;;
    ring_window) pre=("${inj[@]}" GPUCAP_RING_MB=64 'GPUCAP_WINDOW_NVTX=ProfilerStep#\d+') ;;
    ring_window_steps) pre=("${inj[@]}" GPUCAP_RING_MB=64 'GPUCAP_WINDOW_NVTX=ProfilerStep#\d+' GPUCAP_RING_HANG_S=30 \
                             GPUCAP_RING_SLOW_STEP=3) ;;
    # --ring-hang-call: the entry gate preloaded, as `gpucap record` preloads it for that flag.
    ring_call) pre=(env LD_PRELOAD="$dist/lib/libgpucap_gate.so" "${inj[@]}" GPUCAP_RING_MB=64 GPUCAP_RING_HANG_CALL_S=30) ;;
    p_gate) pre=("${inj[@]}" 'GPUCAP_CAPTURE_RANGE=nvtx:NoSuchStep#\d+') ;;
    p_gate_re) pre=("${inj[@]}" 'GPUCAP_CAPTURE_RANGE=nvtx:(NoSuch|Never)Step#\d+') ;;
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
    *) echo "variants.sh: unknown variant $1" >&2; return 1 ;;
  esac
  if ((${#settings[@]})); then pre=(env "${settings[@]}" "${pre[@]}"); fi
  if ((norand)); then pre=(setarch "$(uname -m)" -R "${pre[@]}"); fi
}
