#!/usr/bin/env bash
# Kept as run in session 9 (P=.carry/s9: dist/ from scripts/package of merged main, with build_bench and
# export_bench in dist/bin). Device call 4: the builder at 16 cores (issue 20: bench/build/s9_scale.sh; 64
# ranks), the export's rows per CPU-second on one quiet core (issue 22), and the capture range's new default
# (issue 19: detach between samples) checked and priced.
set -u
R=$PWD; P=$R/.carry/s9; D=$P/dist; g=$D/bin/gpucap; B=$D/bin
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
S=$OUT/summary.txt; date > $S; nproc >> $S
# --- issue 22: export, one quiet core
echo "=== export t=$(el)s" >> $S
$B/build_bench make /tmp/s1m.gpucap --kernels 1000000 > /dev/null 2>&1
$B/build_bench make /tmp/s5m.gpucap --kernels 5000000 > /dev/null 2>&1
for r in 1 2 3; do
  for v in "" "--no-indexes" "--sqlite-inserts"; do
    echo "round $r ${v:-default}: $(taskset -c 4 $B/export_bench /tmp/x.sqlite /tmp/s1m.gpucap --window every:100ms --threads 1 $v 2>&1 | tail -2 | tr '\n' ' ')" >> $S
  done
done
for v in "" "--key-memory 1000000"; do
  /usr/bin/time -f "5M ${v:-default}: %e s wall %U user %S sys %M KB peak" taskset -c 4 $B/export_bench /tmp/x.sqlite /tmp/s5m.gpucap --window every:100ms --threads 1 $v > $OUT/x5m.txt 2>> $S
  tail -2 $OUT/x5m.txt >> $S
done
rm -f /tmp/x.sqlite /tmp/s5m.gpucap
# --- issue 19: the new default (a capture range detaches) checked and priced, 2 rounds
echo "=== sample default t=$(el)s" >> $S
CPUS=2-9 RUN_TIMEOUT=45 bash $R/bench/overhead/sample.sh $D /tmp/smp4 2 base sample > $OUT/sample_runs.txt 2>&1
cut -c1-170 $OUT/sample_runs.txt >> $S
$g info /tmp/smp4/sample-r0.gpucap | grep -E "records|CONCURRENT|recording|drops" >> $S
$g info --json /tmp/smp4/sample-r0.gpucap > $OUT/sample-r0.info.json 2>/dev/null
$g build /tmp/smp4/sample-r0.gpucap -o /tmp/smp4/w.json.gz -w 'nvtx:step#\d+' > $OUT/sample-windows.txt 2>&1
sed 's/^[^:]*: //' $OUT/sample-windows.txt | sort | uniq -c >> $S
# --- issue 20 item 4: 64 synthetic ranks on 16 cores
echo "=== ranks t=$(el)s" >> $S
mkdir -p /tmp/ranks /tmp/ranks-out/w
seq 0 63 | xargs -P16 -I{} $B/build_bench make /tmp/ranks/r{}.gpucap --kernels 50000 > /dev/null 2>&1
du -sh /tmp/ranks >> $S
for j in 1 4 16; do
  /usr/bin/time -f "merge -j$j: %e s wall %U user %S sys %M KB peak" $g merge /tmp/ranks/r*.gpucap -o /tmp/ranks-out/m$j.json.gz -q -j$j 2>> $S
done
/usr/bin/time -f "merge -j16 every:1s: %e s wall %U user %S sys %M KB peak" $g merge /tmp/ranks/r*.gpucap -w every:1s -o /tmp/ranks-out/w/m.json.gz -q -j16 2>> $S
for j in 1 4 16; do zcat /tmp/ranks-out/m$j.json.gz | md5sum | cut -c1-16; done | uniq -c >> $S
/usr/bin/time -f "64 builds, xargs -P16: %e s wall %U user %S sys %M KB peak (largest one)" bash -c \
  "ls /tmp/ranks/*.gpucap | xargs -P16 -I{} $g build {} -o {}.json.gz -q" 2>> $S
rm -rf /tmp/ranks /tmp/ranks-out
# --- issue 20 items 1-2: scaling and memory
echo "=== scale t=$(el)s" >> $S
BB=$B/build_bench timeout 300 bash $R/bench/build/s9_scale.sh $D $OUT/scale > /dev/null 2>&1
echo "scale rc=$? t=$(el)s" >> $S
grep -E "wall|identical|DIFFERS" $OUT/scale/s9_scale.log >> $S
echo "done t=$(el)s" >> $S
