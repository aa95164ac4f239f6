#!/usr/bin/env bash
# Session 12, device call 2 for the recorder (P=.carry/s12, as s12_call1.sh): what the paused steps of a sampled
# run pay for. sample.sh rounds of base, sample, sample_noapi (no API records: the RUNTIME/DRIVER kinds never
# enabled), sample_cb (API records from callbacks: the kinds never enabled either) and paused (--start-paused);
# each run's seg_ms (its stretches between samples) beside the round's ratios.
set -u
R=$PWD; P=$R/.carry/s12; D=$P/dist
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:$D/lib:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
t0=$(date +%s)
CPUS=2-9 RUN_TIMEOUT=40 DEADLINE=$(( t0 + ${PRICE_END:-240} )) bash $R/bench/overhead/sample.sh $D /tmp/s12q 10 base sample sample_noapi sample_cb paused > $OUT/price2.txt 2>&1
python3 $R/bench/overhead/price_summary.py $OUT/price2.txt base 2>&1 | head -24
grep -o "variant=[a-z_0-9]* .*ms_per_iter=[0-9.]*\|seg_ms=[0-9.,]*" $OUT/price2.txt | paste - - | sed 's/ rc=.*RESULT//' | cut -c1-230
echo "done t=$(( $(date +%s) - t0 ))s"
