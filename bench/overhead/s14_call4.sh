#!/usr/bin/env bash
# Session 14, device call 4 (carry .carry/s14): what call 3's part B did not reach, then a hunt for the hang.
#  1. --sample 100 over sample_steps.py (a capture range's recorder now attaches CUPTI at its first sampled
#     step) and its sampled steps against a whole recording (sampled_steps.py).
#  2. paused_graph.py started paused, with and without --paused-graphs (a graph captured before the first
#     recording, replayed while recording).
#  3. The 64-thread SIGUSR2 stress, each run under a watchdog: past HANG_S seconds every thread's stack is
#     printed (libsegv_trace.so on SIGQUIT), then the run is killed.
set -u
R=$PWD; P=$R/.carry/s14; NEW=$P/dist; TOOLS=$P/tools
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
g=$NEW/bin/gpucap; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
B=/tmp/s14c4; mkdir -p $B; S=$OUT/checks.txt
c="timeout -k 3 45 taskset -c 2-9"
info() { $g info --json "$1" 2>&1 | grep -oE '"(cupti_detaches|clean|CONCURRENT_KERNEL|RUNTIME)": [a-z0-9]+' | tr -d '"' | tr '\n' ' '; }
$c $g record -q --capture-range 'nvtx:step#\d+' --sample 100 -o $B/s1.gpucap -- python3 $R/bench/overhead/sample_steps.py > $B/s1.out 2> $B/s1.err
rc=$?; echo "sample rc=$rc $(grep -o 'ms_per_iter=[0-9.]*' $B/s1.out | head -1) $(info $B/s1.gpucap) t=$(el)" >> $S
((rc)) && tail -c 800 $B/s1.err >> $S
BLOCKS=2 $c $g record -q --window-nvtx 'step#\d+' -o $B/full.gpucap -- python3 $R/bench/overhead/sample_steps.py > /dev/null 2>&1
echo "full rc=$? t=$(el)" >> $S
timeout -k 3 40 python3 $R/bench/overhead/sampled_steps.py $g $B/s1.gpucap $B/full.gpucap $B/ss > $B/complete.json 2>&1
grep -h "sampled_equal\|sampled_windows\|without_flow\|outside" $B/complete.json | head -8 >> $S
for v in start_paused start_paused_graphs; do
  pre=(env START_PAUSED=1 $g record -q --start-paused); [[ $v == start_paused_graphs ]] && pre+=(--paused-graphs)
  $c "${pre[@]}" -o $B/pg-$v.gpucap -- python3 $R/bench/overhead/paused_graph.py > $B/pg-$v.log 2>&1
  rc=$?; $g build -q $B/pg-$v.gpucap -o $B/pg-$v.json > /dev/null 2>&1
  echo "paused_graph $v rc=$rc build=$? $(info $B/pg-$v.gpucap) $(python3 $R/bench/overhead/graph_kernels.py $B/pg-$v.json 2>&1) t=$(el)" >> $S
  ((rc)) && tail -c 800 $B/pg-$v.log >> $S
done
cat $S
hangs=0; runs=0
for i in $(seq 1 30); do
  (( $(el) > ${END:-150} )) && break
  LD_PRELOAD=$TOOLS/libsegv_trace.so taskset -c 2-13 $g record --max-mb 64 -o $B/st$i.gpucap -- $NEW/gpu/stress 64 4 1 exit > $B/st$i.log 2>&1 &
  pid=$!; waited=0
  while kill -0 $pid 2>/dev/null && ((waited < ${HANG_S:-20})); do sleep 1; waited=$((waited + 1)); done
  runs=$((runs + 1))
  if kill -0 $pid 2>/dev/null; then
    hangs=$((hangs + 1))
    prog=$(pgrep -f "gpu/stress 64" | grep -v "^$pid$" | head -1)
    echo "HANG run $i (program pid $prog) t=$(el)" >> $S
    for t in /proc/$prog/task/*; do echo "$(basename $t) $(cat $t/comm) $(cat $t/wchan 2>/dev/null)"; done | sort -k2 | uniq -c -f1 | head -20 >> $S
    kill -QUIT $prog; sleep 2
    kill -KILL $prog $pid 2>/dev/null; wait $pid 2>/dev/null
    cp $B/st$i.log $OUT/hang$i.log
  else
    wait $pid; rc=$?
    echo "stress $i rc=$rc $(info $B/st$i.gpucap) t=$(el)" >> $S
    ((rc)) && { grep segv_trace $B/st$i.log | head -30 >> $S; }
  fi
done
echo "stress: $hangs hangs in $runs runs t=$(el)" >> $S
tail -n +1 $S | tail -40
