#!/usr/bin/env bash
# Kept as run in session 8 (from .carry/s8/runN.sh, where P=.carry/s8 held dist/, tools/, bench/ and torch_graph.py).
# Session 8, device call 4 (CPU only): the export's rows per CPU-second on a
# quiet machine (issue 22 item 4), and the 16-core scaling table of the merged
# main (issue 20; rows re-decoded for windows over 1M kernels).
set -u
R=$PWD; P=$R/.carry/s8; B=$P/bench
export LD_LIBRARY_PATH=$B/lib
S=$OUT/summary.txt; { date; nproc; lscpu | grep -E "Model name"; uptime; } > $S
$B/build_bench make /tmp/s1m.gpucap --kernels 1000000 >> $S 2>&1
for r in 1 2 3; do
  for v in "" "--no-indexes" "--sqlite-inserts"; do
    [ $r = 3 ] && [ "$v" = "--sqlite-inserts" ] && continue
    rm -f /tmp/x.sqlite
    echo "== export round $r ${v:-with indexes}" >> $S
    taskset -c 4 $B/export_bench /tmp/x.sqlite /tmp/s1m.gpucap --window every:100ms --threads 1 $v >> $S 2>&1
  done
done
ls -la /tmp/x.sqlite >> $S
OUT2=$OUT; (export OUT=$OUT2; timeout 300 bash $R/bench/build/scaling.sh $B > /dev/null 2>&1); echo "scaling rc=$?" >> $S
