#!/usr/bin/env bash
# Session 13, device call 2 (carry .carry/s13): why `--sample 100` runs died in call 1 (3 of 5 sample runs,
# 1 of 5 sample_noapi; none of sample_cb or sample_detach_nohold). Each run's exit status, the tail of its
# stderr (Python's faulthandler on) and `gpucap info` of its capture; under gdb when the machine has it.
set -u
R=$PWD; D=$R/.carry/s13/dist; g=$D/bin/gpucap
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:$D/lib:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
t0=$(date +%s); W=/tmp/s13c2; mkdir -p $W
echo "gdb: $(command -v gdb)  core_pattern: $(cat /proc/sys/kernel/core_pattern)"
run() {  # NAME ENV... -- (gpucap record args)
  local name=$1; shift
  local envs=(); while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" taskset -c 2-9 $g record --capture-range 'nvtx:step#\d+' --sample 100 -o $W/$name.gpucap "$@" \
    -- python3 $R/bench/overhead/sample_steps.py > $W/$name.out 2> $W/$name.err
  local rc=$?
  echo "== $name rc=$rc $(grep -o 'ms_per_iter=[0-9.]*' $W/$name.out)"
  if [[ $rc != 0 ]] || ! grep -q RESULT $W/$name.out; then
    tail -c 3000 $W/$name.err; cp $W/$name.err $OUT/ 2>/dev/null
    $g info $W/$name.gpucap 2>&1 | head -60
  fi
}
for i in 1 2 3 4 5 6; do
  (( $(date +%s) - t0 > ${END1:-150} )) && break
  run sample$i X=1 --
  run app$i GPUCAP_DETACH_ON=app --
done
if command -v gdb >/dev/null; then
  for i in 1 2 3 4; do
    (( $(date +%s) - t0 > ${END2:-330} )) && break
    env taskset -c 2-9 $g record --capture-range 'nvtx:step#\d+' --sample 100 -o $W/gdb$i.gpucap -- \
      gdb -q -batch -ex 'set pagination off' -ex 'handle SIGUSR1 SIGUSR2 SIG32 SIG33 SIG34 SIG35 nostop noprint pass' \
      -ex run -ex 'info threads' -ex 'thread apply all bt 30' --args python3 $R/bench/overhead/sample_steps.py \
      > $W/gdb$i.out 2>&1
    echo "== gdb$i rc=$? $(grep -o 'ms_per_iter=[0-9.]*' $W/gdb$i.out)"
    if ! grep -q RESULT $W/gdb$i.out; then grep -v "^\[New Thread\|^\[Thread .* exited" $W/gdb$i.out | tail -c 9000; cp $W/gdb$i.out $OUT/; fi
  done
fi
echo "done t=$(( $(date +%s) - t0 ))s"
