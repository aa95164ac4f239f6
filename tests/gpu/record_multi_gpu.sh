#!/usr/bin/env bash
# On a machine with two GPUs: records a peer-copy program and a two-rank
# NCCL all-reduce under torchrun (one capture per rank), into OUT.
#   tests/gpu/record_multi_gpu.sh DIST OUT
set -uo pipefail
dist="$(cd "$1" && pwd)"; out="$2"
mkdir -p "$out"; out="$(cd "$out" && pwd)"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
# NVLink multicast stays off: it can take the host's GPUs out of service.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
g="$dist/bin/gpucap"
status=0
echo "== peer"
timeout 120 "$g" record -o "$out/peer.gpucap" -- "$dist/gpu/peer" "$out/peer.expect.json" || status=1
"$g" info "$out/peer.gpucap" || status=1
echo "== allreduce"
timeout 240 "$g" record --window-nvtx 'ProfilerStep#\d+' -o "$out/allreduce-%r.gpucap" -- \
  torchrun --standalone --nproc_per_node=2 "$dist/gpu/torch_allreduce.py" "$out" || status=1
for f in "$out"/allreduce-*.gpucap; do "$g" info "$f" || status=1; done
exit $status
