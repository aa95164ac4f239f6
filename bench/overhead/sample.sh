#!/usr/bin/env bash
# The price of leaving gpucap on with step sampling, side by side: the
# yardstick step in NVTX step ranges (sample_steps.py, 2000 timed steps)
# without gpucap and under `gpucap record --capture-range nvtx:step#\d+
# --sample 100`, the variants of one round in an order rotated from round to
# round, each run pinned to the same cores (taskset), each reporting wall and
# launching-thread CPU time per step. base and base2 are the same program:
# their difference is the method's own spread.
#
#   bench/overhead/sample.sh DIST OUT ROUNDS VARIANT...
#
# VARIANT: base base2 (no gpucap), sample (--sample 100, switching at the
# range; gpucap record's default: since 7ddde47 CUPTI is finalized after each
# sampled step, as sample_detach), sample_early (the same, armed at the previous step's end: GPUCAP_CAPTURE_ARM=early),
# sample_detach (the same with GPUCAP_PAUSE_DETACH=1: CUPTI finalized after
# each sampled step and attached again, without activity, until the next),
# gate_never (a capture range no step matches: the capture gate's checks on
# every push/pop, CUPTI never attached; the entry gate preloaded since
# 7ddde47), paused (--start-paused: the paused price, ranges not gated, the
# entry gate preloaded since 7ddde47), sample_detach_nohold (sample_detach without
# attaching CUPTI again while paused: GPUCAP_PAUSED_GRAPHS=0, so graphs made
# between samples lose their topology), rec (`gpucap record`: every step
# recorded), rec_cb and sample_cb (rec and sample with GPUCAP_API_RECORDS=callback),
# sample_cb_attached (sample_cb keeping CUPTI attached between samples),
# sample_noapi (sample with no API records at all: GPUCAP_API=none).
# Environment: CPUS (taskset list, default 2-9), RUN_TIMEOUT (s, default 60),
# DEADLINE (epoch s after which no run starts), SAMPLE (default 100), ROUND0
# (the first round's number, default 0: streams run side by side on other
# CPUS number their rounds apart), ASLR=1 (keep address-space randomisation;
# by default every run has it off, setarch -R, and PYTHONHASHSEED=0, so that
# two runs of one program lay out their memory and dicts alike).
# Prints one RUN line per run; price_summary.py reads them.
set -uo pipefail
dist="$(cd "$1" && pwd)"; out="$2"; rounds="$3"; shift 3
variants=("$@")
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
g="$dist/bin/gpucap"
cpus="${CPUS:-2-9}"
sample="${SAMPLE:-100}"
prefix() {
  case "$1" in
    base|base2) pre=() ;;
    sample) pre=("$g" record -q --capture-range 'nvtx:step#\d+' --sample "$sample" -o "$out/sample-r$2.gpucap" --) ;;
    sample_early) pre=(env GPUCAP_CAPTURE_ARM=early "$g" record -q --capture-range 'nvtx:step#\d+' --sample "$sample"
                       -o "$out/early-r$2.gpucap" --) ;;
    sample_detach) pre=(env GPUCAP_PAUSE_DETACH=1 "$g" record -q --capture-range 'nvtx:step#\d+' --sample "$sample"
                        -o "$out/detach-r$2.gpucap" --) ;;
    gate_never) pre=("$g" record -q --capture-range 'nvtx:never#\d+' --capture-range-end repeat
                     -o "$out/never-r$2.gpucap" --) ;;
    paused) pre=("$g" record -q --start-paused -o "$out/paused-r$2.gpucap" --) ;;
    sample_detach_nohold) pre=(env GPUCAP_PAUSE_DETACH=1 GPUCAP_PAUSED_GRAPHS=0 "$g" record -q
                               --capture-range 'nvtx:step#\d+' --sample "$sample" -o "$out/nohold-r$2.gpucap" --) ;;
    rec) pre=("$g" record -q -o "$out/rec-r$2.gpucap" --) ;;
    rec_cb) pre=(env GPUCAP_API_RECORDS=callback "$g" record -q -o "$out/reccb-r$2.gpucap" --) ;;
    sample_cb) pre=(env GPUCAP_API_RECORDS=callback "$g" record -q --capture-range 'nvtx:step#\d+' --sample "$sample"
                    -o "$out/samplecb-r$2.gpucap" --) ;;
    sample_noapi) pre=(env GPUCAP_API=none "$g" record -q --capture-range 'nvtx:step#\d+' --sample "$sample"
                       -o "$out/samplenoapi-r$2.gpucap" --) ;;
    sample_cb_attached) pre=(env GPUCAP_API_RECORDS=callback GPUCAP_PAUSE_DETACH=0 "$g" record -q --capture-range 'nvtx:step#\d+'
                             --sample "$sample" -o "$out/samplecbatt-r$2.gpucap" --) ;;
    *) echo "sample.sh: unknown variant $1" >&2; return 1 ;;
  esac
}
same=(env PYTHONHASHSEED=0)
[[ ${ASLR:-0} == 1 ]] || same+=(setarch "$(uname -m)" -R)
r0=${ROUND0:-0}
n=${#variants[@]}
for ((r = r0; r < r0 + rounds; r++)); do
  order=()
  for ((i = 0; i < n; i++)); do order+=("${variants[$(((i + r) % n))]}"); done
  if ((r % 2 == 1)); then
    rev=(); for ((i = n - 1; i >= 0; i--)); do rev+=("${order[$i]}"); done; order=("${rev[@]}")
  fi
  for v in "${order[@]}"; do
    if [[ -n ${DEADLINE:-} ]] && (( $(date +%s) > DEADLINE )); then echo "DEADLINE before round $r $v"; exit 0; fi
    prefix "$v" "$r" || exit 2
    t0=$(date +%s%N)
    line=$(timeout "${RUN_TIMEOUT:-60}" taskset -c "$cpus" "${same[@]}" "${pre[@]}" python3 "$here/sample_steps.py" 2>"$out/$v-r$r.err" | grep RESULT)
    rc=$?
    echo "RUN workload=step round=$r variant=$v rc=$rc ms=$(( ($(date +%s%N) - t0) / 1000000 )) $line"
  done
done
