// NVTX and API ranges into the capture, on the application's thread that
// made them: the thread names itself on its first range (short-lived
// threads are gone by the time the control thread could read /proc), ranges
// whose names match --window-nvtx open and close window marks, and the range
// goes into the thread's own records (range_log.h) in that order, so the
// marks keep their place among the thread's ranges. The messages are left
// to the control thread.
//
// And, for the flight recorder's hang and slow-step triggers, hands each
// push/pop step it sees close (the --window-nvtx ranges, else the default
// step pattern) to the step log (step_log.h).
//
// Also hands out window ids, shared by --window-nvtx, the C API's windows
// and the cudaProfilerApi capture ranges, so that one's close never ends
// another's window.
#ifndef GPUCAP_RECORDER_RANGE_RECORDER_H_
#define GPUCAP_RECORDER_RANGE_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "event_log.h"
#include "first_seen.h"
#include "range_log.h"
#include "range_matcher.h"
#include "step_log.h"

namespace gpucap::recorder {

class RangeRecorder {
 public:
  // `window_nvtx`: --window-nvtx's regex, or empty; one that does not
  // compile is said once on stderr and ignored. `events` takes a thread's
  // self-announcement; `seen` says whether the thread is new. `steps`: where
  // closed steps go (nullptr: no step watch); the steps are the window
  // ranges, or `default_steps` where there are none.
  RangeRecorder(RangeLog* ranges, EventLog* events, FirstSeen* seen, const std::string& window_nvtx,
                StepLog* steps = nullptr, const std::string& default_steps = "");

  // One range record: the name is copied once, into the calling thread's
  // records. `cache`: the caller's thread_local RangeLog::WriterCache, or
  // nullptr.
  void Add(const RangeFields& f, std::string_view name, const std::vector<format::ExtPayload>* ext,
           RangeLog::WriterCache* cache);

  uint64_t NextWindowId() { return next_window_id_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void AnnounceThread(RangeLog::Writer* w, uint32_t os_tid);
  void AddWindowMarks(RangeLog::Writer* w, const RangeFields& f, std::string_view name);

  RangeLog* const ranges_;
  EventLog* const events_;
  FirstSeen* const seen_;
  std::unique_ptr<RangeMatcher> window_names_;  // --window-nvtx
  StepLog* const steps_;
  std::unique_ptr<RangeMatcher> default_steps_;  // with steps_ and no window_names_
  // The names AddWindowMarks looks at: window_names_, else default_steps_,
  // else none (one test on every range, as before there were steps).
  const RangeMatcher* names_ = nullptr;
  // A push's entry in open_windows: its window id, or'ed with kStepBit when
  // it opened a step.
  static constexpr uint64_t kStepBit = 1ull << 62;
  std::atomic<uint64_t> next_window_id_{1};
  // Start/end ranges that opened a --window-nvtx window, by range id, until
  // their end (from any thread). Their marks' ids carry kStartedWindowBit,
  // apart from push/pop and API window ids.
  static constexpr uint64_t kStartedWindowBit = 1ull << 63;
  std::mutex started_windows_mu_;
  std::unordered_set<uint64_t> started_windows_;
  std::atomic<uint64_t> started_window_count_{0};
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_RANGE_RECORDER_H_
