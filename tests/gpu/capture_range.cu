// Capture ranges (issue 19): kernels outside any range, two
// cudaProfilerStart/Stop ranges, and six NVTX ranges `step#0..5` where step i
// launches i+1 `step_kernel`s (so a trace tells which steps it holds), with
// a `between` kernel after each step, outside it. Recorded twice:
// --capture-range cudaProfilerApi --capture-range-end repeat (both profiler
// ranges and nothing else) and --capture-range 'nvtx:step#\d+' --sample 2
// (steps 1, 3 and 5 only, each complete).
#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>

#include <string>

#include "common.h"

__global__ void outside(float* x) { x[threadIdx.x] += 1.0f; }
__global__ void profiled(float* x) { x[threadIdx.x] *= 1.001f; }
__global__ void profiled2(float* x) { x[threadIdx.x] *= 0.999f; }
__global__ void step_kernel(float* x, int step) { x[threadIdx.x] += step; }
__global__ void between(float* x) { x[threadIdx.x] -= 1.0f; }

int main(int argc, char** argv) {
  const char* manifest_path = argc > 1 ? argv[1] : "capture_range.expect.json";
  Manifest m;
  float* x;
  CK(cudaMalloc(&x, 256 * sizeof(float)));
  CK(cudaMemset(x, 0, 256 * sizeof(float)));
  for (int i = 0; i < 3; ++i, m.Add("kernel:outside")) outside<<<1, 256>>>(x);
  CK(cudaDeviceSynchronize());

  CK(cudaProfilerStart());
  for (int i = 0; i < 4; ++i, m.Add("kernel:profiled")) profiled<<<1, 256>>>(x);
  CK(cudaProfilerStop());
  for (int i = 0; i < 2; ++i, m.Add("kernel:outside")) outside<<<1, 256>>>(x);

  const int steps = 6;
  std::string per_step = "[";
  for (int s = 0; s < steps; ++s) {
    nvtxRangePushA(("step#" + std::to_string(s)).c_str());
    nvtxRangePushA("inner");
    for (int k = 0; k <= s; ++k, m.Add("kernel:step_kernel")) step_kernel<<<1, 256>>>(x, s);
    nvtxRangePop();
    nvtxRangePop();
    between<<<1, 256>>>(x);
    m.Add("kernel:between");
    per_step += (s ? "," : "") + std::to_string(s + 1);
  }
  per_step += "]";
  CK(cudaDeviceSynchronize());

  CK(cudaProfilerStart());
  for (int i = 0; i < 2; ++i, m.Add("kernel:profiled2")) profiled2<<<1, 256>>>(x);
  CK(cudaProfilerStop());
  outside<<<1, 256>>>(x);
  m.Add("kernel:outside");
  CK(cudaDeviceSynchronize());

  m.Fact("step_kernels_per_step", per_step);
  m.Fact("steps", std::to_string(steps));
  m.Fact("profiler_ranges", "[{\"profiled\": 4}, {\"profiled2\": 2}]");
  m.Write(manifest_path);
  return 0;
}
