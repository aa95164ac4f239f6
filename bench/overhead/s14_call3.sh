#!/usr/bin/env bash
# Session 14, device call 3 (carry .carry/s14, dist/ rebuilt: a paused start holds nothing of CUPTI unless
# GPUCAP_PAUSED_GRAPHS=1; a pause keeps CUPTI attached unless GPUCAP_PAUSE_DETACH=1).
#  A. instr.sh on CPUs 0-11: the launch path paused from the start (p_direct, gpucap record --start-paused)
#     against base, CUPTI attached (none) and the old paused state (+GPUCAP_PAUSED_GRAPHS=1); paused_after's
#     stretches with a capture range and SIGUSR2 under the new defaults and with the detach; the eager step
#     paused from the start against base.
#  B. Meanwhile on CPUs 12-15, natively: the 64-thread stress toggled by SIGUSR2 and under a capture range
#     (no detach now); --sample 100 over sample_steps.py (its first recording attaches CUPTI late), its sampled
#     steps against a whole recording; paused_graph.py recording from the start, and started paused with and
#     without --paused-graphs (a graph captured before the first recording).
# (As run: its dist still asked cuStreamGetPriority inside the STREAM_CREATED callback; part B hung on it, found
# in call 4, fixed after. The range and signal variants then meant CUPTI kept attached, as now.)
set -u
R=$PWD; P=$R/.carry/s14
export NEW=$P/dist TOOLS=$P/tools VALGRIND=$P/valgrind/valgrind VALGRIND_LIB=$P/valgrind/lib
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
g=$NEW/bin/gpucap; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
W=/tmp/s14c3; mkdir -p $W
(
  export JOBS=12 RUN_TIMEOUT=${A_TIMEOUT:-240}
  BLOCKS=3 taskset -c 0-11 bash $R/bench/overhead/instr.sh $W/launch launch \
    base none p_direct p_direct+GPUCAP_PAUSED_GRAPHS=1 new_paused lean r_direct > $OUT/instr_launch.txt 2>&1 &
  BLOCKS=3 taskset -c 0-11 bash $R/bench/overhead/instr.sh $W/pa paused_after \
    base paused range range+GPUCAP_PAUSE_DETACH=1 signal > $OUT/instr_paused_after.txt 2>&1 &
  BLOCKS=3 PER=5 taskset -c 0-11 bash $R/bench/overhead/instr.sh $W/step step base p_direct > $OUT/instr_step.txt 2>&1 &
  wait
  echo "A done t=$(el)s"
) &
apid=$!
B=$W/b; mkdir -p $B; S=$OUT/checks.txt; c="timeout 60 taskset -c 12-15"
info() { $g info --json "$1" 2>&1 | grep -oE '"(cupti_detaches|clean|CONCURRENT_KERNEL|RUNTIME)": [a-z0-9]+' | tr -d '"' | tr '\n' ' '; }
for i in 1 2 3 4 5 6; do
  LD_PRELOAD=$TOOLS/libsegv_trace.so $c $g record --max-mb 64 -o $B/st$i.gpucap -- $NEW/gpu/stress 64 4 1 exit > $B/st$i.log 2>&1
  rc=$?; echo "stress_signal $i rc=$rc $(info $B/st$i.gpucap)" >> $S; ((rc)) && tail -30 $B/st$i.log >> $S
  LD_PRELOAD=$TOOLS/libsegv_trace.so $c $g record --capture-range 'nvtx:worker0' --capture-range-end repeat --max-mb 64 \
    -o $B/sr$i.gpucap -- $NEW/gpu/stress 64 3 0 exit > $B/sr$i.log 2>&1
  rc=$?; echo "stress_range $i rc=$rc $(info $B/sr$i.gpucap)" >> $S; ((rc)) && tail -30 $B/sr$i.log >> $S
done
for i in 1 2; do
  $c $g record -q --capture-range 'nvtx:step#\d+' --sample 100 -o $B/s$i.gpucap -- python3 $R/bench/overhead/sample_steps.py > $B/s$i.out 2> $B/s$i.err
  rc=$?; echo "sample $i rc=$rc $(grep -o 'ms_per_iter=[0-9.]*' $B/s$i.out | head -1) $(info $B/s$i.gpucap)" >> $S; ((rc)) && tail -c 800 $B/s$i.err >> $S
done
BLOCKS=2 $c $g record -q --window-nvtx 'step#\d+' -o $B/full.gpucap -- python3 $R/bench/overhead/sample_steps.py > /dev/null 2>&1
echo "full rc=$?" >> $S
timeout 90 python3 $R/bench/overhead/sampled_steps.py $g $B/s1.gpucap $B/full.gpucap $W/ss > $W/complete.json 2>&1
grep -h "sampled_equal\|sampled_windows\|without_flow\|outside" $W/complete.json | head -8 >> $S
for v in recorded start_paused start_paused_graphs; do
  pre=(); [[ $v == start_* ]] && pre=(env START_PAUSED=1 $g record -q --start-paused); [[ $v == recorded ]] && pre=($g record -q)
  [[ $v == start_paused_graphs ]] && pre+=(--paused-graphs)
  $c "${pre[@]}" -o $B/pg-$v.gpucap -- python3 $R/bench/overhead/paused_graph.py > $B/pg-$v.log 2>&1
  rc=$?; $g build -q $B/pg-$v.gpucap -o $B/pg-$v.json > /dev/null 2>&1
  echo "paused_graph $v rc=$rc build=$? $(info $B/pg-$v.gpucap) $(python3 $R/bench/overhead/graph_kernels.py $B/pg-$v.json 2>&1)" >> $S
  ((rc)) && tail -c 800 $B/pg-$v.log >> $S
done
echo "B done t=$(el)s" >> $S
wait $apid
cut -c1-300 $S
for f in instr_launch instr_paused_after instr_step; do
  echo "=== $f"; grep -E "^(RUN|CAPTURE)" $OUT/$f.txt | cut -c1-200; sed -n '/instructions per launch/,$p' $OUT/$f.txt | cut -c1-250
done
echo "done t=$(el)s"
