#!/usr/bin/env bash
# On the GPU machine: records each fixture program under `gpucap record` and
# leaves the captures and the programs' manifests in OUT.
#
#   tests/gpu/record_fixtures.sh DIST OUT [NAME...]
#
# DIST is a scripts/package tree holding bin/gpucap, lib/ and gpu/ (the
# programs built by tests/gpu/build.sh, and the Python programs). With NAMEs,
# only those fixtures are recorded.
set -uo pipefail
dist="$(cd "$1" && pwd)"; out="$2"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
g="$dist/bin/gpucap"
shift 2
only=" $* "
# NVLink multicast stays off: it can take the host's GPUs out of service.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
status=0
record() {
  local name="$1"; shift
  [[ "$only" == "  " || "$only" == *" $name "* ]] || return 0
  echo "== $name"
  timeout 300 "$g" record -o "$out/$name.gpucap" "$@" || { echo "FAILED: $name rc=$?"; status=1; }
  "$g" info "$out/$name.gpucap" || status=1
}
record basics -- "$dist/gpu/basics" "$out/basics.expect.json"
record graphs_nvtx -- "$dist/gpu/graphs_nvtx" "$out/graphs_nvtx.expect.json"
# Host and event-record nodes, a two-stream global-mode capture (issue 17).
record graph_nodes --kinds default,cuda_event -- "$dist/gpu/graph_nodes" "$out/graph_nodes.expect.json"
record counters --counters nvml,pm -- "$dist/gpu/busy" "$out/counters.expect.json"
# Not a fixture: PM sampling must stop cleanly when the program destroys its context.
record ctx_reset --counters pm -- "$dist/gpu/ctx_reset" "$out/ctx_reset.expect.json"
record torch_train --window-nvtx 'ProfilerStep#\d+' -- python3 "$dist/gpu/torch_train.py" "$out/torch_train.expect.json"
# NVTX of two domains interleaved on one thread, start/end ranges ended on
# other threads, a range never closed, payload-extension ranges (issue 16).
record nvtx_domains --window-nvtx '(Step|Phase)#\d+' -- "$dist/gpu/nvtx_domains" "$out/nvtx_domains.expect.json"
# Synchronisation, CUDA events, NVTX marks, external correlation (issue 17).
record sync_events --kinds default,synchronization,cuda_event,marker -- "$dist/gpu/sync_events" "$out/sync_events.expect.json"
# Capture ranges (issue 19): the profiler API's two ranges; one NVTX step in 2.
record capture_profiler --capture-range cudaProfilerApi --capture-range-end repeat -- \
  "$dist/gpu/capture_range" "$out/capture_profiler.expect.json"
record capture_nvtx --capture-range 'nvtx:step#\d+' --sample 2 -- \
  "$dist/gpu/capture_range" "$out/capture_nvtx.expect.json"
# One NCCL rank: eager and graph-captured all-reduces with NCCL's NVTX payloads.
# torchrun itself starts no CUDA here, so the one capture is the rank's.
record nccl_graph --window-nvtx 'ProfilerStep#\d+' -- \
  torchrun --standalone --nproc_per_node=1 "$dist/gpu/torch_nccl_graph.py" "$out"
# The flight recorder's step triggers (issue 46): a job whose step#40 is ten
# times its peers, and one whose step#20 blocks in torch.cuda.synchronize()
# on a kernel that spins until the job sees the hang's dump. Each leaves
# NAME.ring-N.gpucap dumps and NAME.expect.json; check_ring_steps.py checks
# them (the slow step's kernels and flows in its dump; the hang dump written
# while the job was blocked).
record_ring() {
  local name="$1"; shift
  [[ "$only" == "  " || "$only" == *" $name "* ]] || return 0
  echo "== $name"
  rm -f "$out/$name".ring-*.gpucap "$out/$name.expect.json"
  timeout 300 "$g" record -o "$out/$name.gpucap" --ring 120 --window-nvtx 'step#\d+' "$@" ||
    { echo "FAILED: $name rc=$?"; status=1; }
  for f in "$out/$name".ring-*.gpucap; do [[ -e $f ]] && "$g" info "$f" | grep -E '^(dump|ranges|records|drops)'; done
  python3 "$(dirname "$0")/check_ring_steps.py" "$g" "$out" "$name" || status=1
}
record_ring ring_slow --ring-slow-step 3 --ring-slow-window 20 --ring-dump-interval 0 -- \
  python3 "$dist/gpu/torch_steps.py" slow "$out/ring_slow.expect.json"
record_ring ring_hang --ring-hang 5 -- python3 "$dist/gpu/torch_steps.py" hang "$out/ring_hang.expect.json"
# The same block seen as one CUDA call in flight (--ring-hang-call, the entry gate preloaded).
HANG_TRIGGER=call record_ring ring_hang_call --ring-hang-call 5 -- \
  python3 "$dist/gpu/torch_steps.py" hang "$out/ring_hang_call.expect.json"
# The flight recorder's crash trigger (issue 46): a PyTorch job in ring mode
# that segfaults after its steps. It dies of SIGSEGV (record returns 139);
# the crash handler's dump, ring_crash.ring-1.gpucap, is the fixture.
if [[ "$only" == "  " || "$only" == *" ring_crash "* ]]; then
  echo "== ring_crash"
  rm -f "$out"/ring_crash.ring-*.gpucap
  timeout 300 "$g" record --ring-mb 64 -o "$out/ring_crash.gpucap" -- \
    python3 "$dist/gpu/ring_crash_job.py" "$out/ring_crash.expect.json"
  rc=$?
  [[ $rc == 139 ]] || { echo "FAILED: ring_crash: rc=$rc, not 139 (SIGSEGV)"; status=1; }
  dumps=("$out"/ring_crash.ring-*.gpucap)
  [[ ${#dumps[@]} == 1 && -f "${dumps[0]}" ]] || { echo "FAILED: ring_crash: ${#dumps[@]} dumps: ${dumps[*]}"; status=1; }
  "$g" info "${dumps[0]}" || status=1
  python3 "$dist/gpu/check_ring_crash.py" "${dumps[0]}" "$out/ring_crash.expect.json" "$g" "$out" || status=1
fi
# The same job's steps recorded whole (no ring, no crash): what the crash
# dump's last steps are held against (tests/fixtures/ring_fixture_test.cc).
CRASH=none record ring_crash_whole --window-nvtx 'step#\d+' -- \
  python3 "$dist/gpu/ring_crash_job.py" "$out/ring_crash_whole.expect.json"
exit $status
