// PM sampling of one GPU through CUPTI (cupti_pmsampling.h), handed out as
// counter tracks: CounterDef messages once, then CounterSample messages.
//
// The GPU writes raw samples into a hardware buffer on its own; nothing runs
// on the application's threads. Poll, called by the recorder's control
// thread, drains that buffer into a counter-data image, evaluates each new
// sample to metric values with the profiler host API and emits them.
//
// Decoded samples, not counter-data images, go into the capture: a sample
// is a few numbers (one CounterSample of 24 bytes per metric), while an
// image is a chip- and CUPTI-version-specific blob sized for the largest
// batch and mostly empty; and only the profiler host API (libcupti with
// libnvperf_host) can evaluate an image, which the builder must not link.
// Evaluating in the process costs the control thread a few microseconds per
// sample (the pm_probe measures it), never the application.
//
// Errors are values. Start says why sampling cannot run; a CUPTI failure
// later stops sampling (error() says why) and the process carries on.
// Start, Poll, Stop and the accessors may be called from any thread, CUPTI's
// resource callbacks included (Start is called from the context-created
// one, StopWithin from context-destroy-starting); they serialize on a mutex.
#ifndef GPUCAP_RECORDER_PM_SAMPLER_H_
#define GPUCAP_RECORDER_PM_SAMPLER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpucap/format/model.h"
#include "pm_metrics.h"
#include "pm_timeline.h"

struct CUpti_PmSampling_Object;
struct CUpti_Profiler_Host_Object;

namespace gpucap::recorder {

struct PmSamplerOptions {
  // Entries "[label=]metric[|alternative...]" (pm_metrics.h); empty: the defaults.
  std::vector<std::string> metrics;
  // Time between samples (trigger mode GPU_TIME_INTERVAL: a fixed-frequency
  // clock, not the variable SYS clock).
  uint64_t interval_ns = 1'000'000;
  // Raw samples wait here between polls; it overflowing ends sampling.
  size_t hw_buffer_bytes = size_t{512} << 20;
  // Samples one decode can hold. Must cover everything that accumulates
  // between two polls: CUPTI loses samples after a decode that fills the
  // image. 0: enough for 2 s of samples, at least 256.
  uint32_t max_samples_per_decode = 0;
};

struct PmSamplerStats {
  uint64_t samples = 0;          // kept, and emitted
  uint64_t empty_samples = 0;    // zero-length, dropped
  uint64_t invalid_samples = 0;  // zero or backwards timestamps, dropped
  uint64_t lost_samples = 0;     // intervals missing between kept samples
  uint64_t non_finite_values = 0;
  uint64_t decodes = 0;
  uint64_t image_full = 0;         // decodes that stopped because the image was full
  uint64_t hw_overflow_flags = 0;  // decodes that said the hardware buffer overflowed
  uint64_t partial_at_reset = 0;   // populated but not completed samples thrown away at a reset
  uint64_t polls = 0;
  uint64_t poll_ns = 0;            // time spent in Poll and the final decode
  uint64_t first_raw_start_ns = 0;  // as CUPTI reported them, before clock mapping
  uint64_t last_raw_end_ns = 0;
  uint64_t cupti_at_start_ns = 0;  // cuptiGetTimestamp just before cuptiPmSamplingStart
};

class PmSampler {
 public:
  using Emit = std::function<void(std::vector<format::SmallMessage>)>;

  // Configures and starts sampling on CUDA device `device_index` (an ordinal
  // as the process sees it) and emits one CounterDef per accepted metric,
  // numbered from `first_counter_id`, before returning. Needs cuInit done
  // and a context on the device, with the device idle: the recorder calls
  // it from the context-created callback, because from another thread
  // while kernels ran, cuptiPmSamplingSetConfig failed. Returns nullptr and
  // the reason in *why_not when PM sampling cannot run: not permitted,
  // unsupported device, no requested metric known to the chip, the metrics
  // not fitting one pass, a session already running on the device.
  static std::unique_ptr<PmSampler> Start(uint32_t device_index, const PmSamplerOptions& options,
                                          Emit emit, uint32_t first_counter_id,
                                          std::string* why_not);
  ~PmSampler();  // Stop()

  PmSampler(const PmSampler&) = delete;
  PmSampler& operator=(const PmSampler&) = delete;

  // Decodes what the GPU sampled since the last call and emits it. Call
  // every 100-500 ms, often enough that the samples in between fit
  // max_samples_per_decode and the hardware buffer.
  void Poll();

  // Stops sampling, emits what is left and releases the device. Idempotent.
  // Must run before the context sampling was configured in is destroyed,
  // and before libnvperf_host's static objects are: CUPTI loads that
  // library on the first PM call, so its destructors run before atexit
  // handlers registered earlier (on the H200, Disable then double-freed).
  // Activity tracing keeps working after it (pm_probe checks).
  void Stop();
  // Stop, unless a poll holds the sampler longer than `timeout`; then false
  // and nothing is done. For callers that must not wait on a stuck poll.
  bool StopWithin(std::chrono::milliseconds timeout);

  bool running() const;
  // Why sampling ended early; empty while it runs or after a clean Stop.
  std::string error() const;
  PmSamplerStats stats() const;
  std::string clock_description() const;

  uint32_t device_index() const { return device_; }
  const std::string& chip() const { return chip_; }
  const std::vector<PmMetric>& metrics() const { return metrics_; }
  const std::vector<std::string>& units() const { return units_; }
  // Requested metrics that were left out, one line each with the reason.
  const std::vector<std::string>& dropped() const { return dropped_; }
  size_t counter_image_bytes() const { return image_.size(); }
  uint32_t max_samples_per_decode() const { return max_samples_; }
  uint64_t interval_ns() const { return interval_ns_; }

 private:
  PmSampler(uint32_t device, Emit emit, uint32_t first_counter_id, uint64_t interval_ns);
  bool Configure(const PmSamplerOptions& options, std::string* why_not);
  bool BuildConfigImage(std::string* why_not);
  bool NewHostObject(std::string* why_not);
  void ReleaseHostObject();
  // Decodes until the hardware buffer is drained; false after a failure
  // (error_ set, sampling stopped).
  bool DecodeLocked(std::vector<format::SmallMessage>* out);
  bool ResetImageLocked(std::string* why);
  void FailLocked(std::string why);
  // Stops and unlocks *lock (held on mu_) before emitting what was left.
  void StopLocked(std::unique_lock<std::timed_mutex>* lock);

  const uint32_t device_;
  const Emit emit_;
  const uint32_t first_counter_id_;
  const uint64_t interval_ns_;

  std::string chip_;
  std::vector<uint8_t> availability_;
  std::vector<PmMetric> metrics_;
  std::vector<const char*> metric_names_;  // into metrics_, for CUPTI
  std::vector<std::string> units_;
  std::vector<std::string> dropped_;
  std::vector<uint8_t> config_;
  uint32_t max_samples_ = 0;

  mutable std::timed_mutex mu_;  // timed: StopWithin
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_PmSampling_Object* sampling_ = nullptr;
  std::vector<uint8_t> image_;
  std::vector<double> values_;
  bool running_ = false;  // between cuptiPmSamplingStart and Stop
  bool stopped_ = false;  // Stop() ran
  std::string error_;
  PmClock clock_{0};
  PmSampleSequence sequence_{0};
  PmSamplerStats stats_;
};

// Every base metric the chip of `device_index` offers for PM sampling
// (names without rollup or submetric: "sm__cycles_active", ...), for
// finding the right names on a new chip. False with *why on failure.
bool ListPmBaseMetrics(uint32_t device_index, std::vector<std::string>* names, std::string* why);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_PM_SAMPLER_H_
