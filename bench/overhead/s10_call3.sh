#!/usr/bin/env bash
# Kept as run in session 10 (P=.carry/s10). Device call 3: c2ae5c2's recorder (EventLog and ApiRecords on one
# per-thread registry, thread_buffers.h) on torch_train.py, compared with call 2's capture of the same program.
set -u
R=$PWD; P=$R/.carry/s10; D=$P/dist; g=$D/bin/gpucap
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:$D/lib:${LD_LIBRARY_PATH:-}"
S=$OUT/summary.txt; date > $S; W=/tmp/s10c; mkdir -p $W
for m in activity callback; do
  (cd $W && GPUCAP_API_RECORDS=$m timeout 60 $g record -o $W/t-$m.gpucap -- python3 $D/gpu/torch_train.py $W/t-$m.expect.json > $W/t-$m.log 2>&1; echo "train $m rc=$?" >> $S)
  $g info $W/t-$m.gpucap 2>&1 | grep -E "DRIVER|RUNTIME|drops|ranges" | head -5 >> $S
  timeout 60 $g build $W/t-$m.gpucap -o $W/t-$m.json -q >> $S 2>&1
  python3 $R/bench/overhead/same_trace.py $P/train-act-call2.json $W/t-$m.json >> $S 2>&1; echo "same_trace vs call 2 ($m) rc=$?" >> $S
done
