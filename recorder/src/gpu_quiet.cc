#include "gpu_quiet.h"

#include <cuda.h>

namespace gpucap::recorder {
namespace {

// Every active primary context's queued work, waited for on this thread.
void SynchronizeActivePrimaryContexts() {
  int count = 0;
  if (cuDeviceGetCount(&count) != CUDA_SUCCESS) return;
  for (int d = 0; d < count; ++d) {
    CUdevice dev;
    unsigned int flags = 0;
    int active = 0;
    if (cuDeviceGet(&dev, d) != CUDA_SUCCESS) continue;
    if (cuDevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active) continue;
    CUcontext ctx = nullptr;
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) continue;
    if (cuCtxPushCurrent(ctx) == CUDA_SUCCESS) {
      cuCtxSynchronize();
      CUcontext popped;
      cuCtxPopCurrent(&popped);
    }
    cuDevicePrimaryCtxRelease(dev);
  }
}

}  // namespace

GpuQuiet::~GpuQuiet() {
  bool idle;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
    idle = state_->done == state_->asked;
  }
  state_->cv.notify_all();
  if (!worker_.joinable()) return;
  // A worker stuck in the driver is left behind (it holds the state), not
  // waited for.
  if (idle) {
    worker_.join();
  } else {
    worker_.detach();
  }
}

bool GpuQuiet::Wait(std::chrono::milliseconds bound) {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  if (s.stopping || s.done != s.asked) return false;  // the last wait is still in the driver
  if (!worker_.joinable()) worker_ = std::thread(Run, state_);
  uint64_t mine = ++s.asked;
  ++s.waits;
  s.cv.notify_all();
  if (s.cv.wait_for(lock, bound, [&] { return s.done >= mine; })) return true;
  ++s.timeouts;
  return false;
}

void GpuQuiet::Run(const std::shared_ptr<State>& state) {
  State& s = *state;
  std::unique_lock<std::mutex> lock(s.mu);
  for (;;) {
    s.cv.wait(lock, [&] { return s.stopping || s.done != s.asked; });
    if (s.done == s.asked) return;  // stopping, nothing asked
    uint64_t target = s.asked;
    lock.unlock();
    SynchronizeActivePrimaryContexts();
    lock.lock();
    s.done = target;
    s.cv.notify_all();
  }
}

uint64_t GpuQuiet::waits() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->waits;
}

uint64_t GpuQuiet::timeouts() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->timeouts;
}

}  // namespace gpucap::recorder
