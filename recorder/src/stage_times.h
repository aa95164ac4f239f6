// How long each stage of CUPTI's changes of state took where pauses detach
// (the attach's settling, attributes, registering and subscribing, the kinds' switch,
// the flush, the finalize), so that a hold's tail can be laid at one
// stage's door: the re-attach's hold was 0.5-0.9 ms at p50 but 16-23 ms at
// p99 on an H100 (docs/recorder-detach.md), and the hold alone does not
// say which call inside it took the time.
//
// Any thread adds; Stats reads. Keeps the first kMaxSamples of each stage
// (a capture makes a few thousand cycles at most).
#ifndef GPUCAP_RECORDER_STAGE_TIMES_H_
#define GPUCAP_RECORDER_STAGE_TIMES_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace gpucap::recorder {

class StageTimes {
 public:
  enum Stage {
    kSettle,     // the last session's callback records handed over, a running completion waited for
    kAttributes, // CUPTI's attributes (the first CUPTI calls after a finalize)
    kRegister,   // its buffer callbacks
    kSubscribe,  // the subscriber, its resource callbacks, the other parts' callbacks (attached)
    kKindsOn,    // the activity kinds and API records switched on
    kKindsOff,   // switched off
    kFlush,      // cuptiActivityFlushAll
    kFinalize,   // cuptiFinalize
    kStages
  };

  // Times the scope it lives in into `stage` of `times` (null: nothing).
  class Scope {
   public:
    Scope(StageTimes* times, Stage stage) : times_(times), stage_(stage), t0_(std::chrono::steady_clock::now()) {}
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    StageTimes* const times_;
    const Stage stage_;
    const std::chrono::steady_clock::time_point t0_;
  };

  void Add(Stage stage, uint64_t ns);

  // cupti_stage_<name>_count and _ns_p50, _ns_p99, _ns_max for every stage
  // that ran.
  void Stats(std::vector<std::pair<std::string, uint64_t>>* extra) const;

  static constexpr size_t kMaxSamples = 1 << 14;

 private:
  mutable std::mutex mu_;
  std::vector<uint64_t> ns_[kStages];
  uint64_t counts_[kStages] = {};
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_STAGE_TIMES_H_
