#!/usr/bin/env bash
# Kept as run in session 9 (P=.carry/s9, as s9_call4.sh). Device call 5: more rounds of the capture range's
# new default (detach between samples) and of --start-paused against base (issues 19 and 18 item 3).
set -u
R=$PWD; P=$R/.carry/s9; D=$P/dist
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
CPUS=2-9 RUN_TIMEOUT=40 DEADLINE=$(( $(date +%s) + 330 )) bash $R/bench/overhead/sample.sh $D /tmp/smp5 6 \
  base sample paused > $OUT/runs.txt 2>&1
cut -c1-200 $OUT/runs.txt
