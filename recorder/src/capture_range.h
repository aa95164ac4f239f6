// Capture ranges: the recorder stays paused and records only inside the
// ranges the user names (--capture-range nvtx:REGEX or cudaProfilerApi, as
// nsys names them), optionally one in N of them (--sample N) or the next K
// after a trigger file appears (--trigger-file, --trigger-windows).
//
// CaptureGate is the decision alone: the NVTX hooks and the profiler-API
// callbacks tell it where ranges open and close, and it answers whether the
// recorder must start or stop recording there. It touches no CUDA, so its
// rules are tested without a GPU; the recorder applies its decisions
// (capture_switch.h) on the thread that opened or closed the range, so that a
// sampled range's first launch is already recorded and the next range's
// first launch is not.
#ifndef GPUCAP_RECORDER_CAPTURE_RANGE_H_
#define GPUCAP_RECORDER_CAPTURE_RANGE_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "gpucap/format/recording_state.h"
#include "range_sample.h"

namespace gpucap::recorder {

struct CaptureRangeSpec {
  enum class Source { kNone, kNvtx, kProfilerApi };
  Source source = Source::kNone;
  std::string pattern;  // kNvtx: the regex range names are searched with
  // Ranges recorded before the recorder stops for good; 0: never stops
  // (--capture-range-end repeat). "stop" is 1.
  uint32_t end_after = 1;
  bool end_given = false;     // --capture-range-end was given
  uint32_t sample_every = 0;  // --sample N: one matching range in N (0, 1: each)
  // --sample-random[=SEED]: the one in each block of N chosen at random
  // (range_sample.h); none: the last of each block.
  std::optional<uint64_t> sample_seed;
  std::string trigger_file;   // --trigger-file: record only after it appears
  uint32_t trigger_windows = 1;
  // Start recording at the end of the range before a recorded one (and the
  // builder cuts at the window marks) instead of at the range's own start.
  bool arm_early = false;

  bool enabled() const { return source != Source::kNone; }
};

// "nvtx:REGEX" or "cudaProfilerApi"; false and *error when neither.
bool ParseCaptureRange(const std::string& text, CaptureRangeSpec* spec, std::string* error);
// "stop", "repeat" or "repeat:N" (N >= 1); false and *error otherwise.
bool ParseCaptureRangeEnd(const std::string& text, CaptureRangeSpec* spec, std::string* error);

class CaptureGate {
 public:
  enum class Action { kNone, kRecord, kPause, kPauseAndStop };
  struct Decision {
    Action action = Action::kNone;
    format::RecordingState state = format::RecordingState::kPaused;
    std::string why;
    std::string label;  // the range's name (profiler API: "cudaProfilerApi#k")
    // With kNone: the next matching range will record (the range that
    // opened is the one before a --sample pick), so CUPTI may be attached
    // and switched on ahead of it, off the application's thread.
    bool ahead = false;
    uint64_t ranges_seen = 0;  // with ahead: the count of matching ranges when it was decided
    uint64_t range_index = 0;  // with kRecord from Open: the range's number among those seen
  };
  // Where a range is: push/pop ranges by thread, domain and depth; start/end
  // ranges by their id (any thread may end them).
  struct RangeKey {
    uint32_t tid = 0;
    uint64_t domain = 0;
    int depth = 0;
    uint64_t start_id = 0;  // non-zero: a start/end range
    bool operator==(const RangeKey&) const = default;
  };

  explicit CaptureGate(CaptureRangeSpec spec);

  // What the recorder does before anything opens.
  Decision Initial();
  // --delay: until Release(), ranges that open are neither counted nor
  // recorded (sampling counts from the delay's end), and a trigger waits.
  // Hold returns the pause it asks for; Release what Initial() would.
  Decision Hold(const std::string& why);
  Decision Release();
  // A range whose name matched opened / some range closed. Close is called
  // for every pop while the gate is active on some range and must be cheap
  // otherwise: MayClose() says whether it can matter.
  Decision Open(const RangeKey& key, const std::string& name);
  bool MayClose() const { return active_.load(std::memory_order_acquire); }
  Decision Close(const RangeKey& key);
  // The trigger file appeared: the next `ranges` matching ranges are recorded.
  Decision Arm(uint32_t ranges, const std::string& why);
  // The recorder could not start recording the range Open just answered
  // kRecord for (CUPTI's switch waits for the entry gate, which may not
  // close in its bound): the range is let go unrecorded, its close is then
  // nothing, a trigger's turn is given back and a sample's number is not
  // spent (the pick itself is lost: the next is the next block's). Counted.
  // `index`: the Decision's range_index (every cudaProfilerApi range has
  // the same key).
  void Dropped(const RangeKey& key, uint64_t index);

  const CaptureRangeSpec& spec() const { return spec_; }
  // Armed by a trigger and not yet done with it (the file stays until then).
  bool trigger_busy() const;
  uint64_t ranges_seen() const;
  uint64_t ranges_recorded() const;
  uint64_t ranges_dropped() const;
  bool finished() const;

 private:
  bool WillRecord(uint64_t index) const;  // under mu_
  Decision ArmFor(uint64_t index, const char* after);  // under mu_
  Decision InitialLocked();                            // under mu_

  const CaptureRangeSpec spec_;
  const RangeSample sample_;
  mutable std::mutex mu_;
  std::atomic<bool> active_{false};  // a recorded (or watched) range is open
  bool watching_ = false;  // the open range is not recorded, only the one after it
  RangeKey active_key_;
  uint64_t active_index_ = 0;  // the recorded range's number (Dropped)
  std::string active_name_;
  uint64_t seen_ = 0;       // matching ranges opened outside a recorded one
  uint64_t recorded_ = 0;   // ranges recorded to their end
  uint64_t sampled_ = 0;
  uint64_t dropped_ = 0;    // Dropped
  uint32_t armed_ = 0;      // trigger: ranges still to record
  bool early_ = false;      // recording already, armed early for range seen_
  bool active_trigger_ = false;  // the open range was the trigger's
  bool finished_ = false;   // end_after reached: nothing more is recorded
  bool held_ = false;       // inside --delay: ranges are not looked at
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CAPTURE_RANGE_H_
