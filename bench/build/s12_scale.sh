#!/usr/bin/env bash
# Session 12, one device call (CPU only): main before (old/, da2501f) and after (new/) piece workers kept
# warm and pftrace pieces, on the 5M-kernel bench capture: every:1s at -j16 in three alternating rounds, JSON
# and pftrace; the thread table (1, 2, 4, 8) once each; `all` at -j16; decompressed md5s compared old/new
# (JSON) and the .gz bytes compared across thread counts (new pftrace); the phase report of one -j16 run of
# each format. Run from the repo root with the carry dir as $1 (old/, new/, lib/), output to $2.
set -u
C="$1"; OUT="$2"; mkdir -p "$OUT"
export LD_LIBRARY_PATH="$C/lib"
T=/tmp/s12; mkdir -p $T
nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread"
t0=$(date +%s)
"$C/new/build_bench" make $T/b.gpucap --kernels 5000000 | tail -1
echo "made t=$(( $(date +%s) - t0 ))s"
run() {  # version window ext threads [md5]
  rm -rf $T/o; mkdir -p $T/o
  /usr/bin/time -f "$1 $2 $3 -j$4: %e s wall, %U user, %S sys, %M KB" "$C/$1/gpucap" build $T/b.gpucap -o $T/o/t$3 -w $2 -j$4 -q 2>&1 | tail -1
  (cd $T/o && cat $(ls | sort -V) | md5sum | cut -c1-12 | sed "s/^/  gz md5 $1 $3 -j$4: /")
  if [ "${5:-}" = md5 ]; then (cd $T/o && for f in $(ls | sort -V); do zcat $f; done | md5sum | cut -c1-12 | sed "s/^/  text md5 $1 $3: /"); fi
}
for round in 1 2 3; do
  for v in old new; do run $v every:1s .json.gz 16 $([ $round = 1 ] && echo md5); done
  for v in new old; do run $v every:1s .pftrace.gz 16; done
done
for j in 1 2 4 8; do
  for v in old new; do run $v every:1s .json.gz $j; run $v every:1s .pftrace.gz $j; done
done
for v in old new; do run $v all .json.gz 16; done
run new all .pftrace.gz 16
for ext in .json.gz .pftrace.gz; do
  rm -rf $T/o; mkdir -p $T/o
  GPUCAP_BUILD_TIMES=1 "$C/new/gpucap" build $T/b.gpucap -o $T/o/t$ext -w every:1s -j16 -q > "$OUT/times_new$ext.txt" 2>&1
done
ls -la $T/o | head -5
echo "done t=$(( $(date +%s) - t0 ))s"
