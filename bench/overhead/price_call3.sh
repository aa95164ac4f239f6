#!/usr/bin/env bash
# As run on the H200 on 2026-12-01 (bench/README.md, "A measurement that
# resolves a point"), from a folder holding dist/ (scripts/package of this
# branch), bench/ (this folder and the yardstick's torch_graph.py) and tools/
# (libnull_cupti.so, launch_loop, kernels: built with the commands in price.sh
# and the yardstick's README). One call, every part under its own deadline:
#   A  launch_loop across processes: pinned + calibrated, base against base
#      pinned and not, the floors, paused and recording, latency timestamps,
#      and in-process on/off blocks (t_rec) with their label-only control
#   B  the eager torch step through price_fork.py (many short forked runs)
#   C  the torch graph replay, node mode against graph mode
#   D  kernels.cu under gpucap record at the default settings, 10 runs: drops;
#      graph-mode captures of kernels.cu and torch_graph.py, built
set -u
cd "$(dirname "$0")/.."; C=$PWD
export NEW=$C/dist TOOLS=$C/tools CPUS=2-9 PIN=3 PYTHONUNBUFFERED=1 RUN_TIMEOUT=40
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
W=/tmp/w; mkdir -p $W; P=$OUT/price.txt; S=$OUT/summary.txt
nproc >> $S; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >> $S 2>&1

DEADLINE=$((t0 + ${A_S:-190})) BLOCKS=11 PER=2000 bash bench/price.sh $W/launch 12 launch \
  base base2 base_np base_np2 none kernel kernel_cb lean new_paused p_direct p_domain r_direct r_lat new_rec \
  t_rec t_label >> $P 2>&1
echo "== A done $(el)s" >> $S
DEADLINE=$((t0 + ${B_S:-360})) bash bench/price.sh $W/fstep 8 fork-step \
  base base2 none lean kernel_cb p_direct r_direct r_lat t_rec t_label >> $P 2>&1
echo "== B done $(el)s" >> $S
DEADLINE=$((t0 + ${C_S:-425})) bash bench/price.sh $W/fgraph 8 fork-graph \
  base base2 none lean r_direct r_graph >> $P 2>&1
echo "== C done $(el)s" >> $S

for i in $(seq 1 10); do
  (( $(el) > ${D_S:-490} )) && break
  timeout 30 $NEW/bin/gpucap record -q -o $W/k$i.gpucap -- $TOOLS/kernels > $W/k$i.log 2>&1
  echo "KERNELS run=$i rc=$? $(grep RESULT $W/k$i.log) $(el)s" >> $S
  $NEW/bin/gpucap info $W/k$i.gpucap 2>&1 | grep -i -E "drop|records|closed" >> $S; rm -f $W/k$i.gpucap
done
timeout 30 $NEW/bin/gpucap record -q --cuda-graph-trace graph -o $W/kg.gpucap -- $TOOLS/kernels > $W/kg.log 2>&1
echo "KERNELS graph-mode rc=$? $(grep RESULT $W/kg.log)" >> $S; $NEW/bin/gpucap info $W/kg.gpucap >> $S 2>&1
for m in node graph; do
  ITERS=50 timeout 40 $NEW/bin/gpucap record -q --cuda-graph-trace $m -o $OUT/tg_$m.gpucap -- \
    python3 bench/torch_graph.py > $W/tg_$m.log 2>&1
  echo "TORCH_GRAPH $m rc=$? $(grep RESULT $W/tg_$m.log)" >> $S
  $NEW/bin/gpucap info $OUT/tg_$m.gpucap >> $S 2>&1
  $NEW/bin/gpucap build $OUT/tg_$m.gpucap -o $W/tg_$m.json >> $S 2>&1; echo "build rc=$?" >> $S
done
echo "== D done $(el)s" >> $S
for b in base r_direct none p_direct; do
  echo "##### ratios to $b" >> $S; python3 bench/price_summary.py $P $b >> $S 2>&1
done
tar czf $OUT/logs.tgz -C $W --exclude='*.gpucap' . 2>/dev/null
echo "== all done $(el)s" >> $S
