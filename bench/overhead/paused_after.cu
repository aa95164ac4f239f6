// What a paused recorder costs after it has recorded, measured inside one
// process, so that the per-process level that swamps comparisons between
// processes (bench/README.md, "Instructions retired ...") cancels.
//
// The process times PHASES paused stretches of BLOCKS blocks of PER
// iterations (one iteration: an empty kernel launch and the small runtime
// calls PyTorch makes around each: cudaGetDevice, cudaGetLastError,
// cudaStreamGetCaptureInfo) and, between stretches, one NVTX range
// `rec#K` of RANGE iterations followed by SETTLE_MS of sleep (the
// recorder's control thread detaches and attaches again in it). Under
// `gpucap record --capture-range 'nvtx:rec#\d+' --capture-range-end repeat`
// stretch 0 is the paused price before any recording and stretches 1.. the
// price after each; without gpucap (or with --start-paused, where ranges
// switch nothing) the same program says how much the stretches drift.
// TOGGLE=signal records by SIGUSR2 instead (under `gpucap record
// --start-paused`): the process signals itself before and after each
// recorded stretch, with SETTLE_MS/4 for the control thread to switch.
// Prints, per stretch, the median over blocks of the launching thread's CPU
// us per iteration and wall us per iteration, and their ratios to stretch 0:
//   RESULT cpu0=... wall0=... cpu1=... r_cpu1=... r_wall1=... ...
// MARK=callgrind (instr.sh): under callgrind, each block is a region of its
// own (callgrind_mark.h), "block stretch<K> paused <b>", and each recorded
// range's iterations one more, "block range on <K> <RANGE>".
// Build: nvcc -O2 -arch=sm_90 paused_after.cu callgrind_mark.c -o paused_after
#include <nvtx3/nvToolsExt.h>
#include "callgrind_mark.h"
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

__global__ void k_empty(float* p) {
  if (p && threadIdx.x == 1234567) p[0] = 1;
}

static double Now(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

static int Env(const char* name, int fallback) {
  const char* v = getenv(name);
  return v ? atoi(v) : fallback;
}

static void Iteration(cudaStream_t s) {
  int device = 0;
  cudaGetDevice(&device);
  cudaStreamCaptureStatus status;
  cudaStreamGetCaptureInfo(s, &status, nullptr);
  k_empty<<<1, 32, 0, s>>>(nullptr);
  if (cudaGetLastError() != cudaSuccess) {
    fprintf(stderr, "paused_after: launch failed\n");
    exit(1);
  }
}

int main() {
  const int phases = Env("PHASES", 4), blocks = Env("BLOCKS", 40), per = Env("PER", 1000);
  const int range = Env("RANGE", 300), settle_ms = Env("SETTLE_MS", 800);
  const bool by_signal = getenv("TOGGLE") && std::string(getenv("TOGGLE")) == "signal";
  char label[64];
  cudaStream_t s;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    fprintf(stderr, "paused_after: no CUDA device\n");
    return 1;
  }
  // After CUDA's first call, which is when gpucap's injection installs its handler.
  struct sigaction current = {};
  if (by_signal && sigaction(SIGUSR2, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    signal(SIGUSR2, SIG_IGN);  // no gpucap here: the same program, nothing to toggle
  }
  for (int i = 0; i < 4 * per; ++i) Iteration(s);
  cudaStreamSynchronize(s);
  const bool mark = cg_mark_from_environment("paused_after");
  std::vector<double> cpu(phases), wall(phases);
  for (int phase = 0; phase < phases; ++phase) {
    std::vector<double> block_cpu, block_wall;
    for (int b = 0; b < blocks; ++b) {
      double w0 = Now(CLOCK_MONOTONIC), c0 = Now(CLOCK_THREAD_CPUTIME_ID);
      if (mark) cg_mark_dump("between blocks");
      for (int i = 0; i < per; ++i) Iteration(s);
      if (mark) {
        snprintf(label, sizeof(label), "block stretch%d paused %d", phase, b);
        cg_mark_dump(label);
      }
      // Up to the last launch: the closing synchronize spins as long as the
      // GPU lags, which is not the launching thread's price.
      block_cpu.push_back((Now(CLOCK_THREAD_CPUTIME_ID) - c0) / per);
      block_wall.push_back((Now(CLOCK_MONOTONIC) - w0) / per);
      cudaStreamSynchronize(s);
    }
    cpu[phase] = Median(block_cpu);
    wall[phase] = Median(block_wall);
    if (phase + 1 == phases) break;
    std::string name = "rec#" + std::to_string(phase);
    if (by_signal) {
      raise(SIGUSR2);
      usleep(settle_ms * 1000 / 4);
    }
    nvtxRangePushA(name.c_str());
    if (mark) cg_mark_dump("between blocks");
    for (int i = 0; i < range; ++i) Iteration(s);
    if (mark) {
      snprintf(label, sizeof(label), "block range on %d %d", phase, range);
      cg_mark_dump(label);
    }
    cudaStreamSynchronize(s);
    nvtxRangePop();
    if (by_signal) raise(SIGUSR2);
    usleep(settle_ms * 1000);
    // The detach finalizes at an application call's exit: make that happen
    // before the next stretch, as a step's first calls would.
    Iteration(s);
    cudaStreamSynchronize(s);
    usleep(settle_ms * 1000 / 4);
  }
  printf("RESULT");
  for (int p = 0; p < phases; ++p) {
    printf(" cpu%d=%.4f wall%d=%.4f", p, cpu[p], p, wall[p]);
    if (p) printf(" r_cpu%d=%.4f r_wall%d=%.4f", p, cpu[p] / cpu[0], p, wall[p] / wall[0]);
  }
  printf("\n");
  return 0;
}
