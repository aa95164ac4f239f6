#include "pm_sessions.h"

#include <chrono>
#include <cstdlib>

namespace gpucap::recorder {

PmSessions::PmSessions(const Config& config, PmSampler::Emit emit, void (*at_exit)(), OnceLog* log)
    : config_(config), emit_(std::move(emit)), at_exit_(at_exit), log_(log) {}

void PmSessions::Start(uint32_t device, const void* context) {
  PmSamplerOptions options;
  if (!config_.pm_metrics.empty()) options.metrics = SplitPmMetricList(config_.pm_metrics);
  options.interval_ns = config_.pm_interval_us * 1000;
  std::string why;
  // Counter ids: NVML's count up from 1; PM sampling's from 1000 per device.
  auto sampler = PmSampler::Start(device, options, emit_, 1000 + device * 100, &why);
  if (!sampler) {
    log_->Log("gpucap: PM sampling off on device " + std::to_string(device) + ": " + why);
    return;
  }
  for (const std::string& d : sampler->dropped()) log_->Log("gpucap: PM sampling: " + d);
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.push_back(Session{context, std::move(sampler)});
  }
  // CUPTI has just loaded libnvperf_host, whose static destructors now run
  // before any exit handler registered earlier, Stop's included. PM
  // sampling must end before them, so it gets an exit handler of its own.
  std::call_once(exit_hook_, [this] { atexit(at_exit_); });
}

void PmSessions::StopFor(const void* context) {
  PmSampler* sampler = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Session& s : sessions_) {
      if (s.context == context) sampler = s.sampler.get();
    }
  }
  if (sampler == nullptr) return;
  // On the application's thread, inside cuCtxDestroy: wait for a poll in
  // progress, but not for one that may be waiting on this very thread.
  if (!sampler->StopWithin(std::chrono::milliseconds(500))) {
    log_->Log("gpucap: PM sampling of device " + std::to_string(sampler->device_index()) +
              " could not be stopped before its context was destroyed");
  }
}

std::vector<PmSampler*> PmSessions::Samplers() {
  // Sessions are never removed, so the pointers outlive the lock.
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PmSampler*> out;
  for (Session& s : sessions_) out.push_back(s.sampler.get());
  return out;
}

void PmSessions::StopAll() {
  for (PmSampler* pm : Samplers()) pm->Stop();
}

void PmSessions::PollAll() {
  for (PmSampler* pm : Samplers()) pm->Poll();
}

void PmSessions::Stats(std::vector<std::pair<std::string, uint64_t>>* extra) {
  for (const PmSampler* pm : Samplers()) {
    PmSamplerStats ps = pm->stats();
    std::string d = "pm" + std::to_string(pm->device_index()) + "_";
    extra->emplace_back(d + "samples", ps.samples);
    extra->emplace_back(d + "lost_samples", ps.lost_samples);
    extra->emplace_back(d + "hw_overflows", ps.hw_overflow_flags);
  }
}

}  // namespace gpucap::recorder
