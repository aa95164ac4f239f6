// Power, clocks, temperature, fan and utilisation per GPU, read through NVML
// on a thread of its own at a fixed interval and written as counter samples
// in the CUPTI clock. CUPTI's ENVIRONMENT kind would give the same readings
// but CUPTI refuses it next to kernel tracing. NVML is loaded at run time, so
// the recorder still starts where it is missing.
#ifndef GPUCAP_RECORDER_NVML_SAMPLER_H_
#define GPUCAP_RECORDER_NVML_SAMPLER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpucap/format/model.h"

namespace gpucap::recorder {

class NvmlSampler {
 public:
  using Emit = std::function<void(std::vector<format::SmallMessage>)>;
  using Now = std::function<uint64_t()>;

  // nullptr, with the reason in *why_not, when NVML cannot be loaded.
  static std::unique_ptr<NvmlSampler> Start(uint32_t interval_ms, Now now, Emit emit,
                                            std::string* why_not);
  ~NvmlSampler();

  // Starts sampling the GPU with this CUDA ordinal and PCI bus id. Counter
  // ids count up from 1; other counter sources start elsewhere.
  void AddDevice(uint32_t cuda_ordinal, const std::string& pci_bus_id);
  void Stop();

  struct Api;

 private:
  struct Device;
  NvmlSampler(std::unique_ptr<Api> api, uint32_t interval_ms, Now now, Emit emit);
  void Run();
  void SampleAll();

  std::unique_ptr<Api> api_;
  uint32_t interval_ms_;
  Now now_;
  Emit emit_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool quit_ = false;
  std::vector<std::unique_ptr<Device>> devices_;
  uint32_t next_counter_id_ = 1;
  std::thread thread_;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_NVML_SAMPLER_H_
