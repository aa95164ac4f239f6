#!/usr/bin/env bash
# Issue 44, device call 2 (carry .carry-nvtx, as call 1): is nvtx_call1.sh's "DIFFERENT" in the traces the
# recorder's or the program's? Two captures of emit_nvtx_job.py under the old recorder and one under the new
# (3 steps after 1), compared per thread lane (same_ranges.py): old against old, old against new.
P=$PWD/.carry-nvtx; export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64; W=/tmp/c2; mkdir -p $W
for x in old:o1 old:o2 new:n1; do d=${x%:*}; n=${x#*:}
  EMIT=1 STEPS=3 WARMUP=1 timeout 14 $P/$d/bin/gpucap record -q -o $W/$n.gpucap -- python3 $P/bench/emit_nvtx_job.py | tail -1
  $P/new/bin/gpucap build -q $W/$n.gpucap -o $W/$n.json
done
echo "old-old"; python3 $P/bench/same_ranges.py $W/o1.json $W/o2.json
echo "old-new"; python3 $P/bench/same_ranges.py $W/o1.json $W/n1.json
python3 $P/bench/same_trace.py $W/o1.json $W/n1.json | grep -v "^same"
