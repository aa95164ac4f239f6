#!/usr/bin/env bash
# Session 6, third call on the H200. price_call6.sh showed that a launch_loop
# process's speed is a level of its own (the fastest of its 100 blocks moves
# +-12% between processes, stays within a few % inside one), so:
#   A  is that level the process's address-space layout? base against base
#      with randomisation off (setarch -R, *_nr) and on, and the floors and
#      the recorder with it off
#   B  the eager torch step in-process: recording and paused blocks
#      alternating block by block (t_rec), every iteration timed, and the
#      label-only control (t_label)
# Same folder layout as price_call3.sh (dist/, bench/, tools/).
set -u
cd "$(dirname "$0")/.."; C=$PWD
export NEW=$C/dist TOOLS=$C/tools CPUS=${CPUS:-2-9} PIN=${PIN:-3} PYTHONUNBUFFERED=1 RUN_TIMEOUT=40 CALIB=0
export THREAD_COUNTERS_LIB=$C/tools/libthread_counters.so
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
W=/tmp/w; mkdir -p $W; P=$OUT/price.txt; S=$OUT/summary.txt
DEADLINE=$((t0 + ${A_S:-70})) BLOCKS=100 PER=200 bash bench/price.sh $W/launch 30 launch \
  base base2 base_nr base2_nr none_nr p_direct_nr lean_nr r_direct_nr >> $P 2>&1
echo "== A done $(el)s" >> $S
DEADLINE=$((t0 + ${B_S:-128})) BLOCKS=12 PER=30 CALIB_N=0 TOGGLE_EVERY=1 bash bench/price.sh $W/fstep 30 fork-step \
  t_rec t_label >> $P 2>&1
echo "== B done $(el)s" >> $S
python3 bench/price_summary.py $P base >> $S 2>&1
echo "##### ratios to base_nr" >> $S; python3 bench/price_summary.py $P base_nr >> $S 2>&1
for s in launch mix; do
  python3 bench/quantile_spread.py launch $W/launch/launch.*.log --series $s >> $S 2>&1
  python3 bench/quantile_spread.py launch $W/launch/launch.*.log --series $s --base base_nr >> $S 2>&1
done
tar czf $OUT/logs.tgz -C $W --exclude='*.gpucap' . 2>/dev/null
echo "== all done $(el)s" >> $S
grep -A12 "by quantile" $S | head -50; grep -A5 "onoff_p10\|onoff_cpu_p10" $S | head -30
