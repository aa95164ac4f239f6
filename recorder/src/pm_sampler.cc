#include "pm_sampler.h"

#include <cuda.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <chrono>
#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

// The call sequence, in the order CUPTI wants it (CUPTI guide, PM sampling):
//   Start:  cuptiProfilerInitialize, cuptiProfilerDeviceSupported,
//           cuptiDeviceGetChipName, cuptiPmSamplingGetCounterAvailability,
//           cuptiProfilerHostInitialize, cuptiProfilerHostGetMetricProperties
//           (is a name known?), cuptiProfilerHostConfigAddMetrics,
//           cuptiProfilerHostGetConfigImageSize / GetConfigImage,
//           cuptiProfilerHostGetNumOfPasses (must be 1),
//           cuptiPmSamplingEnable, cuptiPmSamplingSetConfig,
//           cuptiPmSamplingGetCounterDataSize,
//           cuptiPmSamplingCounterDataImageInitialize, cuptiPmSamplingStart
//   Poll:   cuptiPmSamplingDecodeData, cuptiPmSamplingGetCounterDataInfo,
//           per sample cuptiPmSamplingCounterDataGetSampleInfo and
//           cuptiProfilerHostEvaluateToGpuValues, then
//           cuptiPmSamplingCounterDataImageInitialize to reuse the image
//   Stop:   cuptiPmSamplingStop, the Poll steps once more,
//           cuptiPmSamplingDisable, cuptiProfilerHostDeinitialize
// Everything is in libcupti; it loads libnvperf_host.so itself at run time
// (from its own directory or the library path), so nothing else is linked.

namespace gpucap::recorder {
namespace {

// Bounds one drain: a decode normally stops at END_OF_RECORDS; it goes on
// only while the image fills up, which already loses samples.
constexpr int kMaxDecodesPerPoll = 16;

// CUPTI's parameter structs: zeroed, with their size set.
#define GPUCAP_CUPTI_PARAMS(Type, name) \
  Type name{};                          \
  name.structSize = Type##_STRUCT_SIZE

std::string Describe(const char* call, CUptiResult r) {
  const char* text = nullptr;
  std::string out = call;
  out += ": ";
  if (cuptiGetResultString(r, &text) == CUPTI_SUCCESS && text) {
    out += text;
  } else {
    out += "CUPTI error " + std::to_string(static_cast<int>(r));
  }
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    out += " (GPU performance counters are restricted to admin users: run as root, or load the "
           "nvidia driver with NVreg_RestrictProfilingToAdminUsers=0)";
  }
  return out;
}

uint64_t CuptiNow() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

uint64_t SteadyNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

std::string SupportLevel(CUpti_Profiler_Support_Level level) {
  switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED:
      return "unsupported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED:
      return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED:
      return "supported";
    default:
      return "unknown";
  }
}

bool CheckDeviceSupported(uint32_t device_index, std::string* why) {
  CUdevice dev = 0;
  CUresult cr = cuDeviceGet(&dev, static_cast<int>(device_index));
  if (cr != CUDA_SUCCESS) {
    const char* name = nullptr;
    cuGetErrorName(cr, &name);
    *why = "cuDeviceGet(" + std::to_string(device_index) + "): " + (name ? name : "error") +
           " (CUDA not initialised yet, or no such device)";
    return false;
  }
  GPUCAP_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params, p);
  p.cuDevice = dev;
  p.api = CUPTI_PROFILER_PM_SAMPLING;
  if (CUptiResult r = cuptiProfilerDeviceSupported(&p); r != CUPTI_SUCCESS) {
    *why = Describe("cuptiProfilerDeviceSupported", r);
    return false;
  }
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return true;
  *why = "device " + std::to_string(device_index) + " does not support PM sampling:";
  const std::pair<const char*, CUpti_Profiler_Support_Level> parts[] = {
      {"architecture", p.architecture}, {"sli", p.sli}, {"vGPU", p.vGpu},
      {"confidential compute", p.confidentialCompute}, {"CMP", p.cmp}, {"WSL", p.wsl}};
  for (const auto& [what, level] : parts) {
    if (level == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) continue;
    why->append(" ").append(what).append(" ").append(SupportLevel(level)).append(";");
  }
  return false;
}

bool ChipName(uint32_t device_index, std::string* chip, std::string* why) {
  GPUCAP_CUPTI_PARAMS(CUpti_Device_GetChipName_Params, p);
  p.deviceIndex = device_index;
  if (CUptiResult r = cuptiDeviceGetChipName(&p); r != CUPTI_SUCCESS || !p.pChipName) {
    *why = Describe("cuptiDeviceGetChipName", r);
    return false;
  }
  *chip = p.pChipName;
  return true;
}

bool CounterAvailability(uint32_t device_index, std::vector<uint8_t>* image, std::string* why) {
  GPUCAP_CUPTI_PARAMS(CUpti_PmSampling_GetCounterAvailability_Params, p);
  p.deviceIndex = device_index;
  if (CUptiResult r = cuptiPmSamplingGetCounterAvailability(&p); r != CUPTI_SUCCESS) {
    *why = Describe("cuptiPmSamplingGetCounterAvailability (size)", r);
    return false;
  }
  image->assign(p.counterAvailabilityImageSize, 0);
  p.pCounterAvailabilityImage = image->data();
  if (CUptiResult r = cuptiPmSamplingGetCounterAvailability(&p); r != CUPTI_SUCCESS) {
    *why = Describe("cuptiPmSamplingGetCounterAvailability", r);
    return false;
  }
  return true;
}

bool InitProfiler(std::string* why) {
  // Loads the profiler libraries and hooks the driver; repeated calls (one
  // sampler per device) are what NVIDIA's and OpenXLA's samplers do too.
  // Never de-initialized: other devices' samplers may still use it.
  GPUCAP_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params, p);
  if (CUptiResult r = cuptiProfilerInitialize(&p); r != CUPTI_SUCCESS) {
    *why = Describe("cuptiProfilerInitialize", r);
    return false;
  }
  return true;
}

CUpti_Profiler_Host_Object* HostInit(const std::string& chip, const std::vector<uint8_t>& availability,
                                     std::string* why) {
  GPUCAP_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params, p);
  p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = availability.data();
  if (CUptiResult r = cuptiProfilerHostInitialize(&p); r != CUPTI_SUCCESS || !p.pHostObject) {
    *why = Describe("cuptiProfilerHostInitialize", r);
    return nullptr;
  }
  return p.pHostObject;
}

void HostDeinit(CUpti_Profiler_Host_Object* host) {
  if (!host) return;
  GPUCAP_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params, p);
  p.pHostObject = host;
  cuptiProfilerHostDeinitialize(&p);
}

CUptiResult AddMetrics(CUpti_Profiler_Host_Object* host, const std::vector<const char*>& names) {
  GPUCAP_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params, p);
  p.pHostObject = host;
  p.ppMetricNames = const_cast<const char**>(names.data());
  p.numMetrics = names.size();
  return cuptiProfilerHostConfigAddMetrics(&p);
}

}  // namespace

PmSampler::PmSampler(uint32_t device, Emit emit, uint32_t first_counter_id, uint64_t interval_ns)
    : device_(device),
      emit_(std::move(emit)),
      first_counter_id_(first_counter_id),
      interval_ns_(interval_ns) {}

PmSampler::~PmSampler() { Stop(); }

std::unique_ptr<PmSampler> PmSampler::Start(uint32_t device_index, const PmSamplerOptions& options,
                                            Emit emit, uint32_t first_counter_id,
                                            std::string* why_not) {
  std::string scratch;
  if (!why_not) why_not = &scratch;
  if (options.interval_ns == 0) {
    *why_not = "PM sampling interval must be above 0";
    return nullptr;
  }
  std::unique_ptr<PmSampler> s(
      new PmSampler(device_index, std::move(emit), first_counter_id, options.interval_ns));
  if (!s->Configure(options, why_not)) return nullptr;  // the destructor undoes what was done
  std::vector<format::SmallMessage> defs;
  for (size_t i = 0; i < s->metrics_.size(); ++i) {
    format::CounterDef d;
    d.id = first_counter_id + static_cast<uint32_t>(i);
    d.name = s->metrics_[i].label;
    d.unit = s->units_[i];
    d.device_id = device_index;
    defs.emplace_back(std::move(d));
  }
  if (s->emit_) s->emit_(std::move(defs));
  return s;
}

bool PmSampler::NewHostObject(std::string* why_not) {
  ReleaseHostObject();
  host_ = HostInit(chip_, availability_, why_not);
  return host_ != nullptr;
}

void PmSampler::ReleaseHostObject() {
  HostDeinit(host_);
  host_ = nullptr;
}

bool PmSampler::Configure(const PmSamplerOptions& options, std::string* why_not) {
  std::vector<PmMetricChoice> choices;
  if (!ParsePmMetricEntries(options.metrics, &choices, why_not)) return false;
  if (!InitProfiler(why_not)) return false;
  if (!CheckDeviceSupported(device_, why_not)) return false;
  if (!ChipName(device_, &chip_, why_not)) return false;
  if (!CounterAvailability(device_, &availability_, why_not)) return false;
  if (!NewHostObject(why_not)) return false;

  // A name is known when the host API can describe it; its dimension gives
  // the unit of tracks that are not percentages.
  std::unordered_map<std::string, std::string> dim_units;
  std::string odd_failure;  // a lookup that failed for another reason than an unknown name
  PmMetricResolution resolved = ResolvePmMetrics(choices, [&](const std::string& name) {
    GPUCAP_CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params, p);
    p.pHostObject = host_;
    p.pMetricName = name.c_str();
    CUptiResult r = cuptiProfilerHostGetMetricProperties(&p);
    if (r != CUPTI_SUCCESS) {
      if (r != CUPTI_ERROR_INVALID_METRIC_NAME && odd_failure.empty()) {
        odd_failure = Describe("cuptiProfilerHostGetMetricProperties", r) + " for " + name;
      }
      return false;
    }
    dim_units[name] = p.pDimUnit ? p.pDimUnit : "";
    return true;
  });
  dropped_ = resolved.unavailable;
  metrics_ = std::move(resolved.chosen);
  if (metrics_.empty()) {
    *why_not = "no requested PM sampling metric is known to chip " + chip_;
    for (const std::string& d : dropped_) *why_not += "; " + d;
    if (!odd_failure.empty()) *why_not += "; " + odd_failure;
    return false;
  }
  if (!BuildConfigImage(why_not)) return false;
  for (const PmMetric& m : metrics_) units_.push_back(PmMetricUnit(m.name, dim_units[m.name]));

  GPUCAP_CUPTI_PARAMS(CUpti_PmSampling_Enable_Params, enable);
  enable.deviceIndex = device_;
  if (CUptiResult r = cuptiPmSamplingEnable(&enable); r != CUPTI_SUCCESS) {
    *why_not = Describe("cuptiPmSamplingEnable", r);
    if (r == CUPTI_ERROR_INVALID_OPERATION) *why_not += " (PM sampling already enabled on this device)";
    return false;
  }
  sampling_ = enable.pPmSamplingObject;

  GPUCAP_CUPTI_PARAMS(CUpti_PmSampling_SetConfig_Params, config);
  config.pPmSamplingObject = sampling_;
  config.configSize = config_.size();
  config.pConfig = config_.data();
  config.hardwareBufferSize = options.hw_buffer_bytes;
  config.samplingInterval = interval_ns_;
  config.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  // KEEP_OLDEST: an overflow is reported (and ends sampling) instead of
  // silently overwriting samples we have not decoded yet.
  config.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  if (CUptiResult r = cuptiPmSamplingSetConfig(&config); r != CUPTI_SUCCESS) {
    *why_not = Describe("cuptiPmSamplingSetConfig", r);
    return false;
  }

  max_samples_ = options.max_samples_per_decode;
  if (max_samples_ == 0) {
    uint64_t two_seconds = 2'000'000'000 / interval_ns_ + 1;
    max_samples_ = static_cast<uint32_t>(std::max<uint64_t>(256, std::min<uint64_t>(two_seconds, 1u << 20)));
  }
  GPUCAP_CUPTI_PARAMS(CUpti_PmSampling_GetCounterDataSize_Params, size);
  size.pPmSamplingObject = sampling_;
  size.pMetricNames = metric_names_.data();
  size.numMetrics = metric_names_.size();
  size.maxSamples = max_samples_;
  if (CUptiResult r = cuptiPmSamplingGetCounterDataSize(&size); r != CUPTI_SUCCESS) {
    *why_not = Describe("cuptiPmSamplingGetCounterDataSize", r);
    return false;
  }
  image_.assign(size.counterDataSize, 0);
  if (!ResetImageLocked(why_not)) return false;
  values_.assign(metrics_.size(), 0.0);
  sequence_ = PmSampleSequence(interval_ns_);

  stats_.cupti_at_start_ns = CuptiNow();
  clock_ = PmClock(stats_.cupti_at_start_ns);
  GPUCAP_CUPTI_PARAMS(CUpti_PmSampling_Start_Params, start);
  start.pPmSamplingObject = sampling_;
  if (CUptiResult r = cuptiPmSamplingStart(&start); r != CUPTI_SUCCESS) {
    *why_not = Describe("cuptiPmSamplingStart", r);
    return false;
  }
  running_ = true;
  return true;
}

// Adds the metrics to a fresh host object and asks for its config image.
// Names the host API rejects are found one by one and dropped; a set that
// needs more than one pass loses its last metrics until it fits one.
bool PmSampler::BuildConfigImage(std::string* why_not) {
  for (;;) {
    metric_names_.clear();
    for (const PmMetric& m : metrics_) metric_names_.push_back(m.name.c_str());
    if (!NewHostObject(why_not)) return false;
    if (CUptiResult r = AddMetrics(host_, metric_names_); r != CUPTI_SUCCESS) {
      std::vector<PmMetric> accepted;
      for (const PmMetric& m : metrics_) {
        if (!NewHostObject(why_not)) return false;
        CUptiResult one = AddMetrics(host_, {m.name.c_str()});
        if (one == CUPTI_SUCCESS) {
          accepted.push_back(m);
        } else {
          dropped_.push_back(m.label + " (" + m.name + "): " +
                             Describe("cuptiProfilerHostConfigAddMetrics", one));
        }
      }
      if (accepted.size() == metrics_.size() || accepted.empty()) {
        *why_not = Describe("cuptiProfilerHostConfigAddMetrics", r);
        return false;
      }
      metrics_ = std::move(accepted);
      continue;
    }
    GPUCAP_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params, size);
    size.pHostObject = host_;
    if (CUptiResult r = cuptiProfilerHostGetConfigImageSize(&size); r != CUPTI_SUCCESS) {
      *why_not = Describe("cuptiProfilerHostGetConfigImageSize", r);
      return false;
    }
    config_.assign(size.configImageSize, 0);
    GPUCAP_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params, image);
    image.pHostObject = host_;
    image.configImageSize = config_.size();
    image.pConfigImage = config_.data();
    if (CUptiResult r = cuptiProfilerHostGetConfigImage(&image); r != CUPTI_SUCCESS) {
      *why_not = Describe("cuptiProfilerHostGetConfigImage", r);
      return false;
    }
    GPUCAP_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params, passes);
    passes.configImageSize = config_.size();
    passes.pConfigImage = config_.data();
    if (CUptiResult r = cuptiProfilerHostGetNumOfPasses(&passes); r != CUPTI_SUCCESS) {
      *why_not = Describe("cuptiProfilerHostGetNumOfPasses", r);
      return false;
    }
    if (passes.numOfPasses == 1) return true;
    if (passes.numOfPasses == 0 || metrics_.size() == 1) {
      *why_not = "the PM sampling metric set needs " + std::to_string(passes.numOfPasses) +
                 " passes (" + metrics_.front().name + "); PM sampling takes exactly one";
      return false;
    }
    dropped_.push_back(metrics_.back().label + " (" + metrics_.back().name + "): the set needs " +
                       std::to_string(passes.numOfPasses) + " passes with it; PM sampling takes one");
    metrics_.pop_back();
  }
}

bool PmSampler::ResetImageLocked(std::string* why) {
  GPUCAP_CUPTI_PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params, p);
  p.pPmSamplingObject = sampling_;
  p.counterDataSize = image_.size();
  p.pCounterData = image_.data();
  if (CUptiResult r = cuptiPmSamplingCounterDataImageInitialize(&p); r != CUPTI_SUCCESS) {
    *why = Describe("cuptiPmSamplingCounterDataImageInitialize", r);
    return false;
  }
  return true;
}

void PmSampler::FailLocked(std::string why) {
  if (error_.empty()) error_ = std::move(why);
  if (running_) {
    // Disabling waits for Stop(): see the note there.
    GPUCAP_CUPTI_PARAMS(CUpti_PmSampling_Stop_Params, p);
    p.pPmSamplingObject = sampling_;
    cuptiPmSamplingStop(&p);
    running_ = false;
  }
}

bool PmSampler::DecodeLocked(std::vector<format::SmallMessage>* out) {
  // Read before decoding: every sample this decode returns started earlier.
  const uint64_t cupti_now = CuptiNow();
  for (int step = 0; step < kMaxDecodesPerPoll; ++step) {
    GPUCAP_CUPTI_PARAMS(CUpti_PmSampling_DecodeData_Params, d);
    d.pPmSamplingObject = sampling_;
    d.pCounterDataImage = image_.data();
    d.counterDataImageSize = image_.size();
    CUptiResult r = cuptiPmSamplingDecodeData(&d);
    ++stats_.decodes;
    if (r == CUPTI_ERROR_OUT_OF_MEMORY) {
      // In KEEP_OLDEST mode this is the hardware buffer overflowing, and
      // every later decode fails the same way: sampling is over.
      FailLocked("PM sampling hardware buffer overflowed (poll more often, sample less often or "
                 "raise the hardware buffer size); sampling stopped");
      return false;
    }
    if (r != CUPTI_SUCCESS) {
      FailLocked(Describe("cuptiPmSamplingDecodeData", r));
      return false;
    }
    if (d.overflow) ++stats_.hw_overflow_flags;

    GPUCAP_CUPTI_PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params, info);
    info.pCounterDataImage = image_.data();
    info.counterDataImageSize = image_.size();
    if (r = cuptiPmSamplingGetCounterDataInfo(&info); r != CUPTI_SUCCESS) {
      FailLocked(Describe("cuptiPmSamplingGetCounterDataInfo", r));
      return false;
    }
    for (size_t i = 0; i < info.numCompletedSamples; ++i) {
      GPUCAP_CUPTI_PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params, s);
      s.pPmSamplingObject = sampling_;
      s.pCounterDataImage = image_.data();
      s.counterDataImageSize = image_.size();
      s.sampleIndex = i;
      if (r = cuptiPmSamplingCounterDataGetSampleInfo(&s); r != CUPTI_SUCCESS) {
        FailLocked(Describe("cuptiPmSamplingCounterDataGetSampleInfo", r));
        return false;
      }
      if (sequence_.Add(s.startTimestamp, s.endTimestamp) != PmSampleSequence::Verdict::kKeep) continue;
      clock_.Observe(s.startTimestamp, cupti_now);

      GPUCAP_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params, e);
      e.pHostObject = host_;
      e.pCounterDataImage = image_.data();
      e.counterDataImageSize = image_.size();
      e.rangeIndex = i;
      e.ppMetricNames = metric_names_.data();
      e.numMetrics = metric_names_.size();
      e.pMetricValues = values_.data();
      if (r = cuptiProfilerHostEvaluateToGpuValues(&e); r != CUPTI_SUCCESS) {
        FailLocked(Describe("cuptiProfilerHostEvaluateToGpuValues", r));
        return false;
      }
      const uint64_t ts = clock_.ToCupti(s.startTimestamp);
      for (size_t k = 0; k < values_.size(); ++k) {
        if (!std::isfinite(values_[k])) {
          ++stats_.non_finite_values;  // would make the JSON trace invalid
          continue;
        }
        out->emplace_back(format::CounterSample{first_counter_id_ + static_cast<uint32_t>(k), ts, values_[k]});
      }
    }
    // The image is reused from empty after every decode that put anything
    // in it: samples carry on across decodes (each starts where the last
    // one ended), and a sample still being written stays in the hardware
    // buffer, so nothing should be lost; partial_at_reset says if it was.
    if (info.numPopulatedSamples > 0) {
      if (info.numPopulatedSamples > info.numCompletedSamples) {
        stats_.partial_at_reset += info.numPopulatedSamples - info.numCompletedSamples;
      }
      std::string why;
      if (!ResetImageLocked(&why)) {
        FailLocked(why);
        return false;
      }
    }
    if (d.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) return true;
    ++stats_.image_full;
  }
  return true;
}

void PmSampler::Poll() {
  std::vector<format::SmallMessage> out;
  {
    std::lock_guard<std::timed_mutex> lock(mu_);
    if (!running_) return;
    const uint64_t t0 = SteadyNs();
    DecodeLocked(&out);
    ++stats_.polls;
    stats_.poll_ns += SteadyNs() - t0;
  }
  // Outside the lock: the sink may take its time without holding up Stop.
  if (!out.empty() && emit_) emit_(std::move(out));
}

void PmSampler::Stop() {
  std::unique_lock<std::timed_mutex> lock(mu_);
  StopLocked(&lock);
}

bool PmSampler::StopWithin(std::chrono::milliseconds timeout) {
  // A poll holds mu_ for a decode, a few milliseconds. Waiting longer than
  // that means the poll is stuck, perhaps behind the caller itself.
  std::unique_lock<std::timed_mutex> lock(mu_, timeout);
  if (!lock.owns_lock()) return false;
  StopLocked(&lock);
  return true;
}

void PmSampler::StopLocked(std::unique_lock<std::timed_mutex>* lock) {
  std::vector<format::SmallMessage> out;
  if (stopped_) return;
  stopped_ = true;
  if (running_) {
    const uint64_t t0 = SteadyNs();
    GPUCAP_CUPTI_PARAMS(CUpti_PmSampling_Stop_Params, p);
    p.pPmSamplingObject = sampling_;
    CUptiResult r = cuptiPmSamplingStop(&p);
    running_ = false;
    if (r != CUPTI_SUCCESS) {
      error_ = Describe("cuptiPmSamplingStop", r);
    } else {
      DecodeLocked(&out);  // what the GPU sampled since the last poll
    }
    stats_.poll_ns += SteadyNs() - t0;
  }
  if (sampling_) {
    // After a failure too: this frees the hardware buffer.
    GPUCAP_CUPTI_PARAMS(CUpti_PmSampling_Disable_Params, p);
    p.pPmSamplingObject = sampling_;
    if (CUptiResult r = cuptiPmSamplingDisable(&p); r != CUPTI_SUCCESS && error_.empty()) {
      error_ = Describe("cuptiPmSamplingDisable", r);
    }
    sampling_ = nullptr;
  }
  ReleaseHostObject();
  lock->unlock();
  if (!out.empty() && emit_) emit_(std::move(out));
}

bool PmSampler::running() const {
  std::lock_guard<std::timed_mutex> lock(mu_);
  return running_;
}

std::string PmSampler::error() const {
  std::lock_guard<std::timed_mutex> lock(mu_);
  return error_;
}

PmSamplerStats PmSampler::stats() const {
  std::lock_guard<std::timed_mutex> lock(mu_);
  PmSamplerStats s = stats_;
  s.samples = sequence_.kept();
  s.empty_samples = sequence_.empty();
  s.invalid_samples = sequence_.invalid();
  s.lost_samples = sequence_.lost();
  s.first_raw_start_ns = sequence_.first_start();
  s.last_raw_end_ns = sequence_.last_end();
  return s;
}

std::string PmSampler::clock_description() const {
  std::lock_guard<std::timed_mutex> lock(mu_);
  return clock_.Describe();
}

bool ListPmBaseMetrics(uint32_t device_index, std::vector<std::string>* names, std::string* why) {
  names->clear();
  std::string chip;
  std::vector<uint8_t> availability;
  if (!InitProfiler(why) || !ChipName(device_index, &chip, why) ||
      !CounterAvailability(device_index, &availability, why)) {
    return false;
  }
  CUpti_Profiler_Host_Object* host = HostInit(chip, availability, why);
  if (!host) return false;
  bool ok = true;
  for (int type = 0; type < CUPTI_METRIC_TYPE__COUNT; ++type) {
    GPUCAP_CUPTI_PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params, p);
    p.pHostObject = host;
    p.metricType = static_cast<CUpti_MetricType>(type);
    if (CUptiResult r = cuptiProfilerHostGetBaseMetrics(&p); r != CUPTI_SUCCESS) {
      *why = Describe("cuptiProfilerHostGetBaseMetrics", r);
      ok = false;
      break;
    }
    for (size_t i = 0; i < p.numMetrics; ++i) names->emplace_back(p.ppMetricNames[i]);
  }
  HostDeinit(host);
  return ok;
}

}  // namespace gpucap::recorder
