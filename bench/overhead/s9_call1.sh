#!/usr/bin/env bash
# Kept as run in session 9 (P=.carry/s9 held dist/ from scripts/package with the GPU programs of
# tests/gpu/build.sh). Device call 1: the graph fixtures re-recorded with capture streams on by
# default (issue 17 item 3): graphs_nvtx, graph_nodes, nccl_graph.
set -u
R=$PWD; P=$R/.carry/s9; D=$P/dist; g=$D/bin/gpucap
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
S=$OUT/summary.txt; date > $S
timeout 300 bash $R/tests/gpu/record_fixtures.sh $D /tmp/fx graphs_nvtx graph_nodes nccl_graph > $OUT/fixtures.log 2>&1
echo "fixtures rc=$? t=$(el)s" >> $S
grep -E "^==|FAILED|streams|graphs  |drops|damage|unresolved" $OUT/fixtures.log >> $S
for n in graphs_nvtx graph_nodes nccl_graph; do
  [ -f /tmp/fx/$n.gpucap ] || continue
  timeout 60 $g build /tmp/fx/$n.gpucap -o /tmp/fx/$n.json -q >> $S 2>&1
  $g info --json /tmp/fx/$n.gpucap > /tmp/fx/$n.info.json 2>> $S
done
(cd /tmp && tar czf $OUT/caps.tgz fx/*.gpucap fx/*.expect.json fx/*.info.json fx/*.json) 2>> $S
ls -la $OUT /tmp/fx >> $S
echo "done t=$(el)s" >> $S
