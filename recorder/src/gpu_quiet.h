// Waits, off the caller's thread and for a bounded time, until the GPU
// work queued so far on every active primary context has finished: what a
// detach asks before it closes the entry gate (GPUCAP_DETACH_QUIET_MS).
//
// Why: CUPTI's forced flush and its finalize, made with every other thread
// held at the gate, wait for the GPU work in flight (a 1.5 s kernel held a
// detach 1.5 s; on an H100 the flush took 13-34 ms and the finalize 7-38 ms
// at p99 in the sampled steps and the compile job, 2-3 ms in the stress,
// whose kernels are empty). Waiting for that work first, with the gate
// open, leaves the gated part only the work launched meanwhile.
//
// A worker thread of its own makes the waits (cuCtxSynchronize on each
// primary context the driver says is active: none is made or retained
// where the program made none; the driver's functions as the entry gate
// hands them out, so that a closing of the gate sees the wait in flight),
// so that a GPU that never finishes stalls
// neither the control thread nor the process's exit: Wait answers false
// at its bound, and while a wait is still running every later Wait
// answers false at once, and busy() says so: a detach is not tried then,
// since the worker is inside the driver. Contexts the program made itself
// (cuCtxCreate) are not waited for. The price of waiting through the gate:
// while a wait is in the driver, every closing of the gate gives up at its
// bound (CuptiSession's switches: the control thread's are tried again, a
// range resumed on an application thread is dropped), so the bound should
// be well under the time between recorded ranges.
#ifndef GPUCAP_RECORDER_GPU_QUIET_H_
#define GPUCAP_RECORDER_GPU_QUIET_H_

#include <cuda.h>
#include <cudaTypedefs.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace gpucap::recorder {

class GpuQuiet {
 public:
  // The driver functions a wait calls, each with the ABI of the CUDA
  // version in its type's name: cuGetProcAddress hands out the newest ABI
  // at or below the version asked for, and names change meaning
  // (cuCtxSynchronize at 13000 is cuCtxSynchronize_v2, which takes a
  // context; called without one it crashed inside the driver).
  struct Driver {
    PFN_cuDeviceGetCount_v2000 device_count;
    PFN_cuDeviceGet_v2000 device_get;
    PFN_cuDevicePrimaryCtxGetState_v7000 primary_state;
    PFN_cuDevicePrimaryCtxRetain_v7000 primary_retain;
    PFN_cuDevicePrimaryCtxRelease_v11000 primary_release;
    PFN_cuCtxPushCurrent_v4000 push;
    PFN_cuCtxPopCurrent_v4000 pop;
    PFN_cuCtxSynchronize_v2000 synchronize;
  };
  // As the program's own calls get them: through cuGetProcAddress, which
  // the entry gate interposes, so that a wait in the driver is a call in
  // flight that every closing of the gate waits for or gives up on. Nothing
  // when any of them is not found: then no wait is made, since one made
  // past the gate could be inside CUPTI's dispatch while it is changed.
  static std::optional<Driver> ThroughGate();
  // The same, from `get_proc` (ThroughGate's is the gate's cuGetProcAddress).
  static std::optional<Driver> Find(PFN_cuGetProcAddress_v12000 get_proc);

  // `driver`: the functions to call (tests); by default ThroughGate's, found
  // at the first Wait.
  GpuQuiet() = default;
  explicit GpuQuiet(const Driver& driver) : driver_(driver), resolved_(true) {}
  ~GpuQuiet();
  GpuQuiet(const GpuQuiet&) = delete;
  GpuQuiet& operator=(const GpuQuiet&) = delete;

  // True when the work queued before the call finished within `bound`;
  // false at once when no driver functions were found.
  bool Wait(std::chrono::milliseconds bound);

  // Waits again and again, within `bound` in all, until one wait takes at
  // most `shallow`: the GPU had that little queued when it began, so a
  // gate closed now holds the others only for about that much of the
  // GPU's work (cuptiFinalize and the forced flush wait for the work in
  // flight). A program that syncs each step drains its queue there; one
  // wait would often end just as the queue refilled. True when a shallow
  // wait was seen; false as Wait, or when another wait as long as the last
  // would overrun the bound (then the worker is left idle: a detach may
  // still run, waiting for what was queued since).
  bool WaitUntilShallow(std::chrono::milliseconds bound, std::chrono::microseconds shallow);

  // A wait still in the driver (past its bound): no detach may run now.
  bool busy() const;
  struct Counts {
    uint64_t waits = 0;     // Wait's, WaitUntilShallow's each
    uint64_t timeouts = 0;  // waits past their bound
    uint64_t shallow = 0;   // WaitUntilShallow's that saw a shallow wait
  };
  Counts counts() const;

 private:
  // Shared with the worker, which may outlive this object (stuck in the
  // driver at exit).
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    uint64_t asked = 0, done = 0;  // waits asked for and finished
    Counts counts;
    bool stopping = false;
  };
  static void Run(const std::shared_ptr<State>& state, Driver driver);

  std::optional<Driver> driver_;
  bool resolved_ = false;  // driver_ looked for (Wait's caller only)
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::thread worker_;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_GPU_QUIET_H_
