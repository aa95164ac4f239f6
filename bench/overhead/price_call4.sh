#!/usr/bin/env bash
# As run on the H200 on 2026-12-01 after price_call3.sh (same folder layout):
# the graph replay, whose wall time the GPU sets, resolved 0.1 point across
# processes there, so the paused recorder, latency timestamps, graph mode and
# the callback floor are measured on it; then kernels.cu's drops with a
# larger buffer pool (what the default's drops need).
set -u
cd "$(dirname "$0")/.."; C=$PWD
export NEW=$C/dist TOOLS=$C/tools CPUS=2-9 PIN=3 PYTHONUNBUFFERED=1 RUN_TIMEOUT=40
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
W=/tmp/w; mkdir -p $W; P=$OUT/price.txt; S=$OUT/summary.txt
DEADLINE=$((t0 + ${C_S:-115})) bash bench/price.sh $W/fgraph 8 fork-graph \
  base base2 none lean kernel_cb p_direct r_direct r_lat r_graph >> $P 2>&1
echo "== graph done $(el)s" >> $S
for pool in 128 256; do
  for i in $(seq 1 10); do
    (( $(el) > ${D_S:-165} )) && break
    timeout 30 $NEW/bin/gpucap record -q --pool-mb $pool -o $W/k.gpucap -- $TOOLS/kernels > $W/k.log 2>&1
    echo "KERNELS pool_mb=$pool run=$i rc=$? $(grep RESULT $W/k.log) $($NEW/bin/gpucap info $W/k.gpucap 2>&1 | grep -i drops) $(el)s" >> $S
    rm -f $W/k.gpucap
  done
done
for b in base r_direct; do echo "##### ratios to $b" >> $S; python3 bench/price_summary.py $P $b >> $S 2>&1; done
echo "== all done $(el)s" >> $S
