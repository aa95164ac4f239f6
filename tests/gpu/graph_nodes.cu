// CUDA graph nodes that CUPTI records no activity for (issue 17, item 2):
//  1. an explicitly built graph  k_first -> host node -> event-record node ->
//     k_last, whose graph is destroyed right after instantiation (the host
//     node's trampoline must outlive it), replayed;
//  2. a stream capture in global mode over two streams (fork and join through
//     events), with a host function launched on the forked stream and an
//     external event record on the origin stream, replayed.
// Each host function spins for kSpinUs and notes the thread it ran on, so a
// test can hold the rendered spans against what the program saw.
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <string>

#include "common.h"

__global__ void k_first(float* x) { x[threadIdx.x] += 1.f; }
__global__ void k_last(float* x) { x[threadIdx.x] *= 0.5f; }
__global__ void cap_origin(float* x) { x[threadIdx.x] += 2.f; }
__global__ void cap_forked(float* x) { x[threadIdx.x + 64] += 3.f; }
__global__ void cap_joined(float* x) { x[threadIdx.x] -= 1.f; }

constexpr int kSpinUs = 200;

struct HostLog {
  int calls = 0;
  std::set<long> tids;
};

void Spin() {
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinUs);
  while (std::chrono::steady_clock::now() < until) {
  }
}

void CUDART_CB explicit_host_step(void* p) {
  auto* log = static_cast<HostLog*>(p);
  Spin();
  ++log->calls;
  log->tids.insert(syscall(SYS_gettid));
}

void CUDART_CB captured_host_step(void* p) {
  auto* log = static_cast<HostLog*>(p);
  Spin();
  ++log->calls;
  log->tids.insert(syscall(SYS_gettid));
}

std::string Tids(const HostLog& log) {
  std::string s = "[";
  for (long t : log.tids) s += (s.size() > 1 ? "," : "") + std::to_string(t);
  return s + "]";
}

int main(int argc, char** argv) {
  const char* manifest_path = argc > 1 ? argv[1] : "graph_nodes.expect.json";
  Manifest m;
  float* d;
  CK(cudaMalloc(&d, 4096 * sizeof(float)));
  CK(cudaMemset(d, 0, 4096 * sizeof(float)));
  cudaStream_t s0, s1;
  CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));

  // 1. Explicit graph; the graph itself is gone before the first replay.
  static HostLog explicit_log;
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  void* args[] = {&d};
  cudaKernelNodeParams kp{};
  kp.func = (void*)k_first;
  kp.gridDim = dim3(1);
  kp.blockDim = dim3(32);
  kp.kernelParams = args;
  cudaGraphNode_t first, host, record, last;
  CK(cudaGraphAddKernelNode(&first, g, nullptr, 0, &kp));
  cudaHostNodeParams hp{explicit_host_step, &explicit_log};
  CK(cudaGraphAddHostNode(&host, g, &first, 1, &hp));
  cudaEvent_t explicit_event;
  CK(cudaEventCreate(&explicit_event));
  CK(cudaGraphAddEventRecordNode(&record, g, &host, 1, explicit_event));
  kp.func = (void*)k_last;
  CK(cudaGraphAddKernelNode(&last, g, &record, 1, &kp));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphDestroy(g));
  const int kExplicitReplays = 5;
  for (int i = 0; i < kExplicitReplays; ++i) CK(cudaGraphLaunch(ge, s0));
  CK(cudaStreamSynchronize(s0));
  m.Add("kernel:k_first", kExplicitReplays);
  m.Add("kernel:k_last", kExplicitReplays);
  m.Add("host:explicit_host_step", explicit_log.calls);

  // 2. Global-mode capture over two streams.
  static HostLog captured_log;
  cudaEvent_t fork, join, external;
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  CK(cudaEventCreate(&external));
  cudaGraph_t cg;
  CK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal));
  cap_origin<<<1, 32, 0, s0>>>(d);
  CK(cudaEventRecord(fork, s0));
  CK(cudaStreamWaitEvent(s1, fork, 0));
  cap_forked<<<1, 32, 0, s1>>>(d);
  CK(cudaLaunchHostFunc(s1, captured_host_step, &captured_log));
  CK(cudaEventRecord(join, s1));
  CK(cudaStreamWaitEvent(s0, join, 0));
  CK(cudaEventRecordWithFlags(external, s0, cudaEventRecordExternal));
  cap_joined<<<1, 32, 0, s0>>>(d);
  CK(cudaStreamEndCapture(s0, &cg));
  cudaGraphExec_t cge;
  CK(cudaGraphInstantiate(&cge, cg, 0));
  const int kCaptureReplays = 3;
  for (int i = 0; i < kCaptureReplays; ++i) CK(cudaGraphLaunch(cge, s0));
  CK(cudaStreamSynchronize(s0));
  m.Add("kernel:cap_origin", kCaptureReplays);
  m.Add("kernel:cap_forked", kCaptureReplays);
  m.Add("kernel:cap_joined", kCaptureReplays);
  m.Add("host:captured_host_step", captured_log.calls);

  m.Fact("host_nodes", "{\"spin_us\": " + std::to_string(kSpinUs) + ", \"explicit_host_step\": {\"replays\": " +
                           std::to_string(kExplicitReplays) + ", \"tids\": " + Tids(explicit_log) +
                           "}, \"captured_host_step\": {\"replays\": " + std::to_string(kCaptureReplays) +
                           ", \"tids\": " + Tids(captured_log) + "}}");
  m.Fact("event_record_nodes", R"({"explicit": 1, "captured_external": 1})");
  m.Fact("capture", R"({"mode": "global", "streams": 2, "forked_kernel": "cap_forked", "forked_host": "captured_host_step"})");
  m.Write(manifest_path);

  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphExecDestroy(cge));
  CK(cudaGraphDestroy(cg));
  CK(cudaFree(d));
  std::printf("graph_nodes: done, host nodes ran %d + %d times\n", explicit_log.calls, captured_log.calls);
  return explicit_log.calls == kExplicitReplays && captured_log.calls == kCaptureReplays ? 0 : 2;
}
