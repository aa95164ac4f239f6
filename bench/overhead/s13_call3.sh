#!/usr/bin/env bash
# Session 13, device call 3 (carry .carry/s13: dist/ and paused_after built from this tree).
#  A. The detach back at an application call's exit (the own-thread finalize crashed 5 of 28 runs): N runs of
#     `--sample 100` over sample_steps.py, each one's exit status and detach stats; one run's sampled steps
#     against a whole recording (sampled_steps.py).
#  B. paused_after.sh (one process: paused stretches before and after recorded ranges), rounds of variants:
#     base, paused (--start-paused), range (the default detach), range_attached (GPUCAP_PAUSE_DETACH=0),
#     range_nohold (GPUCAP_PAUSED_GRAPHS=0), range_noapi (GPUCAP_API=none).
set -u
R=$PWD; P=$R/.carry/s13; D=$P/dist; g=$D/bin/gpucap
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:$D/lib:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
W=/tmp/s13c3; mkdir -p $W
echo "=== A t=$(el)s"
fails=0; runs=0
for i in $(seq 1 ${RUNS_A:-8}); do
  (( $(el) > ${END_A:-130} )) && break
  taskset -c 2-9 $g record -q --capture-range 'nvtx:step#\d+' --sample 100 -o $W/s$i.gpucap -- \
    python3 $R/bench/overhead/sample_steps.py > $W/s$i.out 2> $W/s$i.err
  rc=$?; runs=$((runs+1)); grep -q RESULT $W/s$i.out || rc=99
  [[ $rc != 0 ]] && { fails=$((fails+1)); tail -c 1500 $W/s$i.err; cp $W/s$i.err $OUT/; }
  echo "run $i rc=$rc $(grep -o 'ms_per_iter=[0-9.]*' $W/s$i.out | head -1) $($g info $W/s$i.gpucap --json 2>/dev/null | grep -o '"cupti_detach[a-z_]*": [0-9]*' | tr '\n' ' ')"
done
echo "A: $fails of $runs runs failed t=$(el)s"
BLOCKS=2 timeout 60 taskset -c 2-9 $g record -q --window-nvtx 'step#\d+' -o $W/full.gpucap -- python3 $R/bench/overhead/sample_steps.py > /dev/null 2>&1
echo "full rc=$?"
timeout 60 python3 $R/bench/overhead/sampled_steps.py $g $W/s1.gpucap $W/full.gpucap /tmp/ss > $OUT/complete.json 2>&1
grep -h "sampled_equal\|sampled_windows\|without_flow\|outside" $OUT/complete.json
echo "=== B t=$(el)s"
DEADLINE=$(( t0 + ${END_B:-360} )) bash $R/bench/overhead/paused_after.sh $P/paused_after $D $W/b 30 \
  base paused range range_attached range_nohold range_noapi
$g info $W/b/range-r0.gpucap 2>&1 | grep -E "recording|sampled|paused|drops|detach" | head -12
echo "done t=$(el)s"
