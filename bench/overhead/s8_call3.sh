#!/usr/bin/env bash
# Kept as run in session 8 (from .carry/s8/runN.sh, where P=.carry/s8 held dist/, tools/, bench/ and torch_graph.py).
# Session 8, device call 3: capture_lanes again (per-thread stream fix);
# kernels.cu drops at the default settings over 10 runs (18.7); torch_graph
# replay base / node mode / graph mode, interleaved (18.6).
set -u
R=$PWD; P=$R/.carry/s8; D=$P/dist; g=$D/bin/gpucap
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
S=$OUT/summary.txt; date > $S
timeout 90 bash $R/tests/gpu/capture_lanes.sh $D /tmp/lanes > $OUT/lanes.log 2>&1; echo "lanes rc=$? t=$(el)s" >> $S
grep -E "FAIL|failures|recorder counters" $OUT/lanes.log >> $S
(cd /tmp && tar czf $OUT/lanes.tgz lanes/*.gpucap lanes/*.expect.json lanes/info.json) 2>> $S
echo "=== kernels drops t=$(el)s" >> $S
for i in $(seq 1 10); do
  timeout 60 taskset -c 2-9 $g record -q -o /tmp/k$i.gpucap -- $P/tools/kernels > /tmp/k$i.log 2>&1
  echo "kernels run $i rc=$? $(grep -h RESULT /tmp/k$i.log | tail -1) | $($g info /tmp/k$i.gpucap | grep -E '^drops')" >> $S
  rm -f /tmp/k$i.gpucap
done
echo "=== torch_graph t=$(el)s" >> $S
G=$OUT/graph.txt
for r in $(seq 0 7); do
  vs=(base node graph); ((r % 2)) && vs=(graph node base)
  for v in "${vs[@]}"; do
    case $v in
      base) pre=() ;;
      node) pre=("$g" record -q -o /tmp/tg.gpucap --) ;;
      graph) pre=("$g" record -q --cuda-graph-trace graph -o /tmp/tg.gpucap --) ;;
    esac
    [ $(( $(date +%s) - t0 )) -gt 420 ] && break 2
    timeout 60 taskset -c 2-9 "${pre[@]}" python3 $P/torch_graph.py > /tmp/tg.log 2>&1
    echo "RUN workload=torch_graph variant=$v round=$r rc=$? $(grep -h '^RESULT' /tmp/tg.log | tail -1 | cut -d' ' -f2-)" >> $G
    rm -f /tmp/tg.gpucap
  done
done
echo "done t=$(el)s" >> $S
