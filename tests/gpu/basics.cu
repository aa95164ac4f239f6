// Eager CUDA work of every common shape: kernels with varied grid, block and
// shared memory on three streams; copies H2D/D2H/D2D from pageable and pinned
// memory; memsets; events, stream waits and synchronisation.
#include "common.h"

__global__ void scale(float* x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

template <int kTile>
__global__ void tiled_sum(const float* x, float* out, int n) {
  __shared__ float tile[kTile];
  int i = blockIdx.x * kTile + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int k = 0; k < kTile; ++k) s += tile[k];
    atomicAdd(out, s);
  }
}

__global__ void dynamic_smem(float* x, int n) {
  extern __shared__ float buf[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  if (i < n) x[i] = buf[blockDim.x - 1 - threadIdx.x];
}

__global__ void grid3d(float* x) {
  int i = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0 && threadIdx.y == 0) x[i % 4096] += 1.f;
}

int main(int argc, char** argv) {
  const char* manifest_path = argc > 1 ? argv[1] : "basics.expect.json";
  Manifest m;
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  cudaStream_t s[3];
  for (auto& st : s) CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  float *d, *d2, *sum;
  CK(cudaMalloc(&d, bytes));
  CK(cudaMalloc(&d2, bytes));
  CK(cudaMalloc(&sum, sizeof(float)));
  float* pinned;
  CK(cudaMallocHost(&pinned, bytes));
  std::vector<float> pageable(n, 1.f);

  // Copies, each kind once with known sizes.
  CK(cudaMemcpy(d, pageable.data(), bytes, cudaMemcpyHostToDevice));
  m.Add("memcpy:HtoD:pageable"); m.Add("bytes:HtoD", bytes);
  CK(cudaMemcpyAsync(d2, pinned, bytes / 2, cudaMemcpyHostToDevice, s[1]));
  m.Add("memcpy:HtoD:pinned"); m.Add("bytes:HtoD", bytes / 2);
  CK(cudaMemcpyAsync(d2, d, bytes, cudaMemcpyDeviceToDevice, s[0]));
  m.Add("memcpy:DtoD"); m.Add("bytes:DtoD", bytes);
  CK(cudaMemsetAsync(sum, 0, sizeof(float), s[0]));
  m.Add("memset"); m.Add("bytes:memset", sizeof(float));
  CK(cudaMemsetAsync(d2, 0, bytes / 4, s[2]));
  m.Add("memset"); m.Add("bytes:memset", bytes / 4);

  // Kernels: 3 streams, varied shapes.
  for (int it = 0; it < 20; ++it) {
    scale<<<(n + 255) / 256, 256, 0, s[it % 3]>>>(d, n, 1.0001f);
    m.Add("kernel:scale");
    tiled_sum<128><<<64, 128, 0, s[0]>>>(d, sum, 64 * 128);
    m.Add("kernel:tiled_sum<128>");
    tiled_sum<256><<<32, 256, 0, s[1]>>>(d, sum, 32 * 256);
    m.Add("kernel:tiled_sum<256>");
    dynamic_smem<<<128, 512, 512 * sizeof(float), s[2]>>>(d2, n);
    m.Add("kernel:dynamic_smem");
    grid3d<<<dim3(8, 4, 2), dim3(16, 8, 1), 0, s[it % 3]>>>(d2);
    m.Add("kernel:grid3d");
  }
  CK(cudaGetLastError());

  // Events, stream waits, synchronisation.
  cudaEvent_t done0, done1;
  CK(cudaEventCreate(&done0));
  CK(cudaEventCreateWithFlags(&done1, cudaEventDisableTiming));
  CK(cudaEventRecord(done0, s[0]));
  m.Add("event_record");
  CK(cudaStreamWaitEvent(s[1], done0, 0));
  m.Add("stream_wait");
  scale<<<16, 256, 0, s[1]>>>(d, 4096, 0.5f);
  m.Add("kernel:scale");
  CK(cudaEventRecord(done1, s[1]));
  m.Add("event_record");
  CK(cudaEventSynchronize(done1));
  m.Add("sync:event");
  CK(cudaStreamSynchronize(s[2]));
  m.Add("sync:stream");

  CK(cudaMemcpyAsync(pinned, d, bytes, cudaMemcpyDeviceToHost, s[0]));
  m.Add("memcpy:DtoH:pinned"); m.Add("bytes:DtoH", bytes);
  CK(cudaMemcpy(pageable.data(), d2, bytes / 8, cudaMemcpyDeviceToHost));
  m.Add("memcpy:DtoH:pageable"); m.Add("bytes:DtoH", bytes / 8);
  CK(cudaDeviceSynchronize());
  m.Add("sync:device");

  m.Fact("streams_used", "3");
  m.Fact("kernel_shapes", R"({"scale": {"block": [256,1,1]}, "tiled_sum<128>": {"grid": [64,1,1], "block": [128,1,1], "static_shared": 512}, "tiled_sum<256>": {"grid": [32,1,1], "block": [256,1,1], "static_shared": 1024}, "dynamic_smem": {"grid": [128,1,1], "block": [512,1,1], "dynamic_shared": 2048}, "grid3d": {"grid": [8,4,2], "block": [16,8,1]}})");
  m.Write(manifest_path);
  CK(cudaFreeHost(pinned));
  CK(cudaFree(d));
  CK(cudaFree(d2));
  CK(cudaFree(sum));
  std::printf("basics: done\n");
  return 0;
}
