#!/usr/bin/env bash
# Session 13, device call 4 (carry .carry/s13): s13_call3.sh part A again, its summary kept in $OUT (call 3's
# was cut from the reply): `--sample 100` runs with the detach at an application call's exit, each run's exit
# status and detach stats.
set -u
R=$PWD; D=$R/.carry/s13/dist; g=$D/bin/gpucap
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:$D/lib:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
t0=$(date +%s); W=/tmp/s13c4; mkdir -p $W; S=$OUT/a.txt
fails=0; runs=0
for i in $(seq 1 ${RUNS_A:-30}); do
  (( $(date +%s) - t0 > ${END_A:-150} )) && break
  taskset -c 2-9 $g record -q --capture-range 'nvtx:step#\d+' --sample 100 -o $W/s$i.gpucap -- \
    python3 $R/bench/overhead/sample_steps.py > $W/s$i.out 2> $W/s$i.err
  rc=$?; runs=$((runs+1)); grep -q RESULT $W/s$i.out || rc=99
  [[ $rc != 0 ]] && { fails=$((fails+1)); tail -c 1500 $W/s$i.err >> $S; }
  echo "run $i rc=$rc $(grep -o 'ms_per_iter=[0-9.]*' $W/s$i.out | head -1) $($g info $W/s$i.gpucap --json 2>/dev/null | grep -o '"cupti_detach[a-z_]*": [0-9]*' | tr '\n' ' ')" >> $S
done
echo "A: $fails of $runs runs failed t=$(( $(date +%s) - t0 ))s" >> $S
cat $S
