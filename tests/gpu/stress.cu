// Stress for the recorder: THREADS threads each launching small kernels on
// their own stream inside NVTX ranges for SECONDS; the main thread toggles
// recording with SIGUSR2 every 250 ms when asked. END says how the program
// ends: "exit" (normally), "segv" (a crash), "hang" (until killed).
//   stress THREADS SECONDS TOGGLE(0|1) END
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common.h"

__global__ void tick(float* x) { x[threadIdx.x] += 1.f; }

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 16;
  double seconds = argc > 2 ? atof(argv[2]) : 3;
  bool toggle = argc > 3 && atoi(argv[3]) != 0;
  std::string end = argc > 4 ? argv[4] : "exit";
  std::atomic<bool> stop{false};
  std::atomic<long> launches{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      cudaStream_t s;
      CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      float* d;
      CK(cudaMalloc(&d, 256 * sizeof(float)));
      long n = 0;
      while (!stop.load()) {
        nvtxRangePushA(("worker" + std::to_string(t)).c_str());
        for (int i = 0; i < 64; ++i) tick<<<1, 32, 0, s>>>(d);
        nvtxRangePop();
        n += 64;
        if (n % 4096 == 0) CK(cudaStreamSynchronize(s));
      }
      CK(cudaStreamSynchronize(s));
      launches += n;
    });
  }
  auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    if (toggle) raise(SIGUSR2);
  }
  if (end == "segv") {
    std::fprintf(stderr, "stress: crashing on purpose\n");
    raise(SIGSEGV);
  }
  if (end == "hang") {
    std::fprintf(stderr, "stress: hanging until killed\n");
    for (;;) pause();
  }
  stop = true;
  for (auto& w : workers) w.join();
  std::printf("RESULT stress threads=%d launches=%ld\n", threads, launches.load());
  return 0;
}
