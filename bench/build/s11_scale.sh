#!/usr/bin/env bash
# Session 11, one device call (CPU only): main before (old/) and after (new/)
# the pieces change, the 5M-kernel bench capture, every:1s at -j16 and -j1,
# alternating, JSON and pftrace; decompressed md5s compared; the phase
# report of one -j16 run each. Run from the repo root with the carry dir
# as $1 (old/, new/, lib/ with the shared libraries), output to $2.
set -u
C="$1"; OUT="$2"; mkdir -p "$OUT"
export LD_LIBRARY_PATH="$C/lib"
T=/tmp/s11; mkdir -p $T
nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread" 
"$C/new/build_bench" make $T/b.gpucap --kernels 5000000 | tail -1
run() {  # name bin window ext j
  rm -rf $T/o; mkdir -p $T/o
  /usr/bin/time -f "$1 $3 $4 -j$5: %e s wall, %U user, %S sys, %M KB" "$2" build $T/b.gpucap -o $T/o/t$4 -w $3 -j$5 -q 2>&1 | tail -1
  (cd $T/o && for f in $(ls | sort -V); do zcat $f; done | md5sum | cut -c1-12)
}
for round in 1 2 3; do
  for v in old new; do run $v "$C/$v/gpucap" every:1s .json.gz 16; done
  for v in old new; do run $v "$C/$v/gpucap" every:1s .pftrace.gz 16; done
done
for v in old new; do run $v "$C/$v/gpucap" every:1s .json.gz 1; done
for v in old new; do run $v "$C/$v/gpucap" every:1s .json.gz 8; done
for v in old new; do run $v "$C/$v/gpucap" all .json.gz 16; done
for v in old new; do
  rm -rf $T/o; mkdir -p $T/o
  GPUCAP_BUILD_TIMES=1 "$C/$v/gpucap" build $T/b.gpucap -o $T/o/t.json.gz -w every:1s -j16 -q > "$OUT/times_$v.txt" 2>&1
done
