// What the control thread writes about the devices and threads the
// callbacks met first (first_seen.h): each new device's facts
// (device_facts.h), with NVML's counters (--counters nvml) started for it,
// and each new thread's name from /proc. A context's callback only stamps
// the first device's arrival and asks for a report at the next pass, never
// its next one-second tick; how late and how long that description took go
// into the stats (issue 17 item 8: NVML's first sample came late).
#ifndef GPUCAP_RECORDER_FACTS_REPORTER_H_
#define GPUCAP_RECORDER_FACTS_REPORTER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "first_seen.h"
#include "nvml_sampler.h"
#include "once_log.h"
#include "gpucap/format/model.h"

namespace gpucap::recorder {

class FactsReporter {
 public:
  using Submit = std::function<void(std::vector<format::SmallMessage>)>;
  // `submit`: the writer's; `now`: CUPTI's clock.
  FactsReporter(Submit submit, NvmlSampler::Now now);

  // Where the callbacks note the ids they meet.
  FirstSeen* seen() { return &seen_; }

  // Starts NVML's sampler (before any device is described), or says once why not.
  void StartNvml(uint32_t interval_ms, OnceLog* log);
  void StopNvml();

  // A context's callback met a device first (any thread; never blocks).
  void DeviceSeen();
  // The control thread's: whether a device is waiting to be described.
  bool TakeDevicesPending() { return devices_pending_.exchange(false, std::memory_order_acq_rel); }
  void ReportDevices();
  void ReportThreads();

  // device_report_lag_ns, device_read_ns, nvml_add_ns, once a device was described.
  void Stats(std::vector<std::pair<std::string, uint64_t>>* extra) const;

 private:
  const Submit submit_;
  const NvmlSampler::Now now_;
  FirstSeen seen_;
  std::unique_ptr<NvmlSampler> nvml_;
  std::atomic<bool> devices_pending_{false};
  // The first device's context creation, and how late and how long its
  // description (and NVML's first readings) took.
  std::atomic<uint64_t> device_seen_ns_{0}, device_report_lag_ns_{0}, device_read_ns_{0}, nvml_add_ns_{0};
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_FACTS_REPORTER_H_
