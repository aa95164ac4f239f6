// The flight recorder's hang and slow-step triggers, decided from the steps
// that closed (step_log.h) and the time now; no clock and no thread of its
// own, so that its rules are tested with made-up times. The control thread
// feeds it every pass (Observe for each step drained, then Poll).
//
// A step is a push/pop range whose name matches the step pattern
// (--window-nvtx, an nvtx capture range's, else ProfilerStep#\d+), on one
// thread. Steps are compared within their *family*: the same thread and the
// same name with its digits left out (ProfilerStep#12 and ProfilerStep#13
// are one family; train#3 on the main thread and the data loader's step#3
// are two), so a pattern that matches two loops, or two threads that step,
// never mix their durations.
//
// - Hang: armed by any step's close; when no step closed for `hang_ns`,
//   Poll returns one "hang: ..." trigger and disarms until a step closes
//   again (one dump per hang). Disarm() (recording paused) waits for the
//   next close too, so a pause is never taken for a hang.
// - Slow step: a step longer than `slow_factor` times the median of the last
//   `slow_window` steps of its family (the mean of the two middle ones for
//   an even count) is slow; a family's first `slow_window` steps only fill
//   its history and never trigger. Every step, slow or not, then joins the
//   history. The dump of a slow step is due `settle_ns` after the step's
//   end, so that its GPU work has run and CUPTI has delivered it. At most
//   one slow-step dump per `min_interval_ns` of step end times: the others
//   are counted (suppressed()) and the next dump's trigger says how many
//   were left out before it.
#ifndef GPUCAP_RECORDER_STEP_WATCH_H_
#define GPUCAP_RECORDER_STEP_WATCH_H_

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpucap::recorder {

// How long a slow step's dump waits after the step's end: a step's host
// side ends before its last kernels run, and CUPTI delivers their records
// later still (the dump then flushes CUPTI's buffers).
inline constexpr uint64_t kSlowStepSettleNs = 1'000'000'000;

struct StepWatchOptions {
  uint64_t hang_ns = 0;          // 0: no hang trigger
  double slow_factor = 0;        // K; 0: no slow-step trigger
  uint32_t slow_window = 20;     // M, at least 1
  uint64_t min_interval_ns = 0;  // R: between two slow-step dumps
  uint64_t settle_ns = 0;        // a slow step's dump waits this long after its end
};

// One step that closed, as the control thread drains it.
struct StepEnd {
  uint32_t os_tid = 0;
  std::string name;
  uint64_t end_ns = 0;
  uint64_t duration_ns = 0;
};

class StepWatch {
 public:
  explicit StepWatch(const StepWatchOptions& options) : o_(options) {}

  void Observe(const StepEnd& step);
  // The dumps due at `now_ns`, their triggers in order: a hang's, then the
  // slow steps' whose settle time passed.
  std::vector<std::string> Poll(uint64_t now_ns);
  // The slow steps' dumps not yet due, for a recording that ends now.
  std::vector<std::string> TakePending();
  // No hang until a step closes again.
  void Disarm() { armed_ = false; }

  uint64_t slow_steps() const { return slow_steps_; }
  uint64_t suppressed() const { return suppressed_; }

  // "ProfilerStep#12" -> "ProfilerStep#": what a step's family is named by.
  static std::string Family(const std::string& name);

 private:
  struct Pending {
    uint64_t due_ns;
    std::string trigger;
  };
  double Median(const std::deque<uint64_t>& durations) const;

  StepWatchOptions o_;
  // Hang.
  bool armed_ = false;
  uint64_t last_end_ns_ = 0;
  StepEnd last_;
  // Slow steps: each family's last durations, oldest first.
  std::unordered_map<std::string, std::deque<uint64_t>> history_;
  bool dumped_slow_ = false;
  uint64_t last_slow_dump_end_ns_ = 0;
  uint64_t suppressed_ = 0;
  uint64_t suppressed_since_dump_ = 0;
  uint64_t slow_steps_ = 0;
  std::vector<Pending> pending_;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_STEP_WATCH_H_
