#!/usr/bin/env bash
# Session 13, device call 1 for the recorder (carry .carry/s13: dist/ from scripts/package): what the paused
# steps of a sampled run pay for (the question of session 12's unrun second call, with one more variant). sample.sh rounds of base,
# sample, sample_noapi (the RUNTIME/DRIVER kinds never enabled), sample_cb (API records from callbacks: the
# kinds never enabled either), sample_detach_nohold (no CUPTI attach again between samples) and paused
# (--start-paused); each run's seg_ms (its stretches between samples) beside the round's ratios.
set -u
R=$PWD; D=$R/.carry/s13/dist
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:$D/lib:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
t0=$(date +%s)
CPUS=2-9 RUN_TIMEOUT=40 DEADLINE=$(( t0 + ${PRICE_END:-240} )) bash $R/bench/overhead/sample.sh $D /tmp/s13q 20 \
  base sample sample_noapi sample_cb sample_detach_nohold paused > $OUT/price1.txt 2>&1
python3 $R/bench/overhead/price_summary.py $OUT/price1.txt base 2>&1 | head -30
grep -o "variant=[a-z_0-9]* .*ms_per_iter=[0-9.]*\|seg_ms=[0-9.,]*" $OUT/price1.txt | paste - - | sed 's/ rc=.*RESULT//' | cut -c1-260
for f in /tmp/s13q/sample-r0.gpucap /tmp/s13q/samplenoapi-r0.gpucap; do
  [ -f $f ] && $D/bin/gpucap info $f 2>&1 | grep -i "detach\|switch\|drop\|kernel" | head -12
done
echo "done t=$(( $(date +%s) - t0 ))s"
