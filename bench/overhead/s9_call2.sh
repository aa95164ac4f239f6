#!/usr/bin/env bash
# Kept as run in session 9 (P=.carry/s9, as s9_call1.sh). Device call 2: the other one-GPU fixtures
# re-recorded with the recorder that writes StreamInfo frames (stream priorities, issue 17 item 4).
set -u
R=$PWD; P=$R/.carry/s9; D=$P/dist; g=$D/bin/gpucap
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
S=$OUT/summary.txt; date > $S
timeout 400 bash $R/tests/gpu/record_fixtures.sh $D /tmp/fx basics torch_train nvtx_domains sync_events \
  capture_profiler capture_nvtx > $OUT/fixtures.log 2>&1
echo "fixtures rc=$? t=$(el)s" >> $S
grep -E "^==|FAILED|streams|drops|damage|unresolved" $OUT/fixtures.log >> $S
(cd /tmp && tar czf $OUT/caps.tgz fx/*.gpucap fx/*.expect.json) 2>> $S
ls -la /tmp/fx >> $S
echo "done t=$(el)s" >> $S
