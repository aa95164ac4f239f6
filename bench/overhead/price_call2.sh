#!/usr/bin/env bash
# As run on the H200 on 2026-12-01 (bench/README.md, "The recorder's price"), from a folder
# holding old/ and new/ (scripts/package of the build before and after), bench/ (this folder),
# yard/ (../shared/yardstick's scripts and tests/gpu/torch_train.py) and tools/ (libnull_cupti.so,
# kernels, launch_loop, built with the commands in price.sh and the yardstick's README).
# Call 2: captures of one program by both recorders, the in-process toggle with
# and without the detach, then the eager step until the deadline.
set -u
cd "$(dirname "$0")"; C=$PWD
export NEW=$C/new OLD=$C/old TOOLS=$C/tools CPUS=2-9 PYTHONUNBUFFERED=1 RUN_TIMEOUT=30
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export DEADLINE=$(( $(date +%s) + 88 ))
W=/tmp/w; mkdir -p $W/caps; S=$OUT/summary.txt
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
for d in old new; do
  (cd $W/caps && timeout 30 $C/$d/bin/gpucap record -o $W/caps/train-$d.gpucap -- python3 $C/yard/torch_train.py train-$d.expect.json > $OUT/train-$d.log 2>&1; echo "CAP train $d rc=$? $(el)s" >> $S)
done
cp $W/caps/* $OUT/ 2>/dev/null
for v in new new_nodetach; do
  pre=($NEW/bin/gpucap record -q -o $W/toggle.gpucap --); [[ $v == new_nodetach ]] && pre=(env GPUCAP_PAUSE_DETACH=0 "${pre[@]}")
  BLOCKS=12 PER=40 taskset -c $CPUS timeout 30 "${pre[@]}" python3 yard/toggle_ab.py signal > $W/toggle-$v.log 2>&1
  echo "TOGGLE $v rc=$? $(el)s $(grep RESULT $W/toggle-$v.log) $(grep -c 'paused\|recording' $W/toggle-$v.log)" >> $S
  tail -n 3 $W/toggle-$v.log >> $S
done
timeout 30 $NEW/bin/gpucap record -o $OUT/pgraph-new.gpucap -- python3 bench/paused_graph.py > $W/pgraph.log 2>&1
echo "CAP pgraph new rc=$? $(el)s" >> $S; tail -n 4 $W/pgraph.log >> $S
bench/price.sh $W/step 3 step base new_paused old_paused lean new_rec old_rec base2 >> $S 2>&1
echo "== done $(el)s" >> $S
