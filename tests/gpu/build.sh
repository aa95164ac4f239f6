#!/usr/bin/env bash
# Builds the GPU fixture programs into $1 (default build/gpu). Needs nvcc.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
out="${1:-$root/build/gpu}"
mkdir -p "$out"
nvcc="${NVCC:-/usr/local/cuda/bin/nvcc}"
api_lib="${GPUCAP_API_LIB:-$root/build/recorder/libgpucap_api.a}"
cuda_lib="/usr/local/cuda/targets/x86_64-linux/lib"
"$nvcc" -O2 -arch=sm_90 -o "$out/basics" "$here/basics.cu"
"$nvcc" -O2 -arch=sm_90 -o "$out/busy" "$here/busy.cu"
"$nvcc" -O2 -arch=sm_90 -o "$out/peer" "$here/peer.cu"
# The detach's programs use the shared runtime, as PyTorch does: the entry
# gate holds only libcudart.so.13's calls, and never finalizes CUPTI in a
# program whose runtime is linked in (recorder/src/runtime_entries.h).
"$nvcc" -O2 -arch=sm_90 -cudart shared -o "$out/stress" "$here/stress.cu"
"$nvcc" -O2 -arch=sm_90 -cudart shared -o "$out/graph_detach" "$here/graph_detach.cu" -lcuda
"$nvcc" -O2 -arch=sm_90 -o "$out/hook_probe" "$here/hook_probe.cu"
"$nvcc" -O2 -arch=sm_90 -o "$out/ctx_reset" "$here/ctx_reset.cu"
"$nvcc" -O2 -arch=sm_90 -I"$root/recorder/include" -o "$out/graphs_nvtx" "$here/graphs_nvtx.cu" "$api_lib" -ldl
"$nvcc" -O2 -arch=sm_90 -o "$out/nvtx_domains" "$here/nvtx_domains.cu" -ldl
"$nvcc" -O2 -arch=sm_90 -o "$out/graph_nodes" "$here/graph_nodes.cu"
"$nvcc" -O2 -arch=sm_90 -o "$out/capture_lanes" "$here/capture_lanes.cu" -lcuda
"$nvcc" -O2 -arch=sm_90 -o "$out/capture_range" "$here/capture_range.cu" -ldl
"$nvcc" -O2 -arch=sm_90 -o "$out/sync_events" "$here/sync_events.cu" -L"$cuda_lib" -lcupti -ldl \
  -Xlinker -rpath,"$cuda_lib"
# pm_probe: the recorder's PM sampler on its own (no capture, no libcapnp).
# nvcc's -x is not per file: the probe is compiled as CUDA on its own.
pm_flags=(-O2 -std=c++20 -I"$root/recorder/src" -I"$root/format/include")
for f in pm_sampler pm_metrics pm_timeline; do
  "$nvcc" "${pm_flags[@]}" -c -o "$out/$f.o" "$root/recorder/src/$f.cc"
done
"$nvcc" "${pm_flags[@]}" -arch=sm_90 -c -o "$out/pm_probe.o" -x cu "$here/pm_probe.cc"
"$nvcc" -arch=sm_90 -o "$out/pm_probe" "$out/pm_probe.o" "$out/pm_sampler.o" "$out/pm_metrics.o" \
  "$out/pm_timeline.o" -L"$cuda_lib" -lcupti -lcuda -Xlinker -rpath,"$cuda_lib"
rm -f "$out"/*.o
echo "built $out/basics $out/busy $out/graph_detach $out/hook_probe $out/ctx_reset $out/peer $out/graphs_nvtx $out/graph_nodes $out/capture_lanes $out/nvtx_domains $out/capture_range $out/sync_events $out/pm_probe"
