// PM sampling (--counters pm) across the process's devices: one PmSampler
// per device (pm_sampler.h), with the context it was configured in.
//
// A sampler starts from CUPTI's context-created callback, on the creating
// thread with the new context current and the device still idle (from the
// control thread, with the device busy, cuptiPmSamplingSetConfig fails),
// and must stop before that context goes away (context-destroy-starting) or
// libnvperf_host's static destructors run at exit. The control thread polls
// every sampler; Stats reads them. Any thread: the list of sessions is
// guarded, and sessions are never removed, so a sampler outlives the lock.
#ifndef GPUCAP_RECORDER_PM_SESSIONS_H_
#define GPUCAP_RECORDER_PM_SESSIONS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "config.h"
#include "once_log.h"
#include "pm_sampler.h"

namespace gpucap::recorder {

class PmSessions {
 public:
  // `emit`: where every sampler's messages go. `at_exit`: registered with
  // atexit once, when the first sampler has started (CUPTI has then just
  // loaded libnvperf_host, whose destructors run before any exit handler
  // registered earlier); it must end up in StopAll.
  PmSessions(const Config& config, PmSampler::Emit emit, void (*at_exit)(), OnceLog* log);

  // A context was created on `device` (the device's first): configure and
  // start its sampler, or say once on stderr why not.
  void Start(uint32_t device, const void* context);
  // `context` is being destroyed: stop the sampler configured in it, waiting
  // for a poll in progress for a bounded time only.
  void StopFor(const void* context);
  // Ends every sampler; idempotent.
  void StopAll();
  // The control thread's periodic decode.
  void PollAll();
  // pm<device>_samples, _lost_samples, _hw_overflows per sampler.
  void Stats(std::vector<std::pair<std::string, uint64_t>>* extra);

 private:
  struct Session {
    const void* context;
    std::unique_ptr<PmSampler> sampler;
  };
  std::vector<PmSampler*> Samplers();

  const Config& config_;
  const PmSampler::Emit emit_;
  void (*const at_exit_)();
  OnceLog* const log_;
  std::mutex mu_;  // sessions_ changes from context callbacks
  std::vector<Session> sessions_;
  std::once_flag exit_hook_;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_PM_SESSIONS_H_
