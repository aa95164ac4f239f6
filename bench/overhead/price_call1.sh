#!/usr/bin/env bash
# As run on the H200 on 2026-12-01 (bench/README.md, "The recorder's price"), from a folder
# holding old/ and new/ (scripts/package of the build before and after), bench/ (this folder),
# yard/ (../shared/yardstick's scripts and tests/gpu/torch_train.py) and tools/ (libnull_cupti.so,
# kernels, launch_loop, built with the commands in price.sh and the yardstick's README).
# Call 1: the ablation and the first look at the fixes, every variant interleaved. Only the
# launch part finished inside its 560 s: a PyTorch process takes ~10 s there, so the step part
# alone needs ~8 min; give it a call of its own (and write results to $OUT as they come).
set -u
cd "$(dirname "$0")"; C=$PWD
export NEW=$C/new OLD=$C/old TOOLS=$C/tools CPUS=2-9 PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
W=/tmp/w; mkdir -p $W/logs $W/caps; S=$OUT/summary.txt
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; date; } > $W/logs/machine.txt 2>&1
echo "== launch $(el)s" | tee -a $S
BLOCKS=11 PER=3000 bench/price.sh $W/launch 5 launch base base2 none kernel lean old_rec new_rec old_paused new_paused \
  p_direct p_nosub p_domain p_nonvtx p_bare r_direct r_nosub r_domain r_tids r_flush r_bare | tee $W/launch.txt
python3 bench/price_summary.py $W/launch.txt >> $S
echo "== step $(el)s" | tee -a $S
bench/price.sh $W/step 4 step base base2 none lean kernel old_rec old_paused new_rec new_paused p_nosub p_nonvtx r_bare | tee $W/step.txt
python3 bench/price_summary.py $W/step.txt >> $S
echo "== toggle $(el)s" | tee -a $S
for v in none old new new_nodetach; do
  case $v in
    none) pre=() ;;
    old) pre=($OLD/bin/gpucap record -q -o $W/caps/toggle-old.gpucap --) ;;
    new) pre=($NEW/bin/gpucap record -q -o $W/caps/toggle-new.gpucap --) ;;
    new_nodetach) pre=(env GPUCAP_PAUSE_DETACH=0 $NEW/bin/gpucap record -q -o $W/caps/toggle-nodetach.gpucap --) ;;
  esac
  mode=signal; [[ $v == none ]] && mode=none
  BLOCKS=20 PER=50 taskset -c $CPUS timeout 100 "${pre[@]}" python3 yard/toggle_ab.py $mode > $W/logs/toggle-$v.log 2>&1
  echo "TOGGLE $v rc=$? $(grep RESULT $W/logs/toggle-$v.log)" | tee -a $S
done
rm -f $W/caps/toggle-*.gpucap
echo "== captures $(el)s" | tee -a $S
for d in old new; do
  D=$C/$d
  (cd $W/caps && timeout 100 $D/bin/gpucap record -o $W/caps/train-$d.gpucap -- python3 $C/yard/torch_train.py train-$d.expect.json > $W/logs/train-$d.log 2>&1; echo "CAP train $d rc=$?" | tee -a $S)
  timeout 60 $D/bin/gpucap record -o $W/caps/pgraph-$d.gpucap -- python3 bench/paused_graph.py > $W/logs/pgraph-$d.log 2>&1; echo "CAP pgraph $d rc=$?" | tee -a $S
  timeout 60 $D/bin/gpucap record --start-paused -o $W/caps/spaused-$d.gpucap -- python3 bench/paused_graph.py > $W/logs/spaused-$d.log 2>&1; echo "CAP spaused $d rc=$?" | tee -a $S
done
echo "== kernels drops $(el)s" | tee -a $S
for i in 1 2 3; do
  timeout 60 $NEW/bin/gpucap record -o $W/caps/k.gpucap -- $TOOLS/kernels > $W/logs/kernels-$i.log 2>&1
  echo "KERNELS $i rc=$? $(grep -h 'RESULT\|dropped\|stop took' $W/logs/kernels-$i.log | tr '\n' ' ')" | tee -a $S
done
rm -f $W/caps/k.gpucap
echo "== done $(el)s" | tee -a $S
cp $W/launch.txt $W/step.txt $W/logs/
tar czf $OUT/logs.tgz -C $W logs launch step 2>/dev/null
tar czf $OUT/caps.tgz -C $W caps
