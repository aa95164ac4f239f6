#!/usr/bin/env bash
# Session 12, device call for the recorder (P=.carry/s12: dist/ from scripts/package of this tree):
#  A. One list of CUPTI's callback ids for the lean API selection (api_selection.cc NamedIds): torch_train with
#     API records from activity and from callbacks, compared with each other (same_trace.py) and counted.
#  B. The detach on the recorder's own thread (ReleaseCupti): one --sample 100 run, its detach stats, and its
#     sampled steps against a whole recording (sampled_steps.py).
#  C. The --sample 100 price, rounds of base sample sample_app (the detach at an application thread's exit).
set -u
R=$PWD; P=$R/.carry/s12; D=$P/dist; g=$D/bin/gpucap
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:$D/lib:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
S=$OUT/summary.txt; date > $S; W=/tmp/s12; mkdir -p $W/caps
echo "=== A t=$(el)s" >> $S
for m in activity callback; do
  (cd $W/caps && GPUCAP_API_RECORDS=$m timeout 100 $g record -o $W/caps/train-$m.gpucap -- python3 $D/gpu/torch_train.py $W/caps/train-$m.expect.json > $W/caps/train-$m.log 2>&1; echo "train $m rc=$? t=$(el)s" >> $S)
  $g info $W/caps/train-$m.gpucap 2>&1 | grep -E "DRIVER|RUNTIME|drops" | head -4 >> $S
  timeout 60 $g build $W/caps/train-$m.gpucap -o $W/caps/train-$m.json -q >> $S 2>&1
done
python3 $R/bench/overhead/same_trace.py $W/caps/train-activity.json $W/caps/train-callback.json >> $S 2>&1; echo "same_trace rc=$?" >> $S
python3 -c "
import json,collections
for m in ('activity','callback'):
    e=json.load(open('$W/caps/train-'+m+'.json'))['traceEvents']
    print(m, sorted(collections.Counter(x.get('cat') for x in e if x.get('cat') in ('cuda_runtime','cuda_driver','kernel','ac2g')).items()))
" >> $S 2>&1
echo "=== B t=$(el)s" >> $S
timeout 60 taskset -c 2-9 $g record -q --capture-range 'nvtx:step#\d+' --sample 100 -o $W/caps/sample.gpucap -- python3 $R/bench/overhead/sample_steps.py > $W/caps/sample.log 2>&1
echo "sample rc=$? $(grep -h RESULT $W/caps/sample.log | cut -c1-200) t=$(el)s" >> $S
$g info $W/caps/sample.gpucap --json 2>/dev/null | python3 -c "
import json,sys
d=json.load(sys.stdin)
def walk(x,p=''):
    if isinstance(x,dict):
        for k,v in x.items(): walk(v,p+'.'+k)
    elif isinstance(x,list):
        for i,v in enumerate(x): walk(v,p+'['+str(i)+']')
    elif any(w in p for w in ('detach','switch','RUNTIME','DRIVER','drop')): print(p,x)
walk(d)" 2>&1 | head -20 >> $S
BLOCKS=2 timeout 60 taskset -c 2-9 $g record -q --window-nvtx 'step#\d+' -o $W/caps/full.gpucap -- python3 $R/bench/overhead/sample_steps.py >> $S 2>&1
echo "full rc=$? t=$(el)s" >> $S
timeout 60 python3 $R/bench/overhead/sampled_steps.py $g $W/caps/sample.gpucap $W/caps/full.gpucap /tmp/ss > $OUT/complete.json 2>&1
grep -h "sampled_equal\|sampled_windows\|without_flow\|outside" $OUT/complete.json >> $S
(cd $W && tar czf $OUT/caps.tgz caps/train-*.gpucap caps/train-*.expect.json caps/sample.gpucap 2>/dev/null)
echo "=== C t=$(el)s" >> $S
CPUS=2-9 RUN_TIMEOUT=40 DEADLINE=$(( t0 + ${PRICE_END:-540} )) bash $R/bench/overhead/sample.sh $D /tmp/s12p 40 base sample sample_app > $OUT/price.txt 2>&1
echo "price runs: $(grep -c '^RUN' $OUT/price.txt) t=$(el)s" >> $S
python3 $R/bench/overhead/price_summary.py $OUT/price.txt base >> $S 2>&1
for f in /tmp/s12p/sample-r0.gpucap /tmp/s12p/sampleapp-r1.gpucap; do
  [ -f $f ] && $g info $f --json 2>/dev/null | python3 -c "
import json,sys
d=json.dumps(json.load(sys.stdin))
import re
print('$f', re.findall(r'\"cupti_detach[a-z_]*\": [0-9]+', d))" >> $S
done
echo "done t=$(el)s" >> $S
