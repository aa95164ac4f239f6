#!/usr/bin/env bash
# Session 6, second call on the H200 (the VM has no hardware PMU: see
# price_call5.sh's probe): short blocks / single iterations and their low
# quantiles, across processes, with base against base in every round.
#   A  launch_loop, 100 blocks of 200 launches per mode, no calibration
#   A2 in-process recording/paused blocks (t_rec) and the label control (t_label)
#   B  the eager torch step through price_fork.py, every iteration timed
# Same folder layout as price_call3.sh (dist/, bench/, tools/).
set -u
cd "$(dirname "$0")/.."; C=$PWD
export NEW=$C/dist TOOLS=$C/tools CPUS=${CPUS:-2-9} PIN=${PIN:-3} PYTHONUNBUFFERED=1 RUN_TIMEOUT=40 CALIB=0
export THREAD_COUNTERS_LIB=$C/tools/libthread_counters.so
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
W=/tmp/w; mkdir -p $W; P=$OUT/price.txt; S=$OUT/summary.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >> $S 2>&1
DEADLINE=$((t0 + ${A_S:-100})) BLOCKS=100 PER=200 bash bench/price.sh $W/launch 30 launch \
  base base2 none kernel kernel_cb lean p_direct new_paused r_direct new_rec >> $P 2>&1
echo "== A done $(el)s" >> $S
DEADLINE=$((t0 + ${A2_S:-140})) BLOCKS=100 PER=200 TOGGLE_EVERY=10 bash bench/price.sh $W/toggle 30 launch \
  t_rec t_label >> $P 2>&1
echo "== A2 done $(el)s" >> $S
DEADLINE=$((t0 + ${B_S:-255})) BLOCKS=10 PER=30 CALIB_N=0 bash bench/price.sh $W/fstep 30 fork-step \
  base base2 none kernel lean kernel_cb p_direct r_direct >> $P 2>&1
echo "== B done $(el)s" >> $S
for b in base r_direct lean; do
  echo "##### ratios to $b" >> $S; python3 bench/price_summary.py $P $b >> $S 2>&1
done
tar czf $OUT/logs.tgz -C $W --exclude='*.gpucap' . 2>/dev/null
echo "== all done $(el)s" >> $S
grep -E "^== |^launch launch_(us|p10_us)|^fork-step (us_per_iter|it_p10_us)|^\| (base2|none|p_direct|lean|r_direct) " $S | head -60
