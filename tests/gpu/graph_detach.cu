// Which CUDA graphs survive a detach of CUPTI (issue 40): a graph replayed
// after `cuptiFinalize` and a later re-attach faulted ("unspecified launch
// failure") in a torch.compile job. Each CASE instantiates one graph in one
// recorder state and replays it in others; recording is driven by NVTX
// ranges `rec#N` under `gpucap record --capture-range 'nvtx:rec#\d+'
// --pause-detach on`, and each range's end is followed by a wait for the
// control thread's detach.
//
//   graph_detach CASE     CASE: before, attached, detached, attached-reattach, module-detached,
//                         module-attached, cycles, busy, inflight, inflight-graph, queued,
//                         paused-launch
//
// before            instantiated before any recording; replayed while recording, after the detach, after re-attach
// attached          instantiated while recording; replayed after the detach (CUPTI finalized)
// detached          instantiated after the detach; replayed after re-attach
// attached-reattach instantiated while recording; replayed after a detach and a re-attach
// module-detached   a module loaded (cuModuleLoadData, as Triton loads its kernels) after the detach; its
//                   kernel launched and captured into a graph while detached, launched and replayed after re-attach
// module-attached   a module loaded while recording; its kernel launched after the detach and after re-attach
// cycles            six detaches and re-attaches; in each state a new graph is instantiated and every
//                   graph made so far is replayed (Kineto saw graphs break at the second re-init)
// busy              a graph replayed without pause over 400 steps, one in ten a recorded range: the detaches
//                   happen among replays, as in a torch.compile job's inference (the cases above leave the
//                   GPU idle while the control thread detaches)
// inflight          a kernel that spins for 1.5 s launched inside a recorded range and still running when
//                   CUPTI is finalized; then graphs and kernels again
// inflight-graph    the same, the spinning kernel a node of a graph launched while recording
// queued            graph launches queued without a synchronize across the range's end and the detach
//                   (torch.compile's graph trees replay asynchronously: the GPU may be ~1,000 launches
//                   behind the host when CUPTI is finalized)
// paused-launch     a graph launched right after the recorded range ends, while CUPTI is still attached
//                   with its kinds off (the detach has not run yet), then after the detach
//
// Prints "STEP <what> ok" after each replay's synchronize; the first error
// ends the program with its CUDA error (exit 1), so the last STEP line says
// where a graph broke.
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common.h"

__global__ void axpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

__global__ void spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

namespace {

constexpr int kN = 1 << 16;
float *g_x, *g_y;
cudaStream_t g_stream;
int g_range = 0;

cudaGraphExec_t Instantiate() {
  cudaGraph_t graph;
  CK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < 8; ++i) axpy<<<kN / 256, 256, 0, g_stream>>>(g_y, g_x, 0.5f, kN);
  CK(cudaStreamEndCapture(g_stream, &graph));
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphDestroy(graph));
  return exec;
}

// The stream's work so far finished without error: STEP <what> ok, or the
// error and exit 1 (a fault is sticky: nothing after it would mean anything).
void Synchronized(const char* what) {
  cudaError_t e = cudaStreamSynchronize(g_stream);
  if (e != cudaSuccess) {
    std::printf("STEP %s FAILED: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
  std::printf("STEP %s ok\n", what);
  std::fflush(stdout);
}

void Replay(cudaGraphExec_t exec, const char* what) {
  for (int i = 0; i < 4; ++i) CK(cudaGraphLaunch(exec, g_stream));
  Synchronized(what);
}

// bump(float* y, int n): y[i] += 1, as PTX for cuModuleLoadData.
const char kBumpPtx[] =
    ".version 9.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "\n"
    "	// .globl	bump\n"
    "\n"
    ".visible .entry bump(\n"
    "	.param .u64 bump_param_0,\n"
    "	.param .u32 bump_param_1\n"
    ")\n"
    "{\n"
    "	.reg .pred 	%p<2>;\n"
    "	.reg .f32 	%f<3>;\n"
    "	.reg .b32 	%r<6>;\n"
    "	.reg .b64 	%rd<5>;\n"
    "\n"
    "\n"
    "	ld.param.u64 	%rd1, [bump_param_0];\n"
    "	ld.param.u32 	%r2, [bump_param_1];\n"
    "	mov.u32 	%r3, %ctaid.x;\n"
    "	mov.u32 	%r4, %ntid.x;\n"
    "	mov.u32 	%r5, %tid.x;\n"
    "	mad.lo.s32 	%r1, %r3, %r4, %r5;\n"
    "	setp.ge.s32 	%p1, %r1, %r2;\n"
    "	@%p1 bra 	$L__BB0_2;\n"
    "\n"
    "	cvta.to.global.u64 	%rd2, %rd1;\n"
    "	mul.wide.s32 	%rd3, %r1, 4;\n"
    "	add.s64 	%rd4, %rd2, %rd3;\n"
    "	ld.global.f32 	%f1, [%rd4];\n"
    "	add.f32 	%f2, %f1, 0f3F800000;\n"
    "	st.global.f32 	[%rd4], %f2;\n"
    "\n"
    "$L__BB0_2:\n"
    "	ret;\n"
    "\n"
    "}\n";

CUfunction LoadBump() {
  CUmodule module;
  CUfunction f;
  if (cuModuleLoadData(&module, kBumpPtx) != CUDA_SUCCESS || cuModuleGetFunction(&f, module, "bump") != CUDA_SUCCESS) {
    std::printf("STEP cuModuleLoadData FAILED\n");
    std::exit(1);
  }
  return f;
}

void Bump(CUfunction f, const char* what) {
  int n = kN;
  void* args[] = {&g_y, &n};
  for (int i = 0; i < 4; ++i) {
    if (cuLaunchKernel(f, kN / 256, 1, 1, 256, 1, 1, 0, reinterpret_cast<CUstream>(g_stream), args, nullptr) !=
        CUDA_SUCCESS) {
      std::printf("STEP %s FAILED: cuLaunchKernel\n", what);
      std::exit(1);
    }
  }
  Synchronized(what);
}

cudaGraphExec_t CaptureBump(CUfunction f) {
  cudaGraph_t graph;
  int n = kN;
  void* args[] = {&g_y, &n};
  CK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < 4; ++i) {
    cuLaunchKernel(f, kN / 256, 1, 1, 256, 1, 1, 0, reinterpret_cast<CUstream>(g_stream), args, nullptr);
  }
  CK(cudaStreamEndCapture(g_stream, &graph));
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphDestroy(graph));
  return exec;
}

// A recorded range, then time for the control thread to detach (it runs
// every 50 ms; a detach waits up to 2 ms for calls in flight).
template <typename Body>
void Recorded(Body body) {
  nvtxRangePushA(("rec#" + std::to_string(g_range++)).c_str());
  body();
  CK(cudaStreamSynchronize(g_stream));
  nvtxRangePop();
  usleep(400 * 1000);
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = argc > 1 ? argv[1] : "attached";
  CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  CK(cudaMalloc(&g_x, kN * sizeof(float)));
  CK(cudaMalloc(&g_y, kN * sizeof(float)));
  CK(cudaMemset(g_x, 0, kN * sizeof(float)));
  CK(cudaMemset(g_y, 0, kN * sizeof(float)));
  cudaGraphExec_t g = nullptr;
  if (which == "before") {
    g = Instantiate();
    Replay(g, "before-instantiated, not yet recording");
    Recorded([&] { Replay(g, "before-instantiated, recording"); });
    Replay(g, "before-instantiated, after the detach");
    Recorded([&] { Replay(g, "before-instantiated, re-attached"); });
    Replay(g, "before-instantiated, after the second detach");
  } else if (which == "attached") {
    Recorded([&] {
      g = Instantiate();
      Replay(g, "attached-instantiated, recording");
    });
    Replay(g, "attached-instantiated, after the detach");
  } else if (which == "detached") {
    Recorded([&] {});
    g = Instantiate();
    Replay(g, "detached-instantiated, detached");
    Recorded([&] { Replay(g, "detached-instantiated, re-attached"); });
    Replay(g, "detached-instantiated, after the second detach");
  } else if (which == "attached-reattach") {
    Recorded([&] { g = Instantiate(); });
    Recorded([&] { Replay(g, "attached-instantiated, re-attached"); });
    Replay(g, "attached-instantiated, after the second detach");
  } else if (which == "module-detached") {
    Recorded([&] {});
    CUfunction f = LoadBump();
    Bump(f, "module loaded detached, launched detached");
    g = CaptureBump(f);
    Replay(g, "module loaded detached, its graph replayed detached");
    Recorded([&] {
      Bump(f, "module loaded detached, launched re-attached");
      Replay(g, "module loaded detached, its graph replayed re-attached");
    });
    Bump(f, "module loaded detached, launched after the second detach");
    Replay(g, "module loaded detached, its graph replayed after the second detach");
  } else if (which == "module-attached") {
    CUfunction f = nullptr;
    Recorded([&] {
      f = LoadBump();
      Bump(f, "module loaded recording, launched recording");
      g = CaptureBump(f);
    });
    Bump(f, "module loaded recording, launched after the detach");
    Replay(g, "module loaded recording, its graph replayed after the detach");
    Recorded([&] {
      Bump(f, "module loaded recording, launched re-attached");
      Replay(g, "module loaded recording, its graph replayed re-attached");
    });
    Bump(f, "module loaded recording, launched after the second detach");
  } else if (which == "cycles") {
    std::vector<cudaGraphExec_t> all;
    auto replay_all = [&](const std::string& when) {
      for (size_t i = 0; i < all.size(); ++i) Replay(all[i], (when + ", graph " + std::to_string(i)).c_str());
    };
    for (int c = 0; c < 6; ++c) {
      Recorded([&] {
        all.push_back(Instantiate());
        replay_all("cycle " + std::to_string(c) + " recording");
      });
      all.push_back(Instantiate());
      replay_all("cycle " + std::to_string(c) + " detached");
    }
    for (cudaGraphExec_t e : all) CK(cudaGraphExecDestroy(e));
    g = Instantiate();
  } else if (which == "busy") {
    g = Instantiate();
    int recorded = 0;
    for (int step = 0; step < 400; ++step) {
      bool record = step % 10 == 9;
      if (record) nvtxRangePushA(("rec#" + std::to_string(g_range++)).c_str());
      for (int i = 0; i < 4; ++i) CK(cudaGraphLaunch(g, g_stream));
      CK(cudaStreamSynchronize(g_stream));
      if (record) {
        nvtxRangePop();
        ++recorded;
      }
    }
    Replay(g, ("busy, 400 steps, " + std::to_string(recorded) + " recorded").c_str());
  } else if (which == "inflight") {
    g = Instantiate();
    nvtxRangePushA(("rec#" + std::to_string(g_range++)).c_str());
    spin<<<1, 1, 0, g_stream>>>(3'000'000'000ll);  // ~1.5 s at the H200's ~1.98 GHz
    CK(cudaGetLastError());
    nvtxRangePop();
    usleep(400 * 1000);  // the detach, while the kernel runs
    Synchronized("inflight, the kernel launched while recording finished after the detach");
    Replay(g, "inflight, a graph replayed after it");
    Recorded([&] { Replay(g, "inflight, re-attached"); });
    Replay(g, "inflight, after the second detach");
  } else if (which == "inflight-graph") {
    g = Instantiate();
    cudaGraph_t spin_graph;
    CK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal));
    spin<<<1, 1, 0, g_stream>>>(3'000'000'000ll);
    axpy<<<kN / 256, 256, 0, g_stream>>>(g_y, g_x, 0.5f, kN);
    CK(cudaStreamEndCapture(g_stream, &spin_graph));
    cudaGraphExec_t spinning;
    CK(cudaGraphInstantiate(&spinning, spin_graph, 0));
    CK(cudaGraphDestroy(spin_graph));
    nvtxRangePushA(("rec#" + std::to_string(g_range++)).c_str());
    CK(cudaGraphLaunch(spinning, g_stream));
    nvtxRangePop();
    usleep(400 * 1000);  // the detach, while the graph's kernel runs
    Synchronized("inflight-graph, the graph launched while recording finished after the detach");
    Replay(g, "inflight-graph, another graph replayed after it");
    Recorded([&] { CK(cudaGraphLaunch(spinning, g_stream)); });
    Replay(g, "inflight-graph, after the second detach");
    CK(cudaGraphExecDestroy(spinning));
  } else if (which == "queued") {
    g = Instantiate();
    for (int round = 0; round < 5; ++round) {
      nvtxRangePushA(("rec#" + std::to_string(g_range++)).c_str());
      for (int i = 0; i < 500; ++i) CK(cudaGraphLaunch(g, g_stream));
      nvtxRangePop();
      // Keep the queue deep for 400 ms past the range's end, never waiting
      // for it, so that the control thread finalizes CUPTI under it.
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
      while (std::chrono::steady_clock::now() < until) CK(cudaGraphLaunch(g, g_stream));
      Synchronized(("queued, round " + std::to_string(round)).c_str());
    }
    Replay(g, "queued, after every detach");
  } else if (which == "paused-launch") {
    g = Instantiate();
    for (int round = 0; round < 3; ++round) {
      nvtxRangePushA(("rec#" + std::to_string(g_range++)).c_str());
      Replay(g, ("paused-launch, recording, round " + std::to_string(round)).c_str());
      nvtxRangePop();
      Replay(g, ("paused-launch, paused before the detach, round " + std::to_string(round)).c_str());
      usleep(400 * 1000);
      Replay(g, ("paused-launch, after the detach, round " + std::to_string(round)).c_str());
    }
  } else {
    std::fprintf(stderr, "graph_detach: unknown case %s\n", which.c_str());
    return 2;
  }
  CK(cudaGraphExecDestroy(g));
  CK(cudaDeviceSynchronize());
  std::printf("DONE %s\n", which.c_str());
  return 0;
}
