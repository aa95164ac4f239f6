#include "nvml_sampler.h"

#include <dlfcn.h>

#include <chrono>

namespace gpucap::recorder {

// NVML's C ABI, declared here because the CUDA toolkit ships no nvml.h.
namespace nvml {
using Return = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using Device = struct DeviceSt*;
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
constexpr int kTemperatureGpu = 0;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;
}  // namespace nvml

struct NvmlSampler::Api {
  void* handle = nullptr;
  nvml::Return (*init)() = nullptr;
  nvml::Return (*shutdown)() = nullptr;
  nvml::Return (*by_pci)(const char*, nvml::Device*) = nullptr;
  nvml::Return (*by_index)(unsigned, nvml::Device*) = nullptr;
  nvml::Return (*power)(nvml::Device, unsigned*) = nullptr;
  nvml::Return (*power_limit)(nvml::Device, unsigned*) = nullptr;
  nvml::Return (*temperature)(nvml::Device, int, unsigned*) = nullptr;
  nvml::Return (*clock)(nvml::Device, int, unsigned*) = nullptr;
  nvml::Return (*fan)(nvml::Device, unsigned*) = nullptr;
  nvml::Return (*utilization)(nvml::Device, nvml::Utilization*) = nullptr;
  ~Api() {
    if (shutdown) shutdown();
    if (handle) dlclose(handle);
  }
};

// One reading of a GPU: counter name, unit, and how to read it.
struct Reading {
  const char* name;
  const char* unit;
  bool (*read)(const NvmlSampler::Api&, nvml::Device, double*);
};

namespace {

bool ReadPower(const NvmlSampler::Api& a, nvml::Device d, double* v) {
  unsigned mw;
  if (!a.power || a.power(d, &mw) != 0) return false;
  *v = mw / 1000.0;
  return true;
}
bool ReadPowerLimit(const NvmlSampler::Api& a, nvml::Device d, double* v) {
  unsigned mw;
  if (!a.power_limit || a.power_limit(d, &mw) != 0) return false;
  *v = mw / 1000.0;
  return true;
}
bool ReadTemperature(const NvmlSampler::Api& a, nvml::Device d, double* v) {
  unsigned c;
  if (!a.temperature || a.temperature(d, nvml::kTemperatureGpu, &c) != 0) return false;
  *v = c;
  return true;
}
bool ReadSmClock(const NvmlSampler::Api& a, nvml::Device d, double* v) {
  unsigned mhz;
  if (!a.clock || a.clock(d, nvml::kClockSm, &mhz) != 0) return false;
  *v = mhz;
  return true;
}
bool ReadMemClock(const NvmlSampler::Api& a, nvml::Device d, double* v) {
  unsigned mhz;
  if (!a.clock || a.clock(d, nvml::kClockMem, &mhz) != 0) return false;
  *v = mhz;
  return true;
}
bool ReadFan(const NvmlSampler::Api& a, nvml::Device d, double* v) {
  unsigned pct;
  if (!a.fan || a.fan(d, &pct) != 0) return false;
  *v = pct;
  return true;
}
bool ReadGpuUtil(const NvmlSampler::Api& a, nvml::Device d, double* v) {
  nvml::Utilization u;
  if (!a.utilization || a.utilization(d, &u) != 0) return false;
  *v = u.gpu;
  return true;
}
bool ReadMemUtil(const NvmlSampler::Api& a, nvml::Device d, double* v) {
  nvml::Utilization u;
  if (!a.utilization || a.utilization(d, &u) != 0) return false;
  *v = u.memory;
  return true;
}

constexpr Reading kReadings[] = {
    {"power", "W", ReadPower},
    {"power limit", "W", ReadPowerLimit},
    {"temperature", "C", ReadTemperature},
    {"SM clock", "MHz", ReadSmClock},
    {"memory clock", "MHz", ReadMemClock},
    {"fan", "%", ReadFan},
    {"GPU utilization", "%", ReadGpuUtil},
    {"memory utilization", "%", ReadMemUtil},
};

template <typename F>
void Resolve(void* h, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(h, name));
}

}  // namespace

struct NvmlSampler::Device {
  uint32_t ordinal;
  nvml::Device handle;
  // Counter id per reading; 0 for readings this GPU does not offer.
  uint32_t ids[sizeof(kReadings) / sizeof(kReadings[0])] = {};
};

std::unique_ptr<NvmlSampler> NvmlSampler::Start(uint32_t interval_ms, Now now, Emit emit,
                                                std::string* why_not) {
  auto api = std::make_unique<Api>();
  api->handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api->handle) {
    *why_not = std::string("cannot load libnvidia-ml.so.1: ") + dlerror();
    return nullptr;
  }
  Resolve(api->handle, "nvmlInit_v2", &api->init);
  Resolve(api->handle, "nvmlShutdown", &api->shutdown);
  Resolve(api->handle, "nvmlDeviceGetHandleByPciBusId_v2", &api->by_pci);
  Resolve(api->handle, "nvmlDeviceGetHandleByIndex_v2", &api->by_index);
  Resolve(api->handle, "nvmlDeviceGetPowerUsage", &api->power);
  Resolve(api->handle, "nvmlDeviceGetEnforcedPowerLimit", &api->power_limit);
  Resolve(api->handle, "nvmlDeviceGetTemperature", &api->temperature);
  Resolve(api->handle, "nvmlDeviceGetClockInfo", &api->clock);
  Resolve(api->handle, "nvmlDeviceGetFanSpeed", &api->fan);
  Resolve(api->handle, "nvmlDeviceGetUtilizationRates", &api->utilization);
  if (!api->init || api->init() != 0) {
    api->shutdown = nullptr;  // never initialised: nothing to shut down
    *why_not = "nvmlInit_v2 failed";
    return nullptr;
  }
  if (interval_ms == 0) interval_ms = 100;
  std::unique_ptr<NvmlSampler> s(new NvmlSampler(std::move(api), interval_ms, std::move(now), std::move(emit)));
  s->thread_ = std::thread([raw = s.get()] { raw->Run(); });
  return s;
}

NvmlSampler::NvmlSampler(std::unique_ptr<Api> api, uint32_t interval_ms, Now now, Emit emit)
    : api_(std::move(api)), interval_ms_(interval_ms), now_(std::move(now)), emit_(std::move(emit)) {}

NvmlSampler::~NvmlSampler() { Stop(); }

void NvmlSampler::AddDevice(uint32_t cuda_ordinal, const std::string& pci_bus_id) {
  // NVML numbers GPUs its own way; the PCI address names the same GPU CUDA means.
  nvml::Device handle = nullptr;
  bool found = api_->by_pci && !pci_bus_id.empty() && api_->by_pci(pci_bus_id.c_str(), &handle) == 0;
  if (!found && (!api_->by_index || api_->by_index(cuda_ordinal, &handle) != 0)) return;
  auto d = std::make_unique<Device>();
  d->ordinal = cuda_ordinal;
  d->handle = handle;
  // The reading that finds a counter offered is also its first sample: a
  // device's counters start when it is first seen, not one interval later.
  std::vector<format::SmallMessage> defs, first;
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < sizeof(kReadings) / sizeof(kReadings[0]); ++i) {
    double v;
    if (!kReadings[i].read(*api_, handle, &v)) continue;  // not offered by this GPU
    d->ids[i] = next_counter_id_++;
    defs.emplace_back(format::CounterDef{d->ids[i], kReadings[i].name, kReadings[i].unit, cuda_ordinal});
    first.emplace_back(format::CounterSample{d->ids[i], now_(), v});
  }
  devices_.push_back(std::move(d));
  for (auto& m : first) defs.push_back(std::move(m));  // definitions before samples
  emit_(std::move(defs));
}

void NvmlSampler::SampleAll() {
  std::vector<format::SmallMessage> samples;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& d : devices_) {
    for (size_t i = 0; i < sizeof(kReadings) / sizeof(kReadings[0]); ++i) {
      double v;
      if (d->ids[i] && kReadings[i].read(*api_, d->handle, &v)) {
        samples.emplace_back(format::CounterSample{d->ids[i], now_(), v});
      }
    }
  }
  if (!samples.empty()) emit_(std::move(samples));
}

void NvmlSampler::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!quit_) {
    cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [&] { return quit_; });
    if (quit_) break;
    lock.unlock();
    SampleAll();
    lock.lock();
  }
}

void NvmlSampler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (quit_) return;
    quit_ = true;
  }
  cv_.notify_all();
  // No last reading here: an NVML read can take many milliseconds, and this
  // runs on the path that closes the capture.
  if (thread_.joinable()) thread_.join();
}

}  // namespace gpucap::recorder
