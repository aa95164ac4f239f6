#!/usr/bin/env bash
# Rounds of paused_after (one process: paused stretches before and after recorded stretches; paused_after.cu)
# under several ways of recording, the variants of a round in an order rotated from round to round, pinned.
#
#   bench/overhead/paused_after.sh PAUSED_AFTER DIST OUT ROUNDS VARIANT...
#
# VARIANT: base (no gpucap), paused (--start-paused: nothing switches), range (--capture-range 'nvtx:rec#\d+'
# --capture-range-end repeat: the default detach), range_attached (GPUCAP_PAUSE_DETACH=0), range_nohold
# (GPUCAP_PAUSED_GRAPHS=0), range_noapi (GPUCAP_API=none), signal (TOGGLE=signal under --start-paused: SIGUSR2
# records and pauses, CUPTI kept attached, the default), signal_detach (the same with GPUCAP_PAUSE_DETACH=1),
# base_signal (TOGGLE=signal without gpucap: the signal ignored). Environment: CPUS (default 2-9), DEADLINE
# (epoch s after which no run starts). Prints one RUN line per run; paused_after_summary.py reads them.
set -uo pipefail
bin="$1"; dist="$(cd "$2" && pwd)"; out="$3"; rounds="$4"; shift 4
variants=("$@"); n=${#variants[@]}
g="$dist/bin/gpucap"; mkdir -p "$out"
range=(--capture-range 'nvtx:rec#\d+' --capture-range-end repeat)
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < n; i++)); do
    v=${variants[$(((i + r) % n))]}
    if [[ -n ${DEADLINE:-} ]] && (( $(date +%s) > DEADLINE )); then echo "DEADLINE before round $r $v"; exit 0; fi
    o="$out/$v-r$r.gpucap"
    case $v in
      base) p=() ;;
      base_signal) p=(env TOGGLE=signal) ;;
      paused) p=("$g" record -q --start-paused -o "$o" --) ;;
      range) p=("$g" record -q "${range[@]}" -o "$o" --) ;;
      range_attached) p=(env GPUCAP_PAUSE_DETACH=0 "$g" record -q "${range[@]}" -o "$o" --) ;;
      range_nohold) p=(env GPUCAP_PAUSED_GRAPHS=0 "$g" record -q "${range[@]}" -o "$o" --) ;;
      range_noapi) p=(env GPUCAP_API=none "$g" record -q "${range[@]}" -o "$o" --) ;;
      signal) p=(env TOGGLE=signal "$g" record -q --start-paused -o "$o" --) ;;
      signal_detach) p=(env TOGGLE=signal GPUCAP_PAUSE_DETACH=1 "$g" record -q --start-paused -o "$o" --) ;;
      *) echo "paused_after.sh: unknown variant $v" >&2; exit 2 ;;
    esac
    line=$(timeout 30 taskset -c "${CPUS:-2-9}" "${p[@]}" "$bin" 2>"$out/$v-r$r.err" | grep RESULT); rc=$?
    echo "RUN round=$r variant=$v rc=$rc $line"
  done
done
