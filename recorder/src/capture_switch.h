// Capture ranges applied (capture_range.h decides; this switches): the
// recorder records only inside the ranges the user names, and this part
// turns recording on and off where they open and close, tells the capture
// when and why it recorded, and watches the trigger file.
//
// A switch runs on the thread that opened or closed the range, inside the
// NVTX push or the cudaProfilerStart call, before that call returns: the
// range's first launch is made with the activity kinds already on, and its
// last launch before they go off. Switching costs the calling thread what
// enabling the kinds costs (counted in the stats: capture_switch_ns_*).
// Switches are made one at a time, each waiting for the one before (bounded:
// where pauses detach, CUPTI's switch waits for the entry gate at most its
// bound, and a resume it cannot make lets its range go: CaptureGate::Dropped).
// A switch never waits for a Stop in progress on another thread (it tries
// the recorder's stop lock and drops the switch, counted, when taken);
// letting go of CUPTI after a recorded range and stopping after the last
// one are left to the control thread (TakeReleaseWanted, Poll), which the
// application's thread must not wait for.
//
// Everything but the switch runs on the control thread: Open before it
// starts, ReleaseDelay, TakeReleaseWanted and Poll in its loop.
#ifndef GPUCAP_RECORDER_CAPTURE_SWITCH_H_
#define GPUCAP_RECORDER_CAPTURE_SWITCH_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capture_range.h"
#include "config.h"
#include "cupti_session.h"
#include "once_log.h"
#include "range_matcher.h"
#include "recorder_phase.h"
#include "trigger_file.h"
#include "gpucap/format/model.h"
#include "gpucap/format/recording_state.h"

namespace gpucap::recorder {

class CaptureSwitch {
 public:
  // What a switch reaches of the recorder beyond the session and its phase.
  struct Hooks {
    std::mutex* stop_mu;  // held by a Stop in progress
    std::function<bool()> writer_stopped;  // nothing to record into
    std::function<uint64_t()> now;         // CUPTI's clock
    std::function<uint64_t()> next_window_id;
    std::function<void(format::SmallMessage)> add_event;
    // A RecordingChange message from the calling thread, stamped `at` (CUPTI's
    // clock): the moment the switch began, taken before CUPTI is switched, so
    // that the builder's paused stretches (docs/semantics.md, "Recorded while
    // paused") begin where the pause was asked and end before recording
    // resumed.
    std::function<void(format::RecordingState, const std::string&, uint64_t at)> note_state;
    std::function<void()> wake_control;  // never blocks
  };

  CaptureSwitch(const Config& config, RecorderPhase* phase, CuptiSession* cupti, OnceLog* log, Hooks recorder);

  // Before the control thread starts: makes the gate when a capture range
  // is configured (an invalid regex records everything instead) and applies
  // its first decision, or --delay's hold.
  void Open();
  bool gated() const { return gate_ != nullptr; }

  // The NVTX hooks' side (recorder.h's GateRangeOpen and GateRangeClose).
  // Whether a range of this name opens a capture range (the calling
  // thread's MatchCache: a name that repeats runs the regex once).
  bool Matches(std::string_view name) const;
  void OpenMatched(std::string_view name, const CaptureGate::RangeKey& key);
  bool MayClose() const { return gate_->MayClose(); }
  void Close(const CaptureGate::RangeKey& key);

  // cudaProfilerStart/Stop and cuProfilerStart/Stop, from the subscriber's
  // API callback; false for other calls. EnableCallbacks asks for them, at
  // every attach.
  bool OnCallback(uint32_t domain, uint32_t cbid, const void* data);
  void EnableCallbacks();

  // The control thread's part: --delay's end; whether a recorded range
  // ended with GPUCAP_PAUSE_DETACH=1 and CUPTI is to be let go; the trigger
  // file and the end of the capture ranges (true: stop now).
  void ReleaseDelay();
  bool TakeReleaseWanted() { return release_wanted_.exchange(false); }
  // Where pauses detach and GPUCAP_ATTACH_AHEAD is on: the range before a
  // recorded one has opened, and CUPTI is to be attached and its kinds
  // switched on now (CuptiSession::RecordAhead), so that the recorded
  // range's thread finds them on. True once per such range; `still` then
  // says, under the session's switch lock, whether no range has opened
  // since (else the recorded range came and maybe went already).
  bool TakeAheadWanted(std::function<bool()>* still);
  bool Poll();

  // capture_ranges_seen/_recorded/_dropped, capture_switches,
  // capture_switch_ns_*, capture_switches_skipped; nothing when not gated.
  void Stats(std::vector<std::pair<std::string, uint64_t>>* extra);

 private:
  void ProfilerApi(bool start);
  // `opened`: the range whose Open made `d` (let go when its recording
  // cannot start: CaptureGate::Dropped); `attempts`: closes of the entry
  // gate to try for the switch (the control thread's several, an
  // application thread's one: CuptiSession::Record).
  void Apply(const CaptureGate::Decision& d, const CaptureGate::RangeKey* opened = nullptr, int attempts = 1);

  const Config& config_;
  RecorderPhase* const phase_;
  CuptiSession* const cupti_;
  OnceLog* const log_;
  const Hooks recorder_;
  // What decides, which names open a range, the trigger file.
  std::unique_ptr<CaptureGate> gate_;
  std::unique_ptr<RangeMatcher> names_;
  std::unique_ptr<TriggerFile> trigger_;
  bool trigger_taken_ = false;  // control thread only
  bool trigger_stuck_ = false;
  std::atomic<bool> stop_wanted_{false};
  std::atomic<bool> release_wanted_{false};
  std::atomic<uint64_t> ahead_wanted_{0};  // ranges seen when it was asked for, plus one; 0: none
  uint64_t profiler_window_ = 0;  // the open cudaProfilerApi window's mark id
  std::mutex apply_mu_;  // Apply, one at a time
  std::atomic<uint64_t> switches_{0}, switch_ns_total_{0}, switch_ns_max_{0}, switches_skipped_{0};
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CAPTURE_SWITCH_H_
