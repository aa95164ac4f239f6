#!/usr/bin/env bash
# Builds the GPU fixture programs into $1 (default build/gpu). Needs nvcc.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
out="${1:-$root/build/gpu}"
mkdir -p "$out"
nvcc="${NVCC:-/usr/local/cuda/bin/nvcc}"
api_lib="${GPUCAP_API_LIB:-$root/build/recorder/libgpucap_api.a}"
"$nvcc" -O2 -arch=sm_90 -o "$out/basics" "$here/basics.cu"
"$nvcc" -O2 -arch=sm_90 -o "$out/busy" "$here/busy.cu"
"$nvcc" -O2 -arch=sm_90 -I"$root/recorder/include" -o "$out/graphs_nvtx" "$here/graphs_nvtx.cu" "$api_lib" -ldl
echo "built $out/basics $out/busy $out/graphs_nvtx"
