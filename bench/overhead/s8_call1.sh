#!/usr/bin/env bash
# Kept as run in session 8 (from .carry/s8/runN.sh, where P=.carry/s8 held dist/, tools/, bench/ and torch_graph.py).
# Session 8, device call 1: capture lanes probe (17.3), NVML start (17.8),
# 16-core scaling table (20), latency timestamps' price (17.4).
set -u
R=$PWD; P=$R/.carry/s8; D=$P/dist; g=$D/bin/gpucap
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
S=$OUT/summary.txt
{ date; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } > $S 2>&1
echo "=== lanes t=$(el)s" >> $S
timeout 90 bash $R/tests/gpu/capture_lanes.sh $D /tmp/lanes > $OUT/lanes.log 2>&1; echo "lanes rc=$? t=$(el)s" >> $S
(cd /tmp && tar czf $OUT/lanes.tgz lanes/*.gpucap lanes/*.expect.json lanes/info.json) 2>> $S
echo "=== nvml t=$(el)s" >> $S
F=/tmp/fx; mkdir -p $F
timeout 60 $g record --counters nvml,pm -o $F/counters.gpucap -- $D/gpu/busy $F/counters.expect.json >> $S 2>&1; echo "counters rc=$?" >> $S
timeout 60 $g record --counters nvml -o $F/nvml_sync.gpucap -- $D/gpu/sync_events $F/nvml_sync.expect.json >> $S 2>&1
GPUCAP_LATENCY_TIMESTAMPS=1 timeout 60 $g record --kinds default,synchronization,cuda_event -o $F/latency_sync.gpucap -- $D/gpu/sync_events $F/latency_sync.expect.json >> $S 2>&1; echo "latency_sync rc=$?" >> $S
for n in counters nvml_sync latency_sync; do
  $g info $F/$n.gpucap --format json > $F/$n.info.json 2>> $S
  timeout 30 $g build $F/$n.gpucap -o $F/$n.json -q >> $S 2>&1
  python3 $P/firstsample.py $F/$n.json $F/$n.info.json >> $S 2>&1
done
(cd /tmp && tar czf $OUT/fx.tgz fx/*.gpucap fx/*.expect.json fx/*.info.json) 2>> $S
echo "=== scaling t=$(el)s" >> $S
OUT2=$OUT; (export OUT=$OUT2; timeout 260 bash $R/bench/build/scaling.sh $P/bench > /dev/null 2>&1); echo "scaling rc=$? t=$(el)s" >> $S
rm -rf /tmp/o* /tmp/p* /tmp/a* 2>/dev/null
echo "=== latency t=$(el)s" >> $S
TOOLS=$P/tools NEW=$D CPUS=2-9 RUN_TIMEOUT=40 BLOCKS=100 PER=200 CALIB=0 DEADLINE=$(( t0 + 500 )) \
  bash $R/bench/overhead/price.sh /tmp/lat 60 launch r_direct r_lat > $OUT/latency.txt 2>&1
echo "latency rc=$? t=$(el)s" >> $S
python3 $R/bench/overhead/price_summary.py $OUT/latency.txt r_direct >> $OUT/latency.txt 2>&1
echo "done t=$(el)s" >> $S
