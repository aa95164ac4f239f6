// A GPU that is busy, then idle, then busy again for about two seconds, so
// counters (power, clocks, SM activity) have a shape a test can recognise:
// two busy phases separated by an idle gap inside NVTX ranges "busy" and
// "idle".
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include "common.h"

__global__ void burn(float* x, int iters) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int i = 0; i < iters; ++i) v = v * 1.000001f + 0.5f;
  x[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

int main(int argc, char** argv) {
  const char* manifest_path = argc > 1 ? argv[1] : "busy.expect.json";
  Manifest m;
  const int blocks = 132 * 8, threads = 256;
  float* d;
  CK(cudaMalloc(&d, blocks * threads * sizeof(float)));
  CK(cudaMemset(d, 0, blocks * threads * sizeof(float)));
  for (int phase = 0; phase < 2; ++phase) {
    nvtxRangePushA("busy");
    for (int i = 0; i < 40; ++i) {
      burn<<<blocks, threads>>>(d, 200000);
      m.Add("kernel:burn");
    }
    CK(cudaDeviceSynchronize());
    nvtxRangePop();
    nvtxRangePushA("idle");
    usleep(400000);
    nvtxRangePop();
  }
  CK(cudaGetLastError());
  m.Fact("phases", R"(["busy", "idle", "busy", "idle"])");
  m.Write(manifest_path);
  std::printf("busy: done\n");
  return 0;
}
