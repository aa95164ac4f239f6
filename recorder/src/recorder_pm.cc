// The recorder's glue to PM sampling (pm_sampler.h): one sampler per CUDA
// context, started when the context is created and stopped before it is
// destroyed or the process exits.
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "process_recorder.h"
#include "recorder.h"

namespace gpucap::recorder {
namespace {

void StopPmSamplersAtExit() {
  if (Recorder* r = ProcessRecorder()) r->StopPmSamplers();
}

}  // namespace

void Recorder::StartPmSampling(uint32_t device, const void* context) {
  PmSamplerOptions options;
  if (!config_.pm_metrics.empty()) options.metrics = SplitPmMetricList(config_.pm_metrics);
  options.interval_ns = config_.pm_interval_us * 1000;
  std::string why;
  // Counter ids: NVML's count up from 1; PM sampling's from 1000 per device.
  auto sampler = PmSampler::Start(
      device, options,
      [this](std::vector<format::SmallMessage> batch) { writer_->Submit(std::move(batch)); },
      1000 + device * 100, &why);
  if (!sampler) {
    LogOnce("gpucap: PM sampling off on device " + std::to_string(device) + ": " + why);
    return;
  }
  for (const std::string& d : sampler->dropped()) LogOnce("gpucap: PM sampling: " + d);
  {
    std::lock_guard<std::mutex> lock(pm_mu_);
    pm_.push_back(PmSession{context, std::move(sampler)});
  }
  // CUPTI has just loaded libnvperf_host, whose static destructors now run
  // before any exit handler registered earlier, Stop's included. PM
  // sampling must end before them, so it gets an exit handler of its own.
  std::call_once(pm_exit_hook_, [] { atexit(StopPmSamplersAtExit); });
}

void Recorder::StopPmSampling(const void* context) {
  PmSampler* sampler = nullptr;
  {
    std::lock_guard<std::mutex> lock(pm_mu_);
    for (PmSession& s : pm_) {
      if (s.context == context) sampler = s.sampler.get();
    }
  }
  if (sampler == nullptr) return;
  // On the application's thread, inside cuCtxDestroy: wait for a poll in
  // progress, but not for one that may be waiting on this very thread.
  if (!sampler->StopWithin(std::chrono::milliseconds(500))) {
    LogOnce("gpucap: PM sampling of device " + std::to_string(sampler->device_index()) +
            " could not be stopped before its context was destroyed");
  }
}

std::vector<PmSampler*> Recorder::PmSamplers() {
  // Sessions are never removed, so the pointers outlive the lock.
  std::lock_guard<std::mutex> lock(pm_mu_);
  std::vector<PmSampler*> out;
  for (PmSession& s : pm_) out.push_back(s.sampler.get());
  return out;
}

void Recorder::StopPmSamplers() {
  for (PmSampler* pm : PmSamplers()) pm->Stop();
}

}  // namespace gpucap::recorder
