// Two GPUs: peer copies both ways (cudaMemcpyPeerAsync, which CUPTI reports
// as MEMCPY2 records), with a kernel on each device before and after.
#include "common.h"

__global__ void touch(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.f;
}

int main(int argc, char** argv) {
  const char* manifest_path = argc > 1 ? argv[1] : "peer.expect.json";
  int count = 0;
  CK(cudaGetDeviceCount(&count));
  if (count < 2) {
    std::fprintf(stderr, "peer: needs 2 GPUs, found %d\n", count);
    return 2;
  }
  Manifest m;
  const int n = 1 << 22;
  const size_t bytes = n * sizeof(float);
  float* buf[2];
  cudaStream_t s[2];
  int can01 = 0, can10 = 0;
  CK(cudaDeviceCanAccessPeer(&can01, 0, 1));
  CK(cudaDeviceCanAccessPeer(&can10, 1, 0));
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaMalloc(&buf[d], bytes));
    CK(cudaMemset(buf[d], 0, bytes));
    CK(cudaStreamCreateWithFlags(&s[d], cudaStreamNonBlocking));
    if ((d == 0 && can01) || (d == 1 && can10)) CK(cudaDeviceEnablePeerAccess(1 - d, 0));
  }
  for (int round = 0; round < 3; ++round) {
    for (int d = 0; d < 2; ++d) {
      CK(cudaSetDevice(d));
      touch<<<(n + 255) / 256, 256, 0, s[d]>>>(buf[d], n);
      m.Add("kernel:touch:device" + std::to_string(d));
    }
    CK(cudaSetDevice(0));
    CK(cudaMemcpyPeerAsync(buf[1], 1, buf[0], 0, bytes, s[0]));  // issued on device 0
    m.Add("peer:0to1");
    m.Add("bytes:peer", bytes);
    CK(cudaStreamSynchronize(s[0]));
    CK(cudaSetDevice(1));
    CK(cudaMemcpyPeerAsync(buf[0], 0, buf[1], 1, bytes / 2, s[1]));  // issued on device 1
    m.Add("peer:1to0");
    m.Add("bytes:peer", bytes / 2);
    CK(cudaStreamSynchronize(s[1]));
  }
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaDeviceSynchronize());
  }
  m.Fact("peer_access", std::string("{\"0to1\": ") + (can01 ? "true" : "false") + ", \"1to0\": " + (can10 ? "true" : "false") + "}");
  m.Write(manifest_path);
  std::printf("peer: done (peer access %d/%d)\n", can01, can10);
  return 0;
}
