#!/usr/bin/env bash
# Kept as run in session 10 (P=.carry/s10: dist/ with gpu/ and bin/build_bench, alloc/ with Debian's
# libjemalloc2 and libmimalloc2.0 unpacked, tools/ with launch_loop, kernels and libnull_cupti.so built here).
# Device call 1:
#  A. GPUCAP_API_RECORDS=callback (recorder/src/api_records.h) against CUPTI's API activity records on the
#     same programs: torch_train.py, graphs_nvtx and capture_lanes (capture streams share the launch ids),
#     compared by bench/overhead/same_trace.py; kernels.cu at ~2M launches/s for drops.
#  B. The price on the launch path: price.sh launch, r_direct r_cb lean kernel_cb, rounds until the deadline.
#  C. The builder at -j16 (issue 20): every:1s of the 5M-kernel capture, the work queue before (gpucap_oldq: a
#     taker ran older tasks first) and after (its own task first), glibc's malloc with and without huge pages,
#     jemalloc and mimalloc preloaded, and what the CPUs are (lscpu).
set -u
R=$PWD; P=$R/.carry/s10; D=$P/dist; g=$D/bin/gpucap
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:$D/lib:${LD_LIBRARY_PATH:-}"
S=$OUT/summary.txt; date > $S
W=/tmp/s10; mkdir -p $W/caps; cp -r $P/tools $W/tools
lscpu > $OUT/lscpu.txt 2>&1; nproc >> $S; grep -E "Thread|Core|Socket|Model name|NUMA node\(s\)" $OUT/lscpu.txt >> $S

echo "=== A. same programs, activity vs callback records t=$(el)s" >> $S
for mode in activity callback; do
  (cd $W/caps && GPUCAP_API_RECORDS=$mode timeout 100 $g record -o $W/caps/train-$mode.gpucap -- python3 $D/gpu/torch_train.py $W/caps/train-$mode.expect.json > $W/caps/train-$mode.log 2>&1; echo "train $mode rc=$? t=$(el)s" >> $S)
  GPUCAP_API_RECORDS=$mode timeout 60 $g record -o $W/caps/gn-$mode.gpucap -- $D/gpu/graphs_nvtx $W/caps/gn-$mode.expect.json > $W/caps/gn-$mode.log 2>&1; echo "graphs_nvtx $mode rc=$?" >> $S
  for c in train gn; do
    timeout 60 $g build $W/caps/$c-$mode.gpucap -o $W/caps/$c-$mode.json -q >> $S 2>&1
    $g info $W/caps/$c-$mode.gpucap > $W/caps/$c-$mode.info.txt 2>&1
    grep -E "drops|api_records|records by kind|RUNTIME|DRIVER" $W/caps/$c-$mode.info.txt | head -8 | sed "s/^/  $c-$mode: /" >> $S
  done
done
for c in train gn; do
  echo "--- same_trace $c activity vs callback" >> $S
  python3 $R/bench/overhead/same_trace.py $W/caps/$c-activity.json $W/caps/$c-callback.json >> $S 2>&1; echo "same_trace $c rc=$?" >> $S
done
GPUCAP_API_RECORDS=callback timeout 120 bash $R/tests/gpu/capture_lanes.sh $D $W/lanes > $OUT/lanes.log 2>&1; echo "capture_lanes (callback) rc=$? t=$(el)s" >> $S
tail -12 $OUT/lanes.log >> $S
for i in 1 2 3; do
  GPUCAP_API_RECORDS=callback timeout 60 $g record -q -o $W/caps/k$i.gpucap -- $W/tools/kernels > $W/caps/k$i.log 2>&1
  echo "kernels callback run $i rc=$? $(grep -h RESULT $W/caps/k$i.log | tr '\n' ' ')" >> $S
  $g info $W/caps/k$i.gpucap 2>&1 | grep -E "drops|dropped|api_records" | head -4 >> $S
  rm -f $W/caps/k$i.gpucap
done
(cd $W && tar czf $OUT/caps.tgz caps/*.gpucap caps/*.info.txt caps/*.expect.json lanes/*.gpucap lanes/*.json 2>/dev/null)
echo "=== B. launch price t=$(el)s" >> $S
TOOLS=$W/tools NEW=$D CPUS=2-9 RUN_TIMEOUT=40 BLOCKS=100 PER=200 CALIB=0 DEADLINE=$(( t0 + 330 )) \
  bash $R/bench/overhead/price.sh $W/price 200 launch r_direct r_cb lean kernel_cb > $OUT/price.txt 2>&1
echo "price runs: $(grep -c '^RUN' $OUT/price.txt) t=$(el)s" >> $S
python3 $R/bench/overhead/price_summary.py $OUT/price.txt r_direct >> $S 2>&1
echo "=== C. builder -j16 allocators t=$(el)s" >> $S
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag >> $S 2>&1
B=$W/b; mkdir -p $B; $D/bin/build_bench make $B/b.gpucap --kernels 5000000 > /dev/null 2>&1
L=$P/alloc/usr/lib/x86_64-linux-gnu
one() {  # NAME EXT THREADS [ENV...]; GB: the gpucap to run (default this tree's)
  local name=$1 ext=$2 j=$3; shift 3
  local gb=${GB:-$g}
  mkdir -p $B/o
  env "$@" GPUCAP_BUILD_TIMES=1 /usr/bin/time -f "$name $ext -j$j: %e s wall, %U user, %S sys, %M KB, %R minflt, %c invcs" \
    $gb build $B/b.gpucap --window every:1s -o $B/o/o.$ext -j$j -q > $B/times.txt 2>&1
  tail -1 $B/times.txt >> $S
  grep -E "^times: window [0-9] " $B/times.txt | sed -E 's/.*\((decode [0-9.]+ join [0-9.]+ render [0-9.]+).*/\1/' | tr '\n' ';' | sed "s/^/  $name: /" >> $S; echo >> $S
  rm -rf $B/o
}
for r in 1 2; do
  GB=$P/gpucap_oldq one oldq_glibc json.gz 16
  one glibc json.gz 16
  one glibc_thp json.gz 16 GLIBC_TUNABLES=glibc.malloc.hugetlb=1
  one jemalloc json.gz 16 LD_PRELOAD=$L/libjemalloc.so.2
  one mimalloc json.gz 16 LD_PRELOAD=$L/libmimalloc.so.2
  [ $(el) -gt 420 ] && break
done
GB=$P/gpucap_oldq one oldq_glibc pftrace.gz 16
one glibc pftrace.gz 16
one mimalloc pftrace.gz 16 LD_PRELOAD=$L/libmimalloc.so.2
one glibc json.gz 1
echo "done t=$(el)s" >> $S
