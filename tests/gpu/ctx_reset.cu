// Destroys its context while the recorder samples it: kernels, then
// cudaDeviceReset (the primary context goes away, PM sampling must stop
// before it does), then kernels in the new context. The program must finish
// and the capture close cleanly.
#include "common.h"

__global__ void spin(float* x, int iters) {
  float v = x[threadIdx.x];
  for (int i = 0; i < iters; ++i) v = v * 1.000001f + 0.5f;
  x[threadIdx.x] = v;
}

int main(int argc, char** argv) {
  const char* manifest_path = argc > 1 ? argv[1] : "ctx_reset.expect.json";
  Manifest m;
  for (int round = 0; round < 2; ++round) {
    float* d;
    CK(cudaMalloc(&d, 256 * sizeof(float)));
    CK(cudaMemset(d, 0, 256 * sizeof(float)));
    for (int i = 0; i < 50; ++i) {
      spin<<<132, 256>>>(d, 100000);
      m.Add("kernel:spin");
    }
    CK(cudaDeviceSynchronize());
    CK(cudaFree(d));
    if (round == 0) CK(cudaDeviceReset());
  }
  m.Fact("resets", "1");
  m.Write(manifest_path);
  std::printf("ctx_reset: done\n");
  return 0;
}
