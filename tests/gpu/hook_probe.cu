// Which functions of the runtime-callback hooks table libcudart calls, and
// when (recorder/src/hook_probe.h): known runtime calls between markers on
// stderr, run under `gpucap record` with GPUCAP_PAUSE_DETACH=1
// GPUCAP_GATE_HOOK_PROBE=1.
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "common.h"

__global__ void nothing() {}

static void Mark(const char* what) {
  char line[96];
  int n = std::snprintf(line, sizeof line, "MARK %s\n", what);
  (void)!write(2, line, n);
}

int main() {
  Mark("cudaFree(0)");
  CK(cudaFree(0));
  float* p;
  Mark("cudaMalloc");
  CK(cudaMalloc(&p, 4096));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Mark("cudaStreamSynchronize");
  CK(cudaStreamSynchronize(s));
  Mark("cudaMemsetAsync");
  CK(cudaMemsetAsync(p, 0, 4096, s));
  Mark("kernel");
  nothing<<<1, 1, 0, s>>>();
  cudaGraph_t g;
  cudaGraphExec_t e;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  nothing<<<1, 1, 0, s>>>();
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&e, g, 0));
  Mark("cudaGraphLaunch");
  CK(cudaGraphLaunch(e, s));
  Mark("cudaGraphLaunch 2");
  CK(cudaGraphLaunch(e, s));
  Mark("cudaDeviceSynchronize");
  CK(cudaDeviceSynchronize());
  Mark("cudaGetLastError");
  CK(cudaGetLastError());
  Mark("end");
  return 0;
}
