#!/bin/bash
# The scaling table of bench/README.md ("Scaling"): build_bench at 1-16 threads
# on the 5M-kernel capture, md5 of the files compared across thread counts
# (the .gz bytes themselves: pieces and gzip members are cut the same way at
# every thread count). DIR holds build_bench and lib/ (its shared libraries,
# for another machine); the log goes to $OUT (default /tmp):
#   OUT=/tmp/log bench/build/scaling.sh DIR        e.g. DIR=build/bench/build
cd "${1:?usage: scaling.sh DIR (holding build_bench)}"
export LD_LIBRARY_PATH=$PWD/lib
B=./build_bench
log=${OUT:-/tmp}/scaling.log
exec > >(tee "$log") 2>&1
nproc; uptime; lscpu | grep -E "Model name|^CPU\(s\)"
$B make /tmp/b.gpucap --kernels 5000000
for round in 1 2; do
  for t in 1 2 4 8 16; do
    rm -rf /tmp/o$t; mkdir -p /tmp/o$t
    echo "== every:1s json -j$t round $round"; $B build /tmp/b.gpucap /tmp/o$t/t.json.gz --window every:1s --threads $t
  done
done
for t in 1 2 4 8 16; do (cd /tmp/o$t && md5sum t.*.json.gz) > /tmp/md5.$t; done
for t in 2 4 8 16; do cmp /tmp/md5.1 /tmp/md5.$t && echo "every:1s json: -j$t identical to -j1"; done
for t in 1 16; do
  rm -rf /tmp/p$t; mkdir -p /tmp/p$t
  echo "== every:1s pftrace -j$t"; $B build /tmp/b.gpucap /tmp/p$t/t.pftrace.gz --window every:1s --threads $t
  (cd /tmp/p$t && md5sum t.*.pftrace.gz) > /tmp/pmd5.$t
done
cmp /tmp/pmd5.1 /tmp/pmd5.16 && echo "every:1s pftrace: -j16 identical to -j1"
for t in 1 2 4 16; do
  rm -rf /tmp/a$t; mkdir -p /tmp/a$t
  echo "== all json -j$t"; $B build /tmp/b.gpucap /tmp/a$t/t.json.gz --window all --threads $t
  (cd /tmp/a$t && md5sum t.json.gz) > /tmp/amd5.$t
  rm -f /tmp/a$t/t.json.gz
done
for t in 2 4 16; do cmp /tmp/amd5.1 /tmp/amd5.$t && echo "all json: -j$t identical to -j1"; done
uptime
