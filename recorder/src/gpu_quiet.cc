#include "gpu_quiet.h"

#include <cuda.h>
#include <dlfcn.h>

#include <type_traits>

namespace gpucap::recorder {
namespace {

// Every active primary context's queued work, waited for on this thread.
void SynchronizeActivePrimaryContexts(const GpuQuiet::Driver& cu) {
  int count = 0;
  if (cu.device_count(&count) != CUDA_SUCCESS) return;
  for (int d = 0; d < count; ++d) {
    CUdevice dev;
    unsigned int flags = 0;
    int active = 0;
    if (cu.device_get(&dev, d) != CUDA_SUCCESS) continue;
    if (cu.primary_state(dev, &flags, &active) != CUDA_SUCCESS || !active) continue;
    CUcontext ctx = nullptr;
    if (cu.primary_retain(&ctx, dev) != CUDA_SUCCESS) continue;
    if (cu.push(ctx) == CUDA_SUCCESS) {
      cu.synchronize();
      CUcontext popped;
      cu.pop(&popped);
    }
    cu.primary_release(dev);
  }
}

}  // namespace

std::optional<GpuQuiet::Driver> GpuQuiet::ThroughGate() {
  return Find(reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2")));
}

std::optional<GpuQuiet::Driver> GpuQuiet::Find(PFN_cuGetProcAddress_v12000 get_proc) {
  if (!get_proc) return std::nullopt;
  bool all = true;
  // `version`: the one in the PFN type's name (Driver).
  auto find = [&](const char* name, int version, auto* fn) {
    void* p = nullptr;
    if (get_proc(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, nullptr) == CUDA_SUCCESS && p) {
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(p);
    } else {
      all = false;
    }
  };
  Driver d{};
  find("cuDeviceGetCount", 2000, &d.device_count);
  find("cuDeviceGet", 2000, &d.device_get);
  find("cuDevicePrimaryCtxGetState", 7000, &d.primary_state);
  find("cuDevicePrimaryCtxRetain", 7000, &d.primary_retain);
  find("cuDevicePrimaryCtxRelease", 11000, &d.primary_release);
  find("cuCtxPushCurrent", 4000, &d.push);
  find("cuCtxPopCurrent", 4000, &d.pop);
  find("cuCtxSynchronize", 2000, &d.synchronize);
  if (!all) return std::nullopt;
  return d;
}

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
  if (!resolved_) {
    driver_ = ThroughGate();
    resolved_ = true;
  }
  if (!driver_) return false;
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  if (s.stopping || s.done != s.asked) return false;  // the last wait is still in the driver
  if (!worker_.joinable()) worker_ = std::thread(Run, state_, *driver_);
  uint64_t mine = ++s.asked;
  s.cv.notify_all();
  ++s.counts.waits;
  if (s.cv.wait_for(lock, bound, [&] { return s.done >= mine; })) return true;
  ++s.counts.timeouts;
  return false;
}

bool GpuQuiet::WaitUntilShallow(std::chrono::milliseconds bound, std::chrono::microseconds shallow) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  std::chrono::steady_clock::duration last{0};
  for (bool first = true;; first = false) {
    auto t0 = std::chrono::steady_clock::now();
    // Another wait like the last would overrun the bound and leave the
    // worker in the driver (then no detach may run): stop with it idle, the
    // queue waited for as far as the last wait.
    if (!first && deadline - t0 < last) return false;
    if (!Wait(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - t0) + std::chrono::milliseconds(1))) {
      return false;
    }
    last = std::chrono::steady_clock::now() - t0;
    if (last <= shallow) {
      std::lock_guard<std::mutex> lock(state_->mu);
      ++state_->counts.shallow;
      return true;
    }
  }
}

void GpuQuiet::Run(const std::shared_ptr<State>& state, Driver cu) {
  State& s = *state;
  std::unique_lock<std::mutex> lock(s.mu);
  for (;;) {
    s.cv.wait(lock, [&] { return s.stopping || s.done != s.asked; });
    if (s.done == s.asked) return;  // stopping, nothing asked
    uint64_t target = s.asked;
    lock.unlock();
    SynchronizeActivePrimaryContexts(cu);
    lock.lock();
    s.done = target;
    s.cv.notify_all();
  }
}

bool GpuQuiet::busy() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->done != state_->asked;
}

GpuQuiet::Counts GpuQuiet::counts() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->counts;
}

}  // namespace gpucap::recorder
