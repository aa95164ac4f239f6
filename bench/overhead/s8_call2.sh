#!/usr/bin/env bash
# Kept as run in session 8 (from .carry/s8/runN.sh, where P=.carry/s8 held dist/, tools/, bench/ and torch_graph.py).
# Session 8, device call 2: capture_lanes fixture with lanes, priorities and
# latency timestamps (17.3, 17.4); graph fixtures re-recorded with capture
# streams on; torch graph capture under the new default; NCCL streams.
set -u
R=$PWD; P=$R/.carry/s8; D=$P/dist; g=$D/bin/gpucap
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
S=$OUT/summary.txt; date > $S
echo "=== lanes t=$(el)s" >> $S
timeout 90 bash $R/tests/gpu/capture_lanes.sh $D /tmp/lanes > $OUT/lanes.log 2>&1; echo "lanes rc=$? t=$(el)s" >> $S
tail -25 $OUT/lanes.log >> $S
echo "=== fixtures t=$(el)s" >> $S
timeout 200 bash $R/tests/gpu/record_fixtures.sh $D /tmp/fx graphs_nvtx graph_nodes nccl_graph > $OUT/fixtures.log 2>&1; echo "fixtures rc=$? t=$(el)s" >> $S
grep -E "^==|FAILED|streams|graphs  |drops|damage" $OUT/fixtures.log >> $S
for n in graphs_nvtx graph_nodes nccl_graph; do
  [ -f /tmp/fx/$n.gpucap ] && timeout 60 $g build /tmp/fx/$n.gpucap -o /tmp/fx/$n.json -q >> $S 2>&1
  $g info --json /tmp/fx/$n.gpucap > /tmp/fx/$n.info.json 2>> $S
done
echo "=== torch graph t=$(el)s" >> $S
for cs in 1 0; do
  GPUCAP_CAPTURE_STREAMS=$cs timeout 120 $g record -o /tmp/fx/tg$cs.gpucap -- python3 $P/torch_graph.py > /tmp/fx/tg$cs.log 2>&1
  echo "torch_graph cs=$cs rc=$? t=$(el)s $(grep -h RESULT /tmp/fx/tg$cs.log | tail -1)" >> $S
  $g info --json /tmp/fx/tg$cs.gpucap > /tmp/fx/tg$cs.info.json 2>> $S
  timeout 60 $g build /tmp/fx/tg$cs.gpucap -o /tmp/fx/tg$cs.json.gz -q >> $S 2>&1
done
$g info /tmp/fx/tg1.gpucap | grep -E "graphs|streams|drops" >> $S
(cd /tmp && tar czf $OUT/caps.tgz lanes/*.gpucap lanes/*.expect.json lanes/info.json fx/*.gpucap fx/*.expect.json fx/*.info.json fx/*.json.gz) 2>> $S
ls -la $OUT >> $S
echo "done t=$(el)s" >> $S
