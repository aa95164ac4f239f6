// Issue 17 item 3 (logical lanes): graph nodes captured on known streams,
// replayed on another, for the recorder's capture-stream tracking
// (recorder/src/capture_streams.h); tests/gpu/capture_lanes.sh records and
// checks it. s1 is made with the device's greatest stream priority (issue 17
// item 4: the recorder's StreamInfo), the other streams with the default.
//
// Eager tag kernels tag_s0..tag_s2 show CUPTI's stream ids of s0..s2. Graph
// g1 is captured in global mode on s0 and forked to s1 and s2 with the calls
// that make nodes: <<<>>> (cudaLaunchKernel), cudaLaunchKernelExC,
// cuLaunchKernel, cudaMemsetAsync, cudaMemcpyAsync, cudaLaunchHostFunc and
// an external event record. g2 is captured on cudaStreamPerThread (the
// ptsz path, tag_pt shows its id); g3 is built with cudaGraphAddKernelNode
// (no capture stream). Each is replayed 3 times on stream r. Then 1000
// eager launches: no capture is open, so the stream-op callbacks are off.
// The manifest's "lanes" maps each graphed kernel to the tag of its stream.
#include <cuda.h>

#include <cstdio>
#include <thread>

#include "common.h"

__global__ void tag_s0() {}
__global__ void tag_s1() {}
__global__ void tag_s2() {}
__global__ void tag_pt() {}
__global__ void k0(float* x) { if (x) x[threadIdx.x] += 1; }
__global__ void k1(float* x) { if (x) x[threadIdx.x] += 2; }
__global__ void k2(float* x) { if (x) x[threadIdx.x] += 3; }
__global__ void k3(float* x) { if (x) x[threadIdx.x] += 4; }
__global__ void k4(float* x) { if (x) x[threadIdx.x] += 5; }
__global__ void k_pt(float* x) { if (x) x[threadIdx.x] += 6; }
__global__ void k_explicit(float* x) { if (x) x[threadIdx.x] += 7; }
__global__ void eager(float* x) { if (x) x[threadIdx.x] += 8; }

static int g_host_runs = 0;
static void CUDART_CB host_fn(void*) { g_host_runs++; }

int main(int argc, char** argv) {
  const char* manifest = argc > 1 ? argv[1] : "capture_lanes.expect.json";
  Manifest m;
  CK(cudaSetDevice(0));
  cudaStream_t s0, s1, s2, r;
  int least = 0, greatest = 0;
  CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  for (cudaStream_t* s : {&s0, &s2, &r}) CK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithPriority(&s1, cudaStreamNonBlocking, greatest));
  float *a, *b;
  CK(cudaMalloc(&a, 4096));
  CK(cudaMalloc(&b, 4096));
  tag_s0<<<1, 32, 0, s0>>>();
  tag_s1<<<1, 32, 0, s1>>>();
  tag_s2<<<1, 32, 0, s2>>>();
  tag_pt<<<1, 32, 0, cudaStreamPerThread>>>();
  CK(cudaDeviceSynchronize());
  unsigned long long ids[3];
  CK(cudaStreamGetId(s0, &ids[0]));
  CK(cudaStreamGetId(s1, &ids[1]));
  CK(cudaStreamGetId(s2, &ids[2]));
  char buf[128];
  std::snprintf(buf, sizeof buf, "[%llu, %llu, %llu]", ids[0], ids[1], ids[2]);
  m.Fact("driver_stream_ids", buf);  // cuStreamGetId's, to compare with CUPTI's
  // The priority of each tag's stream; the per-thread stream is never created.
  std::snprintf(buf, sizeof buf, "{\"tag_s0\": %d, \"tag_s1\": %d, \"tag_s2\": %d, \"tag_pt\": null}", least, greatest,
                least);
  m.Fact("priorities", buf);

  // g1: global mode on s0, forked to s1 and s2.
  cudaEvent_t fork, j1, j2, ext;
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&j1, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&j2, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&ext, cudaEventDisableTiming));
  cudaGraph_t g1;
  CK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal));
  k0<<<1, 32, 0, s0>>>(a);
  CK(cudaEventRecord(fork, s0));
  CK(cudaStreamWaitEvent(s1, fork, 0));
  CK(cudaStreamWaitEvent(s2, fork, 0));
  k1<<<1, 32, 0, s1>>>(a);
  CK(cudaMemsetAsync(b, 0, 1024, s1));
  CK(cudaLaunchHostFunc(s1, host_fn, nullptr));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(32);
  cfg.stream = s1;
  CK(cudaLaunchKernelEx(&cfg, k4, a));
  cudaFunction_t fn;
  CK(cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(k2)));
  void* args[] = {&a};
  if (cuLaunchKernel(reinterpret_cast<CUfunction>(fn), 1, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(s2), args,
                     nullptr) != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuLaunchKernel failed\n");
    return 1;
  }
  CK(cudaMemcpyAsync(b + 512, a, 1024, cudaMemcpyDeviceToDevice, s2));
  CK(cudaEventRecordWithFlags(ext, s2, cudaEventRecordExternal));
  CK(cudaEventRecord(j1, s1));
  CK(cudaEventRecord(j2, s2));
  CK(cudaStreamWaitEvent(s0, j1, 0));
  CK(cudaStreamWaitEvent(s0, j2, 0));
  k3<<<1, 32, 0, s0>>>(a);
  CK(cudaStreamEndCapture(s0, &g1));

  // g2: the per-thread default stream.
  cudaGraph_t g2;
  CK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal));
  k_pt<<<1, 32, 0, cudaStreamPerThread>>>(a);
  CK(cudaStreamEndCapture(cudaStreamPerThread, &g2));

  // g3: explicit, no stream.
  cudaGraph_t g3;
  CK(cudaGraphCreate(&g3, 0));
  cudaKernelNodeParams kp = {};
  kp.func = reinterpret_cast<void*>(k_explicit);
  kp.gridDim = dim3(1);
  kp.blockDim = dim3(32);
  kp.kernelParams = args;
  cudaGraphNode_t node;
  CK(cudaGraphAddKernelNode(&node, g3, nullptr, 0, &kp));

  cudaGraphExec_t e1, e2, e3;
  CK(cudaGraphInstantiate(&e1, g1, 0));
  CK(cudaGraphInstantiate(&e2, g2, 0));
  CK(cudaGraphInstantiate(&e3, g3, 0));
  for (int i = 0; i < 3; ++i) {
    CK(cudaGraphLaunch(e1, r));
    CK(cudaGraphLaunch(e2, r));
    CK(cudaGraphLaunch(e3, r));
  }
  CK(cudaStreamSynchronize(r));
  for (int i = 0; i < 1000; ++i) eager<<<1, 32, 0, s1>>>(a);
  CK(cudaDeviceSynchronize());

  m.Add("replays", 3);
  m.Add("host_runs", g_host_runs);
  m.Add("kernel:eager", 1000);
  // Graphed kernel -> the tag kernel of its capture stream (null: none).
  m.Fact("lanes",
         "{\"k0\": \"tag_s0\", \"k3\": \"tag_s0\", \"k1\": \"tag_s1\", \"k4\": \"tag_s1\", \"k2\": \"tag_s2\", "
         "\"k_pt\": \"tag_pt\", \"k_explicit\": null}");
  m.Fact("memset_lane", "\"tag_s1\"");
  m.Fact("memcpy_lane", "\"tag_s2\"");
  m.Write(manifest);
  std::printf("capture_lanes: host function ran %d times\n", g_host_runs);
  return 0;
}
