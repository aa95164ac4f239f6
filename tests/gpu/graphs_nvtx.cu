// CUDA graphs and NVTX, the shapes that make attribution hard:
//  1. an explicitly built graph with a fork/join (A -> B, A -> C, B -> D,
//     C -> D), a host node and an event-record node after D, instantiated,
//     replayed, updated once, replayed again;
//  2. NVTX ranges nested around eager launches on two threads;
//  3. a stream capture inside NVTX ranges, replayed outside any range, so the
//     replayed kernels can only get their names through the capture-time
//     nodes;
//  4. the gpucap C API: a record-time window around part 3's replays and a
//     metadata blob.
#include <nvtx3/nvToolsExt.h>

#include <thread>

#include "common.h"
#include "gpucap/gpucap.h"

__global__ void node_a(float* x) { x[threadIdx.x] += 1.f; }
__global__ void node_b(float* x) { x[threadIdx.x] *= 2.f; }
__global__ void node_c(float* x) { x[threadIdx.x + 32] *= 3.f; }
__global__ void node_d(float* x, float v) { x[threadIdx.x] += v; }
__global__ void eager_outer(float* x) { x[threadIdx.x] -= 1.f; }
__global__ void eager_inner(float* x) { x[threadIdx.x] += 0.5f; }
__global__ void captured_1(float* x) { x[threadIdx.x] += 1.f; }
__global__ void captured_2(float* x) { x[threadIdx.x] += 2.f; }
__global__ void captured_3(float* x) { x[threadIdx.x] += 3.f; }

void CUDART_CB host_checkpoint(void* p) { ++*static_cast<int*>(p); }

cudaGraphNode_t AddKernel(cudaGraph_t g, const void* fn, void** args, std::vector<cudaGraphNode_t> deps) {
  cudaKernelNodeParams p{};
  p.func = const_cast<void*>(fn);
  p.gridDim = dim3(1);
  p.blockDim = dim3(32);
  p.kernelParams = args;
  cudaGraphNode_t node;
  CK(cudaGraphAddKernelNode(&node, g, deps.data(), deps.size(), &p));
  return node;
}

int main(int argc, char** argv) {
  const char* manifest_path = argc > 1 ? argv[1] : "graphs_nvtx.expect.json";
  Manifest m;
  float* d;
  CK(cudaMalloc(&d, 4096 * sizeof(float)));
  CK(cudaMemset(d, 0, 4096 * sizeof(float)));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // 1. Explicit graph.
  nvtxRangePushA("build_graph");
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  void* args_x[] = {&d};
  float v = 1.f;
  void* args_d[] = {&d, &v};
  cudaGraphNode_t a = AddKernel(g, (void*)node_a, args_x, {});
  cudaGraphNode_t b = AddKernel(g, (void*)node_b, args_x, {a});
  cudaGraphNode_t c = AddKernel(g, (void*)node_c, args_x, {a});
  cudaGraphNode_t dn = AddKernel(g, (void*)node_d, args_d, {b, c});
  static int host_calls = 0;
  cudaHostNodeParams hp{host_checkpoint, &host_calls};
  cudaGraphNode_t h;
  CK(cudaGraphAddHostNode(&h, g, &dn, 1, &hp));
  cudaEvent_t graph_event;
  CK(cudaEventCreate(&graph_event));
  cudaGraphNode_t e;
  CK(cudaGraphAddEventRecordNode(&e, g, &h, 1, graph_event));
  nvtxRangePop();
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  const int kReplaysBefore = 5, kReplaysAfter = 2;
  for (int i = 0; i < kReplaysBefore; ++i) CK(cudaGraphLaunch(ge, s));
  // Update node D's argument in the executable graph once.
  v = 2.f;
  cudaKernelNodeParams pd{};
  pd.func = (void*)node_d;
  pd.gridDim = dim3(1);
  pd.blockDim = dim3(32);
  pd.kernelParams = args_d;
  CK(cudaGraphExecKernelNodeSetParams(ge, dn, &pd));
  for (int i = 0; i < kReplaysAfter; ++i) CK(cudaGraphLaunch(ge, s));
  CK(cudaStreamSynchronize(s));
  int replays = kReplaysBefore + kReplaysAfter;
  for (const char* k : {"node_a", "node_b", "node_c", "node_d"}) m.Add(std::string("kernel:") + k, replays);
  m.Add("host_node_calls", host_calls);
  m.Fact("explicit_graph", R"({"nodes": {"kernel": 4, "host": 1, "event_record": 1}, "edges": [["node_a","node_b"],["node_a","node_c"],["node_b","node_d"],["node_c","node_d"],["node_d","host"],["host","event_record"]], "replays": 7, "updates": 1, "host_function": "host_checkpoint", "built_inside_range": "build_graph"})");

  // 2. Two threads, nested ranges around eager launches.
  auto worker = [&](int t) {
    nvtxNameOsThreadA(static_cast<uint32_t>(gettid()), t == 0 ? "worker-0" : "worker-1");
    cudaStream_t ts;
    CK(cudaStreamCreateWithFlags(&ts, cudaStreamNonBlocking));
    for (int step = 0; step < 3; ++step) {
      std::string outer = "thread" + std::to_string(t) + "/outer";
      nvtxRangePushA(outer.c_str());
      eager_outer<<<1, 32, 0, ts>>>(d + 64 * t);
      nvtxRangePushA("inner");
      eager_inner<<<1, 32, 0, ts>>>(d + 64 * t);
      eager_inner<<<1, 32, 0, ts>>>(d + 64 * t);
      nvtxRangePop();
      nvtxRangePop();
    }
    CK(cudaStreamSynchronize(ts));
    CK(cudaStreamDestroy(ts));
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  m.Add("kernel:eager_outer", 6);
  m.Add("kernel:eager_inner", 12);
  m.Fact("eager_ranges", R"({"eager_outer": ["thread{t}/outer"], "eager_inner": ["thread{t}/outer", "inner"], "threads": 2, "thread_names": ["worker-0", "worker-1"]})");

  // 3. Capture inside ranges; replay outside any.
  cudaGraph_t cg;
  nvtxRangePushA("capture_region");
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  nvtxRangePushA("layer1");
  captured_1<<<1, 32, 0, s>>>(d);
  captured_2<<<1, 32, 0, s>>>(d);
  nvtxRangePop();
  nvtxRangePushA("layer2");
  captured_3<<<1, 32, 0, s>>>(d);
  nvtxRangePop();
  CK(cudaStreamEndCapture(s, &cg));
  nvtxRangePop();
  cudaGraphExec_t cge;
  CK(cudaGraphInstantiate(&cge, cg, 0));
  const int kCaptureReplays = 4;
  // 4. A record-time window around the replays, and a metadata blob.
  uint64_t window = gpucap_window_begin("captured replays");
  gpucap_range_push("replays");
  const char meta[] = "{\"what\":\"replay of a captured graph\",\"replays\":4}";
  gpucap_metadata("replay-info", "application/json", meta, sizeof(meta) - 1);
  for (int i = 0; i < kCaptureReplays; ++i) CK(cudaGraphLaunch(cge, s));
  CK(cudaStreamSynchronize(s));
  gpucap_range_pop();
  gpucap_window_end(window);
  m.Add("kernel:captured_1", kCaptureReplays);
  m.Add("kernel:captured_2", kCaptureReplays);
  m.Add("kernel:captured_3", kCaptureReplays);
  m.Fact("captured_graph", R"({"nodes": {"kernel": 3}, "replays": 4, "capture_ranges": {"captured_1": ["capture_region", "layer1"], "captured_2": ["capture_region", "layer1"], "captured_3": ["capture_region", "layer2"]}, "replay_api_range": "replays", "window_label": "captured replays", "metadata_name": "replay-info"})");
  m.Write(manifest_path);

  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphExecDestroy(cge));
  CK(cudaGraphDestroy(g));
  CK(cudaGraphDestroy(cg));
  CK(cudaFree(d));
  std::printf("graphs_nvtx: done, host node ran %d times\n", host_calls);
  return 0;
}
