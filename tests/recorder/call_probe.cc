// Run by ring_calls_test under GPUCAP_RING_MB with the blocked-call trigger
// on (GPUCAP_RING_HANG_CALL_S) and libgpucap_gate.so preloaded: loads the
// recorder library as NVTX would, makes many short runtime calls through
// the gate (the stand-in runtime, fake_cudart.cc: back to back, so that the
// thread is in a call at almost every look), then one that stays
// (cudaStreamSynchronize) until another thread has seen the dump it
// provokes, then short calls again for a while. It waits for the dump by
// what the dump says, never for a time.
// Exit status: 0; 5 not recording; 6 a call outside the gate; 7 no dump
// came (after a minute).
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "gpucap/gpucap.h"
#include "recorder_as_nvtx.h"
#include "ring_dumps.h"

extern "C" {
int cudaGetDeviceCount(int* count);  // *count: the gate's depth inside
int cudaStreamSynchronize(void* stream);
int cudaDeviceSynchronize();  // returns after a millisecond
extern int fake_cudart_release;
}

namespace {

using gpucap::testing::SleepMs;
using gpucap::testing::SomeDumpSays;

// Short calls back to back for about `ms`: the thread is inside a call at
// almost every look of the watch, a different one each time (about 50
// between looks), none of them long.
bool ShortCalls(long ms) {
  for (long i = 0; i < ms; ++i) {
    int depth = -1;
    cudaGetDeviceCount(&depth);
    if (depth != 1) return false;
    cudaDeviceSynchronize();
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const char* output = std::getenv("GPUCAP_OUTPUT");
  if (argc < 2 || !output) return 2;
  void* lib = nullptr;
  if (int failed = gpucap::testing::StartRecorderAsNvtx(argv[1], "call_probe", &lib)) return failed;
  if (!gpucap_is_recording()) return 5;
  if (!ShortCalls(1500)) return 6;
  std::atomic<bool> dumped{false};
  std::thread releaser([&] {
    for (int i = 0; i < 6000 && !dumped.load(); ++i) {
      if (SomeDumpSays(output, "hang: a CUDA call in flight for ")) dumped.store(true);
      SleepMs(10);
    }
    __atomic_store_n(&fake_cudart_release, 1, __ATOMIC_RELEASE);
  });
  cudaStreamSynchronize(nullptr);
  releaser.join();
  if (!dumped.load()) {
    std::fprintf(stderr, "call_probe: no dump says 'hang: a CUDA call in flight for '\n");
    return 7;
  }
  if (!ShortCalls(1500)) return 6;
  return 0;
}
