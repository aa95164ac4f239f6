#!/usr/bin/env bash
# One device call for issue 19 (branch sample): the --sample 100 price over
# 2000 eager steps, two interleaved streams side by side on disjoint CPUs,
# and the completeness of the sampled steps. The carried folder holds dist/
# (scripts/package) and bench/overhead's sample.sh, sample_steps.py,
# sampled_steps.py and price_summary.py; this file as run.sh. From the repo
# root there (session 6: run(carry=[".carry/sample"], timeout_s=230, ...)):
#   PRICE_S=160 timeout 225 bash .carry/sample/run.sh
# VARIANTS (default: base sample base2) picks sample.sh's variants.
set -u
R=$PWD; P=$R/.carry/sample; D=$P/dist; g=$D/bin/gpucap
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
S=$OUT/summary.txt; F=/tmp/fx; mkdir -p $F
{ date; nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader; nproc; uptime
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  lscpu | grep -E 'Model name|Thread|Core|Socket|NUMA node'; } > $S 2>&1
# 1. The price: two streams of interleaved rounds (base, sample, base2), side
#    by side on disjoint CPUs, offset so that one runs base while the other
#    runs sample.
DL=$(( t0 + ${PRICE_S:-170} ))
CPUS=${CPUS_A:-2-7} RUN_TIMEOUT=40 DEADLINE=$DL ROUND0=0 bash $P/sample.sh $D /tmp/pa 50 ${VARIANTS:-base sample base2} > $OUT/price-a.txt 2>&1 &
a=$!
CPUS=${CPUS_B:-9-14} RUN_TIMEOUT=40 DEADLINE=$DL ROUND0=101 bash $P/sample.sh $D /tmp/pb 50 ${VARIANTS:-base sample base2} > $OUT/price-b.txt 2>&1 &
b=$!
wait $a $b
echo "price end t=$(el)s" >> $S
# 2. Completeness: a whole recording of the same program (240 steps) as the
#    reference, and the first sampled capture of each stream.
BLOCKS=2 timeout 40 taskset -c ${CPUS_A:-2-7} $g record -q --window-nvtx 'step#\d+' -o $F/full.gpucap -- python3 $P/sample_steps.py >> $S 2>&1
echo "full rc=$? t=$(el)s" >> $S
for c in /tmp/pa/sample-r0.gpucap /tmp/pb/sample-r101.gpucap; do
  [ -f $c ] || { echo "missing $c" >> $S; continue; }
  timeout 40 python3 $P/sampled_steps.py $g $c $F/full.gpucap /tmp/ss-$(basename $c) > $OUT/complete-$(basename $c .gpucap).json 2>&1 &
done
$g info /tmp/pa/sample-r0.gpucap > $OUT/info-sample-r0.txt 2>&1; $g info /tmp/pa/sample-r0.gpucap --json >> $OUT/info-sample-r0.txt 2>&1
wait
echo "complete t=$(el)s" >> $S
{ cat $OUT/price-a.txt; sed 's/round=\([0-9]*\)/round=\1/' $OUT/price-b.txt; } > /tmp/both.txt
for f in $OUT/price-a.txt $OUT/price-b.txt /tmp/both.txt; do
  echo "=== $f base" >> $S; python3 $P/price_summary.py $f base >> $S 2>&1
  echo "=== $f base2" >> $S; python3 $P/price_summary.py $f base2 >> $S 2>&1
done
grep -h "sampled_equal\|sampled_windows\|without_flow\|outside" $OUT/complete-*.json >> $S
echo "all done t=$(el)s" >> $S
