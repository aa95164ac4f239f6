#!/usr/bin/env bash
# Rounds of paused_after (one process: paused stretches before and after recorded stretches; paused_after.cu)
# under several ways of recording, the variants of a round in an order rotated from round to round, pinned.
#
#   bench/overhead/paused_after.sh PAUSED_AFTER DIST OUT ROUNDS VARIANT...
#
# VARIANT: variants.sh's; those made for this program: base (no gpucap), paused (--start-paused: nothing
# switches), range (--capture-range 'nvtx:rec#\d+' --capture-range-end repeat, gpucap record's default: CUPTI
# kept attached while paused until 7ddde47, finalized after each range since), range_detach (GPUCAP_PAUSE_DETACH=1:
# CUPTI finalized after each range), range_attached (=0: CUPTI kept attached while paused), range_nohold (detached and not attached again), range_noapi (GPUCAP_API=none),
# signal (TOGGLE=signal under --start-paused: SIGUSR2 records and pauses), signal_detach, signal_attached,
# signal_nohold, base_signal (TOGGLE=signal without gpucap: the signal ignored). Environment: CPUS (default 2-9),
# DEADLINE (epoch s after which no run starts). Prints one RUN line per run; paused_after_summary.py reads them.
# Each run's capture is kept as OUT/VARIANT-rROUND.gpucap.
set -uo pipefail
bin="$1"; NEW="$(cd "$2" && pwd)"; out="$3"; rounds="$4"; shift 4
variants=("$@"); n=${#variants[@]}
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
null=/dev/null  # no yardstick floors here
source "$here/variants.sh"
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < n; i++)); do
    v=${variants[$(((i + r) % n))]}
    if [[ -n ${DEADLINE:-} ]] && (( $(date +%s) > DEADLINE )); then echo "DEADLINE before round $r $v"; exit 0; fi
    variant_prefix "$v" || exit 2
    line=$(timeout 30 taskset -c "${CPUS:-2-9}" env "${vextra[@]}" "${pre[@]}" "$bin" 2>"$out/$v-r$r.err" | grep RESULT); rc=$?
    for c in "$out"/cap-*.gpucap; do [[ -e $c ]] && mv "$c" "$out/$v-r$r.gpucap"; done
    echo "RUN round=$r variant=$v rc=$rc $line"
  done
done
