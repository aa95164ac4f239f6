#!/usr/bin/env bash
# Session 6, first (short) call on the H200: does the VM expose a hardware
# PMU to perf_event_open (instructions/cycles of one thread), and base
# against base on launch_loop: sequential runs, and pairs run at the same
# time on two CPU sets (does a drift both see cancel?). Same folder layout as
# price_call3.sh (dist/, bench/, tools/).
set -u
cd "$(dirname "$0")/.."; C=$PWD
export TOOLS=$C/tools PYTHONUNBUFFERED=1 THREAD_COUNTERS_LIB=$C/tools/libthread_counters.so
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
S=$OUT/probe.txt; P=$OUT/price.txt
{
  echo "paranoid $(cat /proc/sys/kernel/perf_event_paranoid)"; uname -r; nproc
  echo "event sources: $(ls /sys/bus/event_source/devices 2>&1 | tr '\n' ' ')"
  grep -m1 'model name' /proc/cpuinfo; grep -m1 -o -w -E 'hypervisor|arch_perfmon|pdcm' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
  dmesg 2>/dev/null | grep -i -E 'perf|pmu' | head -5
  head -1 /proc/stat
  python3 bench/thread_counters.py
} > $S 2>&1
cat $S
B="BLOCKS=7 PER=2000 CALIB=1"
for i in 1 2 3 4 5 6 7 8; do
  (( $(el) > 28 )) && break
  v=base; ((i % 2)) || v=base2
  env $B PIN_CPU=3 taskset -c 2-9 timeout 20 $TOOLS/launch_loop > /tmp/l.log 2>&1
  echo "RUN workload=launch variant=$v round=$(( (i - 1) / 2 )) rc=$? $(grep RESULT /tmp/l.log | cut -d' ' -f2-)" >> $P
  [[ $i == 1 ]] && grep counter /tmp/l.log >> $S
done
for i in 1 2 3 4 5 6; do
  (( $(el) > 45 )) && break
  env $B PIN_CPU=3 taskset -c 2-5 timeout 20 $TOOLS/launch_loop > /tmp/a.log 2>&1 &
  env $B PIN_CPU=7 taskset -c 6-9 timeout 20 $TOOLS/launch_loop > /tmp/b.log 2>&1; wait
  echo "RUN workload=launch variant=pairA round=$((i - 1)) rc=0 $(grep RESULT /tmp/a.log | cut -d' ' -f2-)" >> $P
  echo "RUN workload=launch variant=pairB round=$((i - 1)) rc=0 $(grep RESULT /tmp/b.log | cut -d' ' -f2-)" >> $P
done
cat /tmp/l.log | tail -3 >> $S
python3 bench/price_summary.py $P base >> $S 2>&1
python3 bench/price_summary.py $P pairA >> $S 2>&1
echo "== done $(el)s" >> $S
cat $S
