#!/usr/bin/env bash
# Session 14, device call 1 (carry .carry/s14: dist/ from this tree; toggle_ab.py from ../shared/yardstick; tools/: launch_loop, paused_after,
# libcallgrind_mark.so and libnull_cupti.so built with valgrind's headers; valgrind/: Debian 12's valgrind.bin
# and its callgrind tool, VALGRIND_LIB).
#  A. Instructions retired (instr.sh), the runs in parallel on CPUs 0-11: the launch path's variants, the paused
#     stretches around recorded ranges and SIGUSR2 pauses (paused_after), and the eager PyTorch step.
#  B. Meanwhile on CPUs 12-15, a pause by SIGUSR2 now detaching CUPTI by default: the 64-thread SIGUSR2 stress,
#     toggle_ab.py's 39 toggles, paused_graph.py (a graph captured while paused, replayed after): each run's
#     exit status, detaches, damage and, for paused_graph, the replayed kernels led back to their nodes.
#  C. After A: paused_after.sh's timed rounds (base base_signal signal signal_attached range) until the deadline.
# (As run: the recorder of this call made SIGUSR2 pauses detach by default; part B's crash made this session take
# the detach default back, for capture ranges too. variants.sh's `signal` then meant the detach.)
set -u
R=$PWD; P=$R/.carry/s14
export NEW=$P/dist TOOLS=$P/tools VALGRIND=$P/valgrind/valgrind VALGRIND_LIB=$P/valgrind/lib
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
g=$NEW/bin/gpucap; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
W=/tmp/s14c1; mkdir -p $W
nproc; free -g | head -2
echo "=== A t=$(el)s"
(
  export JOBS=12 RUN_TIMEOUT=${A_TIMEOUT:-330}
  taskset -c 0-11 bash $R/bench/overhead/instr.sh $W/launch launch \
    base base2 none kernel kernel_cb lean floor_all p_direct p_nosub p_nonvtx r_direct r_cb r_nosub r_leankinds \
    > $OUT/instr_launch.txt 2>&1 &
  BLOCKS=3 taskset -c 0-11 bash $R/bench/overhead/instr.sh $W/pa paused_after \
    base paused range range_attached signal signal_attached > $OUT/instr_paused_after.txt 2>&1 &
  BLOCKS=3 PER=5 taskset -c 0-11 bash $R/bench/overhead/instr.sh $W/step step base lean r_direct \
    > $OUT/instr_step.txt 2>&1 &
  wait
  echo "A done t=$(el)s"
) &
apid=$!
echo "=== B t=$(el)s"
B=$W/b; mkdir -p $B; S=$OUT/detach_checks.txt
for i in $(seq 1 ${STRESS_RUNS:-6}); do
  timeout 60 taskset -c 12-15 $g record --max-mb 64 -o $B/stress$i.gpucap -- $NEW/gpu/stress 64 4 1 exit > $B/stress$i.log 2>&1
  rc=$?
  echo "stress $i rc=$rc $($g info --json $B/stress$i.gpucap 2>&1 | grep -oE '"(cupti_detaches|clean_shutdown|frames_lost)": [a-z0-9]+' | tr -d '"' | tr '\n' ' ')" >> $S
  ((rc == 0)) || tail -c 600 $B/stress$i.log >> $S
done
for i in $(seq 1 ${TOGGLE_RUNS:-4}); do
  BLOCKS=40 PER=20 timeout 90 taskset -c 12-15 $g record -q -o $B/toggle$i.gpucap -- \
    python3 $P/toggle_ab.py signal > $B/toggle$i.log 2>&1
  rc=$?
  echo "toggle $i rc=$rc $(grep -o 'ratio=[0-9.]*\|cpu_ratio=[0-9.]*' $B/toggle$i.log | tr '\n' ' ') $($g info --json $B/toggle$i.gpucap 2>&1 | grep -oE '"(cupti_detaches|clean_shutdown)": [a-z0-9]+' | tr -d '"' | tr '\n' ' ')" >> $S
  ((rc == 0)) || tail -c 1500 $B/toggle$i.log >> $S
done
for i in 1 2; do
  timeout 90 taskset -c 12-15 $g record -q -o $B/pg$i.gpucap -- python3 $R/bench/overhead/paused_graph.py > $B/pg$i.log 2>&1
  rc=$?
  $g build $B/pg$i.gpucap -o $B/pg$i.json > /dev/null 2>&1
  echo "paused_graph $i rc=$rc build=$? $(grep -o 'RESULT.*' $B/pg$i.log) $($g info --json $B/pg$i.gpucap 2>&1 | grep -oE '"(cupti_detaches|clean_shutdown)": [a-z0-9]+' | tr -d '"' | tr '\n' ' ') $(python3 - $B/pg$i.json <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ranges = {e["name"] for e in ev if e.get("cat") == "gpu_user_annotation"}
kern = [e for e in ev if e.get("cat") == "kernel"]
graph = [e for e in kern if e.get("args", {}).get("graph node id")]
print(f"kernels={len(kern)} graph_kernels={len(graph)} gpu_ranges={sorted(ranges)}")
PY
)" >> $S
  ((rc == 0)) || tail -c 1500 $B/pg$i.log >> $S
done
echo "B done t=$(el)s" >> $S
cat $S
wait $apid
echo "=== C t=$(el)s"
DEADLINE=$(( t0 + ${END_C:-540} )) bash $R/bench/overhead/paused_after.sh $TOOLS/paused_after $NEW $W/c 30 \
  base base_signal signal signal_attached range > $OUT/paused_after_runs.txt 2>&1
python3 $R/bench/overhead/paused_after_summary.py $OUT/paused_after_runs.txt | tee $OUT/paused_after_table.txt
grep -c "rc=0" $OUT/paused_after_runs.txt; grep -v "rc=0" $OUT/paused_after_runs.txt | head -5
for f in instr_launch instr_paused_after instr_step; do echo "=== $f"; grep -E "^(RUN|CAPTURE)" $OUT/$f.txt | cut -c1-160; sed -n '/instructions per launch/,$p' $OUT/$f.txt; done
echo "done t=$(el)s"
