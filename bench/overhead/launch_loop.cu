// The launching thread's price per CUDA call: empty kernels launched eagerly
// ("launch"), and the same with the small runtime calls PyTorch makes around
// each launch ("mix": cudaGetDevice, cudaGetLastError, cudaStreamGetCaptureInfo),
// each in BLOCKS blocks of PER launches; medians of wall and thread CPU time
// per launch. Prints
//   RESULT launch_us=... launch_cpu_us=... mix_us=... mix_cpu_us=...
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void k_empty(float* p) {
  if (p && threadIdx.x == 1234567) p[0] = 1;
}

#define CK(x)                                                                 \
  do {                                                                        \
    cudaError_t e = (x);                                                      \
    if (e != cudaSuccess) {                                                   \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                 \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

static double Now(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  int blocks = getenv("BLOCKS") ? atoi(getenv("BLOCKS")) : 15;
  int per = getenv("PER") ? atoi(getenv("PER")) : 4000;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  float* d;
  CK(cudaMalloc(&d, 1 << 20));
  for (int i = 0; i < 2000; i++) k_empty<<<1, 32, 0, s>>>(d);
  CK(cudaStreamSynchronize(s));
  double out[4];
  for (int mix = 0; mix < 2; ++mix) {
    std::vector<double> wall, cpu;
    for (int b = 0; b < blocks; ++b) {
      CK(cudaStreamSynchronize(s));
      double w0 = Now(CLOCK_MONOTONIC), c0 = Now(CLOCK_THREAD_CPUTIME_ID);
      for (int i = 0; i < per; i++) {
        if (mix) {
          int dev;
          cudaStreamCaptureStatus st;
          cudaGetDevice(&dev);
          cudaGetLastError();
          cudaStreamGetCaptureInfo(s, &st);
        }
        k_empty<<<1, 32, 0, s>>>(d);
      }
      CK(cudaStreamSynchronize(s));
      wall.push_back((Now(CLOCK_MONOTONIC) - w0) / per);
      cpu.push_back((Now(CLOCK_THREAD_CPUTIME_ID) - c0) / per);
    }
    out[2 * mix] = Median(wall);
    out[2 * mix + 1] = Median(cpu);
  }
  printf("RESULT launch_us=%.4f launch_cpu_us=%.4f mix_us=%.4f mix_cpu_us=%.4f\n", out[0], out[1], out[2],
         out[3]);
  return 0;
}
