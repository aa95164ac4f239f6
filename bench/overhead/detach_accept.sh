#!/usr/bin/env bash
# Issue 40's acceptance on the H200, in calls of under ten minutes each
# (docs/recorder-detach.md). Each CALL is one device_call.sh invocation from a
# clean checkout plus a packaged dist (DIST, default dist/: scripts/package),
# its results in $OUT as device_call.sh leaves them.
#
#   bench/overhead/detach_accept.sh CALL
#
#   instr    instructions per launch (paused_after.cu: paused before any
#            recording, inside a recorded range, paused after it; the detach
#            (range, signal) against CUPTI kept attached (*_attached) and
#            base) and per eager PyTorch step on the main thread (price_step.py:
#            paused from the start, paused after a recorded warm-up with and
#            without the detach, --sample 100 periodic and random, base).
#            Needs VALGRIND (instr.sh). Acceptance: after-recording within 1%
#            of before-recording; --sample 100 within 1% of base per step.
#   stress   100 runs of the 64-thread stress with --sample and SIGUSR2 toggles
#            at once, then 40 with SIGUSR2 alone: 0 failed, 0 hung. Run it twice
#            with ROUND=2 for the 200 the acceptance asks (STRESS_S=1.5 keeps a
#            run near 3 s).
#   compile  30 runs of compile_job.py (torch.compile training, then CUDA-graph
#            inference) under --sample 10 --sample-random: each with its
#            RESULT line and a capture with a trailer; the stall per detach
#            (detach_holds.py: p50, p99, max; acceptance p99 <= 5 ms); then the
#            sampled-steps check (--sample 100 steps complete against a whole
#            recording).
#
# Environment: OUT (required), DIST, VALGRIND/VALGRIND_LIB for instr, CPUS.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
call=${1:?CALL: instr, stress or compile}
dc="$here/device_call.sh"
case "$call" in
  instr)
    exec "$dc" JOBS=12 BLOCKS=3 instr paused_after base paused range range_attached signal signal_attached \
      -- JOBS=12 BLOCKS=25 PER=40 WARMUP=40 instr step base paused+RANGES=warmup range+RANGES=warmup \
         range_attached+RANGES=warmup base+RANGES=steps sample100+RANGES=steps sample100_random+RANGES=steps \
         sample100_attached+RANGES=steps ;;
  stress)
    exec "$dc" CPUS=0-15 STRESS_S=${STRESS_S:-1.5} until=540 stress 100 sample \
      -- CPUS=0-15 STRESS_S=${STRESS_S:-1.5} until=570 stress 40 signal ;;
  compile)
    exec "$dc" CPUS=0-15 until=480 compile-sample 30 10 -- CPUS=0-15 sampled-steps 3 ;;
  *) echo "detach_accept.sh: unknown call $call (instr, stress, compile)" >&2; exit 2 ;;
esac
