#!/usr/bin/env bash
# Kept as run in session 10 (P=.carry/s10, as for s10_call1.sh). Device call 2:
#  A. The recorder's defaults after the callback-switch change (recorder/src/callback_switch.h): capture_lanes
#     (capture streams switch the launch ids on and off), --sample 100 (20 detaches and re-attaches), kernels.cu
#     drops; torch_train with GPUCAP_API_RECORDS=callback after nested driver calls were left out.
#  B. The paused and recording price on the launch path, many rounds: base base2 none p_direct r_direct lean.
set -u
R=$PWD; P=$R/.carry/s10; D=$P/dist; g=$D/bin/gpucap
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:$D/lib:${LD_LIBRARY_PATH:-}"
S=$OUT/summary.txt; date > $S
W=/tmp/s10b; mkdir -p $W/caps; cp -r $P/tools $W/tools
echo "=== A t=$(el)s" >> $S
timeout 90 bash $R/tests/gpu/capture_lanes.sh $D $W/lanes > $OUT/lanes.log 2>&1; echo "capture_lanes (defaults) rc=$? t=$(el)s" >> $S
grep -E "^ok|^FAIL|failures|status" $OUT/lanes.log | tail -14 >> $S
(cd $W/caps && GPUCAP_API_RECORDS=callback timeout 100 $g record -o $W/caps/train-cb.gpucap -- python3 $D/gpu/torch_train.py $W/caps/train-cb.expect.json > $W/caps/train-cb.log 2>&1; echo "train callback rc=$? t=$(el)s" >> $S)
$g info $W/caps/train-cb.gpucap 2>&1 | grep -E "DRIVER|RUNTIME|drops" | head -4 >> $S
(cd $W/caps && timeout 100 $g record -o $W/caps/train-act.gpucap -- python3 $D/gpu/torch_train.py $W/caps/train-act.expect.json > $W/caps/train-act.log 2>&1; echo "train activity rc=$? t=$(el)s" >> $S)
$g info $W/caps/train-act.gpucap 2>&1 | grep -E "DRIVER|RUNTIME|drops" | head -4 >> $S
for m in cb act; do timeout 60 $g build $W/caps/train-$m.gpucap -o $W/caps/train-$m.json -q >> $S 2>&1; done
python3 $R/bench/overhead/same_trace.py $W/caps/train-act.json $W/caps/train-cb.json >> $S 2>&1; echo "same_trace rc=$?" >> $S
python3 -c "
import json,collections,sys
for m in ('act','cb'):
    e=json.load(open('$W/caps/train-'+m+'.json'))['traceEvents']
    print(m, collections.Counter(x.get('cat') for x in e if x.get('cat') in ('cuda_runtime','cuda_driver','kernel','ac2g')))
" >> $S 2>&1
timeout 90 $g record -q --capture-range 'nvtx:step#\d+' --sample 100 -o $W/caps/sample.gpucap -- python3 $R/bench/overhead/sample_steps.py > $W/caps/sample.log 2>&1
echo "sample rc=$? $(grep -h RESULT $W/caps/sample.log | cut -c1-200) t=$(el)s" >> $S
$g info $W/caps/sample.gpucap 2>&1 | grep -E "detach|switch|drops|kernels|sampled" | head -8 >> $S
timeout 60 $g build $W/caps/sample.gpucap -w 'nvtx:step#\d+' -o $W/caps/win.json -q >> $S 2>&1; echo "sample windows: $(ls $W/caps | grep -c '^win')" >> $S
for i in 1 2 3; do
  timeout 60 $g record -q -o $W/caps/k$i.gpucap -- $W/tools/kernels > $W/caps/k$i.log 2>&1
  echo "kernels run $i rc=$? $(grep -h RESULT $W/caps/k$i.log | tr '\n' ' ') $($g info $W/caps/k$i.gpucap 2>&1 | grep -E '^ *drops' | head -1)" >> $S
  rm -f $W/caps/k$i.gpucap
done
(cd $W && tar czf $OUT/caps.tgz caps/*.gpucap caps/*.expect.json lanes/*.gpucap 2>/dev/null)
echo "=== B t=$(el)s" >> $S
TOOLS=$W/tools NEW=$D CPUS=2-9 RUN_TIMEOUT=40 BLOCKS=100 PER=200 CALIB=0 DEADLINE=$(( t0 + ${PRICE_END:-330} )) \
  bash $R/bench/overhead/price.sh $W/price 200 launch base base2 none p_direct r_direct lean > $OUT/price.txt 2>&1
echo "price runs: $(grep -c '^RUN' $OUT/price.txt) t=$(el)s" >> $S
python3 $R/bench/overhead/price_summary.py $OUT/price.txt base 2>&1 | grep -A8 -E "launch_cpu_us|mix_cpu_us" >> $S
echo "done t=$(el)s" >> $S
