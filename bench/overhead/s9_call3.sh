#!/usr/bin/env bash
# Kept as run in session 9 (P=.carry/s9). Device call 3 (issue 19): where --sample's paused price comes
# from, within each process: sample_steps.py's seg_ms (median host time per step in each stretch between
# sampled steps) for base, sample, sample_detach, sample_detach_nohold and paused, 3 rounds rotated.
set -u
R=$PWD; P=$R/.carry/s9; D=$P/dist; g=$D/bin/gpucap
S=$OUT/summary.txt; date > $S
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
CPUS=2-9 RUN_TIMEOUT=45 DEADLINE=$(( $(date +%s) + 300 )) bash $R/bench/overhead/sample.sh $D /tmp/smp 3 \
  base sample sample_detach sample_detach_nohold paused > $OUT/runs.txt 2>&1
cat $OUT/runs.txt >> $S
for f in /tmp/smp/detach-r0.gpucap /tmp/smp/nohold-r0.gpucap /tmp/smp/sample-r0.gpucap; do
  [ -f $f ] && { echo "== $f"; $g info $f | grep -E "recording|interval|sampled|detach" | head -8; } >> $S
done
$g info --json /tmp/smp/detach-r0.gpucap > $OUT/detach-r0.info.json 2>/dev/null
tail -3 /tmp/smp/*.err >> $OUT/errs.txt 2>&1
echo done >> $S
