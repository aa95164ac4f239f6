#!/usr/bin/env bash
# Session 14, device call 2 (carry .carry/s14, rebuilt: dist/ with GPUCAP_LATE_API; tools/libsegv_trace.so).
#  A. instr.sh on CPUs 0-11: what CUPTI keeps doing on the launch path once its kinds were on. paused_after's
#     stretches and recorded ranges with CUPTI kept attached (signal_attached) and one thing changed each: no API
#     records, kernels alone, API records from callbacks, the lean API ids switched on one by one after cuInit
#     (GPUCAP_LATE_API=cbid, =primed); the launch path's variants again, with the functions that cost.
#  B. Meanwhile on CPUs 12-15: the 64-thread SIGUSR2 stress that crashed once in 6 runs with the detach, each
#     run with libsegv_trace.so preloaded (the faulting thread's stack on a crash).
# (As run: its dist had GPUCAP_LATE_API=kinds|cbid|primed, removed after this call: cbid and primed gave no API
# records. The detach was still SIGUSR2's default in this dist.)
set -u
R=$PWD; P=$R/.carry/s14
export NEW=$P/dist TOOLS=$P/tools VALGRIND=$P/valgrind/valgrind VALGRIND_LIB=$P/valgrind/lib
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
g=$NEW/bin/gpucap; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
W=/tmp/s14c2; mkdir -p $W
echo "=== A t=$(el)s"
(
  export JOBS=12 RUN_TIMEOUT=${A_TIMEOUT:-200}
  sa=signal_attached
  BLOCKS=3 taskset -c 0-11 bash $R/bench/overhead/instr.sh $W/pa paused_after \
    base paused $sa range $sa+GPUCAP_API=none $sa+GPUCAP_API=none+GPUCAP_KINDS=kernel \
    $sa+GPUCAP_API_RECORDS=callback $sa+GPUCAP_LATE_API=cbid $sa+GPUCAP_LATE_API=primed \
    signal+GPUCAP_API_RECORDS=callback > $OUT/instr_paused_after.txt 2>&1 &
  BLOCKS=3 taskset -c 0-11 bash $R/bench/overhead/instr.sh $W/launch launch \
    base none p_direct lean r_direct r_cb kernel > $OUT/instr_launch.txt 2>&1 &
  wait
  echo "A done t=$(el)s"
) &
apid=$!
echo "=== B t=$(el)s"
B=$W/b; mkdir -p $B; S=$OUT/stress.txt; crashes=0; runs=0
for i in $(seq 1 ${STRESS_RUNS:-40}); do
  (( $(el) > ${END_B:-200} )) && break
  LD_PRELOAD=$TOOLS/libsegv_trace.so timeout 60 taskset -c 12-15 $g record --max-mb 64 -o $B/stress$i.gpucap -- \
    $NEW/gpu/stress 64 4 1 exit > $B/stress$i.log 2>&1
  rc=$?; runs=$((runs + 1))
  echo "stress $i rc=$rc $($g info --json $B/stress$i.gpucap 2>&1 | grep -oE '"(cupti_detaches|clean)": [a-z0-9]+' | tr -d '"' | tr '\n' ' ')" >> $S
  if ((rc != 0)); then crashes=$((crashes + 1)); grep -v "^gpucap: \(paused\|recording\)" $B/stress$i.log | tail -60 >> $S; fi
done
echo "B: $crashes of $runs runs failed t=$(el)s" >> $S
wait $apid
cat $S | cut -c1-300
for f in instr_paused_after instr_launch; do
  echo "=== $f"; grep -E "^(RUN|CAPTURE)" $OUT/$f.txt | cut -c1-220; sed -n '/instructions per launch/,$p' $OUT/$f.txt
done
echo "done t=$(el)s"
