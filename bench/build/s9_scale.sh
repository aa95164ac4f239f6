#!/bin/bash
# Session 9, issue 20 items 1-2 on the 16-core GPU machine: `gpucap build` of
# the 5M-kernel bench capture (20M events) at several thread counts, wall,
# CPU and peak RSS by /usr/bin/time, the per-phase report of every build
# (GPUCAP_BUILD_TIMES=1, builder/include/gpucap/builder/build_times.h: per
# window decode / join / render / close in ms since start), and md5 of the
# decompressed traces compared across thread counts. ~3-4 minutes.
#   bench/build/s9_scale.sh DIST OUT     DIST: scripts/package output (bin/gpucap, lib/)
# build_bench (only to make the capture) is $BB, default DIST/bin/build_bench.
set -u
DIST=$(cd "${1:?usage: s9_scale.sh DIST OUT}" && pwd)
OUT=${2:?usage: s9_scale.sh DIST OUT}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
G=$DIST/bin/gpucap
BB=${BB:-$DIST/bin/build_bench}
export LD_LIBRARY_PATH=$DIST/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
exec > >(tee "$OUT/s9_scale.log") 2>&1
nproc; uptime; lscpu | grep -E "Model name|^CPU\(s\)"
W=/tmp/s9w; rm -rf $W; mkdir -p $W; cd $W
$BB make $W/b.gpucap --kernels ${KERNELS:-5000000}  # KERNELS: smaller for a smoke run
# One build: NAME SPEC EXT THREADS. Every build writes o.EXT in a folder of
# its own (the trace's name follows the file name), then its md5 is kept
# and the file removed.
run() {
  local name=$1 spec=$2 ext=$3 t=$4 d=$W/$1.j$4
  mkdir -p $d
  echo "== $name -j$t"
  GPUCAP_BUILD_TIMES=1 /usr/bin/time -f "$name -j$t: %e s wall, %U s user, %S s sys, %M KB peak RSS" \
    $G build $W/b.gpucap --window $spec -o $d/o.$ext -j$t -q
  (cd $d && for f in o*.$ext; do printf '%s %s\n' "$(zcat $f | md5sum | cut -c1-32)" "$f"; done) > $W/md5.$name.$t
  rm -rf $d
}
for t in 1 2 4 8 16; do run every1s every:1s json.gz $t; done
for t in 1 16; do run every1s-pf every:1s pftrace.gz $t; done
for t in 1 2 4 16; do run all all json.gz $t; done
for t in 1 16; do run all-pf all pftrace.gz $t; done
for n in every1s every1s-pf all all-pf; do
  for f in $W/md5.$n.*; do cmp -s $W/md5.$n.1 $f && echo "$n ${f##*.}: identical to -j1" || echo "$n ${f##*.}: DIFFERS from -j1"; done
done
head -c 200 $W/md5.all.1; echo
uptime
