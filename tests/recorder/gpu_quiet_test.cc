// GpuQuiet (gpu_quiet.h) over a driver faked and handed in: a wait returns
// once the active primary contexts' work is done, answers false at its
// bound when the GPU does not finish, and while that wait is still in the
// driver answers false at once rather than queue behind it; an inactive
// context is never waited for (nor retained).
#include "gpu_quiet.h"

#include <cuda.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace {

std::atomic<bool> g_active{true};
std::atomic<bool> g_gpu_done{true};  // cuCtxSynchronize returns once true
std::atomic<int> g_syncs{0}, g_retains{0};

}  // namespace

extern "C" {
CUresult CUDAAPI cuDeviceGetCount(int* count) {
  *count = 1;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  *device = ordinal;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice, unsigned int* flags, int* active) {
  *flags = 0;
  *active = g_active.load() ? 1 : 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice) {
  static int context;
  *ctx = reinterpret_cast<CUcontext>(&context);
  g_retains.fetch_add(1);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxPushCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxPopCurrent(CUcontext* ctx) {
  *ctx = nullptr;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxSynchronize(void) {
  while (!g_gpu_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  g_syncs.fetch_add(1);
  return CUDA_SUCCESS;
}
}  // extern "C"

namespace gpucap::recorder {
namespace {

using namespace std::chrono_literals;

// The fakes above, handed in as the gate would hand the driver's out.
const GpuQuiet::Driver kFakeDriver = {cuDeviceGetCount,     cuDeviceGet,      cuDevicePrimaryCtxGetState,
                                      cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRelease, cuCtxPushCurrent,
                                      cuCtxPopCurrent,      cuCtxSynchronize};

// Without the gate's cuGetProcAddress answering (here: CUDA's stub library,
// no driver), no wait is made: one past the gate could be inside CUPTI's
// dispatch while a switch changes it.
TEST(GpuQuiet, WithoutTheDriversFunctionsFromTheGateNothingIsWaitedFor) {
  EXPECT_FALSE(GpuQuiet::ThroughGate().has_value());
  g_syncs = 0;
  GpuQuiet quiet;
  EXPECT_FALSE(quiet.Wait(100ms));
  EXPECT_EQ(g_syncs.load(), 0);
  EXPECT_EQ(quiet.counts().waits, 0u);
  EXPECT_FALSE(quiet.busy());
}

// A driver's cuGetProcAddress as CUDA 13's answers: the newest ABI at or
// below the version asked for. cuCtxSynchronize from 13000 on is
// cuCtxSynchronize_v2, which takes the context to wait for.
std::atomic<int> g_synchronize_v2_handed_out{0};
std::atomic<int> g_synchronize_version_asked{0};
CUresult CUDAAPI SynchronizeV2(CUcontext) { return CUDA_SUCCESS; }
CUresult CUDAAPI VersionedGetProc(const char* name, void** fn, int version, cuuint64_t,
                                  CUdriverProcAddressQueryResult* status) {
  if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  std::string n = name;
  if (n == "cuCtxSynchronize") g_synchronize_version_asked = version;
  if (n == "cuCtxSynchronize" && version >= 13000) {
    g_synchronize_v2_handed_out.fetch_add(1);
    *fn = reinterpret_cast<void*>(&SynchronizeV2);
  } else if (n == "cuCtxSynchronize") {
    *fn = reinterpret_cast<void*>(&cuCtxSynchronize);
  } else {
    *fn = reinterpret_cast<void*>(&cuDeviceGetCount);  // any non-null: only looked up
  }
  return CUDA_SUCCESS;
}

// Each function is asked for at the version of the ABI it is called with:
// asked at CUDA_VERSION (13000), cuCtxSynchronize came back as its _v2 and
// was called without a context, which crashed inside the driver on an H100.
TEST(GpuQuiet, EachDriverFunctionIsAskedForWithTheAbiItIsCalledWith) {
  g_synchronize_v2_handed_out = 0;
  std::optional<GpuQuiet::Driver> d = GpuQuiet::Find(&VersionedGetProc);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(g_synchronize_v2_handed_out.load(), 0);
  EXPECT_GT(g_synchronize_version_asked.load(), 0);
  EXPECT_LT(g_synchronize_version_asked.load(), 13000) << "whatever the toolkit built against";
  EXPECT_EQ(reinterpret_cast<void*>(d->synchronize), reinterpret_cast<void*>(&cuCtxSynchronize));
}

TEST(GpuQuiet, AWaitEndsWhenTheQueuedWorkIsDone) {
  g_active = true;
  g_gpu_done = true;
  g_syncs = 0;
  GpuQuiet quiet(kFakeDriver);
  EXPECT_TRUE(quiet.Wait(2000ms));
  EXPECT_TRUE(quiet.Wait(2000ms));
  EXPECT_EQ(g_syncs.load(), 2);
  EXPECT_EQ(quiet.counts().waits, 2u);
  EXPECT_EQ(quiet.counts().timeouts, 0u);
}

TEST(GpuQuiet, AGpuThatDoesNotFinishCostsTheBoundOnceAndThenNothing) {
  g_active = true;
  g_gpu_done = false;
  GpuQuiet quiet(kFakeDriver);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(quiet.Wait(20ms));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 20ms);
  EXPECT_TRUE(quiet.busy()) << "still in the driver: no detach may run";
  auto t1 = std::chrono::steady_clock::now();
  EXPECT_FALSE(quiet.Wait(5000ms)) << "the last wait is still in the driver";
  EXPECT_LT(std::chrono::steady_clock::now() - t1, 1000ms) << "answered at once, not after its bound";
  EXPECT_EQ(quiet.counts().timeouts, 1u);
  g_gpu_done = true;
  for (int i = 0; i < 200 && !quiet.Wait(100ms); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_GE(quiet.counts().waits, 2u) << "waits again once the GPU finished";
  EXPECT_FALSE(quiet.busy());
}

// A wait that finds work queued is made again until one finds (nearly)
// none: the fake GPU finishes the first synchronizes after 50 ms each.
std::atomic<int> g_slow_syncs{0};
CUresult CUDAAPI SlowThenFastSynchronize() {
  if (g_slow_syncs.fetch_sub(1) > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return CUDA_SUCCESS;
}

TEST(GpuQuiet, WaitsAgainUntilAWaitFindsTheQueueShallowOrAnotherWouldOverrun) {
  g_active = true;
  GpuQuiet::Driver d = kFakeDriver;
  d.synchronize = &SlowThenFastSynchronize;
  GpuQuiet quiet(d);
  g_slow_syncs = 2;
  EXPECT_TRUE(quiet.WaitUntilShallow(5000ms, 20ms));
  EXPECT_GE(quiet.counts().waits, 3u) << "two deep, then a shallow one";
  EXPECT_EQ(quiet.counts().shallow, 1u);
  // Never shallow: two 50 ms waits, then 30 ms left, too little for a
  // third like them; the worker is left idle, so a detach may run.
  g_slow_syncs = 1000;
  uint64_t timeouts = quiet.counts().timeouts;
  EXPECT_FALSE(quiet.WaitUntilShallow(130ms, 20ms));
  EXPECT_FALSE(quiet.busy()) << "no wait left in the driver";
  EXPECT_EQ(quiet.counts().timeouts, timeouts);
  EXPECT_EQ(quiet.counts().shallow, 1u);
  g_slow_syncs = 0;
}

TEST(GpuQuiet, AnInactiveContextIsNeitherRetainedNorWaitedFor) {
  g_active = false;
  g_gpu_done = false;  // a wait would never end
  g_retains = 0;
  GpuQuiet quiet(kFakeDriver);
  EXPECT_TRUE(quiet.Wait(2000ms));
  EXPECT_EQ(g_retains.load(), 0);
  g_active = true;
  g_gpu_done = true;
}

}  // namespace
}  // namespace gpucap::recorder
