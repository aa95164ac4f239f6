#include "facts_reporter.h"

#include <unistd.h>

#include "device_facts.h"
#include "proc_text.h"

namespace gpucap::recorder {

FactsReporter::FactsReporter(Submit submit, NvmlSampler::Now now)
    : submit_(std::move(submit)), now_(std::move(now)) {}

void FactsReporter::StartNvml(uint32_t interval_ms, OnceLog* log) {
  std::string why;
  nvml_ = NvmlSampler::Start(interval_ms, now_, submit_, &why);
  if (!nvml_) log->Log("gpucap: NVML counters off: " + why);
}

void FactsReporter::StopNvml() {
  if (nvml_) nvml_->Stop();
}

void FactsReporter::DeviceSeen() {
  uint64_t zero = 0;
  device_seen_ns_.compare_exchange_strong(zero, now_());
  devices_pending_.store(true, std::memory_order_release);
}

void FactsReporter::ReportDevices() {
  std::vector<uint32_t> devices = seen_.TakeNewDevices();
  std::vector<format::SmallMessage> out;
  // When the first device is described, and how long that takes, against
  // its context's creation (issue 17 item 8: NVML's first sample came late).
  uint64_t began = devices.empty() ? 0 : now_();
  for (uint32_t d : devices) {
    auto info = ReadDevice(d);
    if (!info) continue;
    uint64_t read = now_();
    if (nvml_) nvml_->AddDevice(d, info->pci_bus_id);
    uint64_t added = now_();
    uint64_t seen = device_seen_ns_.load();
    if (device_report_lag_ns_.load() == 0 && seen) {
      device_report_lag_ns_.store(began > seen ? began - seen : 1);
      device_read_ns_.store(read - began);
      nvml_add_ns_.store(added - read);
    }
    out.emplace_back(std::move(*info));
  }
  if (!out.empty()) submit_(std::move(out));
}

void FactsReporter::ReportThreads() {
  std::vector<uint32_t> tids = seen_.TakeNewThreads();
  std::vector<format::SmallMessage> out;
  uint32_t pid = static_cast<uint32_t>(getpid());
  for (uint32_t tid : tids) {
    format::ThreadInfo t;
    t.pid = pid;
    t.cupti_thread_id = tid;
    t.os_tid = tid;
    t.name = ThreadName(tid);
    out.emplace_back(std::move(t));
  }
  if (!out.empty()) submit_(std::move(out));
}

void FactsReporter::Stats(std::vector<std::pair<std::string, uint64_t>>* extra) const {
  if (device_report_lag_ns_.load()) {
    extra->emplace_back("device_report_lag_ns", device_report_lag_ns_.load());
    extra->emplace_back("device_read_ns", device_read_ns_.load());
    extra->emplace_back("nvml_add_ns", nvml_add_ns_.load());
  }
}

}  // namespace gpucap::recorder
