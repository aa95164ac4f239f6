// The recorder's hold on CUPTI: registering the buffer callbacks, the one
// callback subscriber (callback_switch.h: several parts share its ids),
// enabling the activity kinds, and what a pause lets go of.
//
// What the session holds: nothing (paused from the start, never recorded,
// or detached), the activity callbacks and the subscriber (attached), or
// those with the activity kinds enabled (recording). A pause disables the
// kinds and, after a recording with a CuptiDetach made (GPUCAP_PAUSE_DETACH
// and the entry gate in the process), finalizes CUPTI with every other
// thread held out of CUDA (cupti_detach.h, docs/recorder-detach.md); the
// next recording attaches again.
//
// What the application pays for (bench/README.md, "The recorder's price"):
// CUPTI attached with activity callbacks registered costs nothing; the
// resource callbacks cost nothing when only the ones the recorder handles
// are enabled, while the whole resource domain cost every kernel launch
// about 1 us (0.8-1.3 us in four comparisons), paused or recording.
//
// Where pauses detach, every change of CUPTI's state after the first
// start (the attach, the subscriber's callbacks, the activity kinds) is
// made with the entry gate closed too, as the finalize is (Switched,
// CuptiDetach::Switch): CUPTI rewrites what its callbacks dispatch through
// while other threads' launches read it, and crashed there. A change the
// gate cannot be closed for in its bound is not made: a resume is then
// dropped (Record answers false), the kinds stay on while paused (the
// builder leaves their records out) until a detach takes them off.
//
// Threads and locks: Attach, Record and Pause run on the control thread and
// on application threads that open or close a capture range; Release,
// TryDetach, RecordAhead and HoldWhilePaused on the control thread only. The
// gate comes first, then the switch's mutex, then the attachment's; the
// finalize, which runs while other threads are held at the entry gate and
// may own either (where a change is made without the gate: no detach, or
// the start at cuInit), only tries them, in that order.
#ifndef GPUCAP_RECORDER_CUPTI_SESSION_H_
#define GPUCAP_RECORDER_CUPTI_SESSION_H_

#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "api_records.h"
#include "callback_switch.h"
#include "config.h"
#include "correlation_shift.h"
#include "cupti_buffers.h"
#include "cupti_detach.h"
#include "gpu_quiet.h"
#include "once_log.h"
#include "recorder_phase.h"
#include "stage_times.h"

namespace gpucap::recorder {

class CuptiSession {
 public:
  // CUPTI's ways into the recorder, registered at every attach: the buffer
  // callbacks (which take no user data) and the subscriber's callback with
  // its user data.
  struct Entry {
    CUpti_BuffersCallbackRequestFunc buffer_requested;
    CUpti_BuffersCallbackCompleteFunc buffer_completed;
    CUpti_CallbackFunc callback;
    void* userdata;
  };
  // `attached(late)`: what every attach switches on for the other parts
  // (the subscriber's ids they want), run under the attachment's lock after
  // the subscriber; `late`: CUPTI was away (detached, or not attached since
  // cuInit), so contexts made meanwhile announced no device. `phase`: read
  // before letting go of CUPTI (only while paused); `buffers`: waited on
  // after a forced flush.
  CuptiSession(const Config& config, const RecorderPhase* phase, OnceLog* log, Entry entry,
               std::function<void(bool late)> attached);

  // Makes the detach a pause after recording uses, when wanted and the
  // entry gate is in the process; before the control thread starts.
  void MakeDetach();
  // cuInit: true the first time only (the caller then starts the session).
  bool MarkStarted() { return !started_.exchange(true); }
  // The first start: attaches when `attach`, else notes that CUPTI is away;
  // then enables the kinds when `recording`. `api_records`: the lean calls'
  // records by callback (GPUCAP_API_RECORDS=callback), or null.
  void Start(bool attach, bool recording, ApiRecords* api_records);
  // The buffers a forced flush waits for; set before the first attach.
  void UseBuffers(CuptiBuffers* buffers) { buffers_ = buffers; }
  // The shift of correlation ids that keeps them unique when CUPTI numbers
  // from the start again after a finalize: advanced at each attach after one.
  CorrelationShift* correlations() { return &correlations_; }

  void Attach();
  // Attach, then the kinds on; false when the gate could not be closed
  // for it (nothing changed: the caller stays paused). Costs no hold when
  // CUPTI is attached with the kinds on already (an attach ahead, or a
  // pause whose kinds are still on for its detach). `attempts`: closes of
  // the gate to try, a millisecond apart (the control thread tries several;
  // an application thread one: it must not wait long).
  bool Record(int attempts = 1);
  static constexpr int kControlAttempts = 20;
  // A quiet wait this short means the GPU had about this much queued: the
  // detach's holds then stall the program for about that (issue 40 asks
  // for 5 ms at p99; the finalize's own work is 1.5-2 ms).
  static constexpr std::chrono::microseconds kShallowQueue{1000};
  // Record, on the control thread, while still paused, when the range
  // before a recorded one opens (CaptureSwitch::TakeAheadWanted): CUPTI's
  // re-attach after a detach and the kinds' switch cost the thread that
  // makes them millions of instructions, which the recorded range's thread
  // then finds done. The records of the range before are made while paused,
  // so the builder leaves them out (docs/semantics.md, "Recorded while
  // paused"); the kinds on rather than CUPTI attached with them off, since a
  // graph launched so and then finalized faulted (PauseActivity). `still`,
  // under the switch lock: whether that recorded range has not opened yet;
  // nothing is done when it has, or when the kinds are on already.
  void RecordAhead(const std::function<bool()>& still);
  // After a finalize: CUPTI's attributes and buffer callbacks again (with
  // the correlation shift moved first), on the calling thread and without
  // the entry gate, so that the gated Attach that follows holds the other
  // threads for the subscriber alone. RecordAhead's, on the control thread,
  // with GPUCAP_ATTACH_PREPARE: registering took 12-65 ms at p99 inside
  // the hold on an H100 (2026-12-06), while the subscriber took 0.07 ms and
  // the kinds 1 ms. Whether CUPTI's registration beside other threads'
  // launches is safe is what the stress on a GPU must say: until it has,
  // it is off. Nothing when attached or registered already.
  void Prepare();
  void Pause();   // PauseActivity, then Release
  // A pause's first half: the kinds off, or, where pauses detach, left on
  // until the detach switches them off inside the gate (Finalize): a graph
  // launched while CUPTI was attached with its kinds off, then finalized,
  // faulted on the GPU or crashed the driver at its next launch on the H100
  // (graph_detach.cu's paused-launch and queued; the torch.compile job's
  // inference). The kinds go off at once when the detach cannot run or has
  // given up for this pause; GPUCAP_DETACH_LATE_OFF=0 always does.
  void PauseActivity();
  // Hands every buffer CUPTI holds to the completion callback, and so to
  // the writer, now: those it is still filling too
  // (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), with any records of work not yet
  // done in them incomplete. Then waits up to `wait` for the completions to
  // be done (zero: not at all, the writer takes them as they come). Any
  // thread, while attached (CUPTI's buffer callbacks registered). Where
  // pauses detach it is a Flush: `attempts` closes of the gate a
  // millisecond apart, then, with kUngated (the recorder's stop, a flight
  // recorder's dump: the last records matter more than a rare race), one
  // without the gate. False: not made.
  enum class Fallback { kNone, kUngated };
  bool FlushForced(std::chrono::milliseconds wait, int attempts = 1, Fallback fallback = Fallback::kNone);
  // cuptiActivityFlushAll(flags); where pauses detach, with the gate closed
  // (CuptiDetach::Switch, GPUCAP_FLUSH_GATED): CUPTI's flush races with the
  // records other threads' launches are writing, and crashed inside their
  // launch (the 64-thread stress on an H100: 33 of 156 runs with CUPTI's
  // shared buffers, 0 of 147 with the flush gated). False: not made (the
  // gate did not close in its bound), to be asked again.
  bool Flush(uint32_t flags);
  // A pause's second half, on the control thread; only_if_paused: not
  // when a capture range has started recording again meanwhile.
  void Release(bool only_if_paused = false);
  // One detach attempt (cupti_detach.h), on the control thread.
  void TryDetach();
  // While paused and detached with --paused-graphs: the resource callbacks
  // again, no activity kind.
  void HoldWhilePaused();
  // The kinds off at the recorder's stop: under the gate where it closes in
  // its bound, else at once (the program is ending, and a later buffer has
  // nowhere to go).
  void KindsOffAtStop();

  bool started() const { return started_.load(); }
  bool activity_enabled() const { return activity_enabled_.load(); }
  // Whether pauses after a recording detach; then whether an attempt is
  // due at this tick of a pause (cupti_detach.h).
  bool detaches() const { return detach_ != nullptr; }
  bool DetachRetryDue() const { return detach_->RetryDue(); }
  CallbackSwitch* callbacks() { return &callbacks_; }
  // The detach's counters (CuptiDetach::Stats), cupti_recorded_ahead,
  // cupti_resumes_dropped, cupti_flushes_not_made,
  // cupti_flushes_ungated, cupti_sessions, correlation_shift,
  // cupti_attaches_prepared, cupti_quiet_waits/_timeouts/_shallow (each
  // wait, each attempt's last wait past its bound, the attempts that found
  // the queue shallow) and the stages' times
  // (stage_times.h), when a detach was made.
  void Stats(std::vector<std::pair<std::string, uint64_t>>* extra) const;

 private:
  // Runs inside the detach, with every other thread held out of CUDA.
  CuptiDetach::Finalized Finalize();
  // Runs `change` with every other thread held out of CUDA where pauses
  // detach, at once where they do not; false: not run.
  bool Switched(const std::function<void()>& change);
  // `change` under the gate (CuptiDetach::Switch), or at once when no gate
  // can vouch; false: the gate did not close in its bound. With a detach.
  bool Gated(const std::function<void()>& change);
  bool AttachedLocked() const;  // under cupti_mu_
  // CUPTI's result, logged once when not a success.
  bool Check(CUptiResult r, const char* what);
  // The buffer callbacks registered, with CUPTI's attributes before them
  // and, after a finalize, the correlation shift moved; under cupti_mu_.
  // False: CUPTI refused the callbacks.
  bool RegisterLocked();
  // Where the stages of CUPTI's changes are timed: where pauses detach.
  StageTimes* timed_stages() { return detach_ ? &stages_ : nullptr; }
  // The kinds off; with `unless_resumed`, not if the phase is no longer
  // paused when the switch is made. False: the gate did not close in its
  // bound (they stay on).
  bool KindsOff(bool unless_resumed);

  const Config& config_;
  const RecorderPhase* const phase_;
  OnceLog* const log_;
  const Entry entry_;
  const std::function<void(bool late)> attached_;
  CuptiBuffers* buffers_ = nullptr;
  ApiRecords* api_records_ = nullptr;
  CorrelationShift correlations_;
  StageTimes stages_;
  GpuQuiet quiet_;  // GPUCAP_DETACH_QUIET_MS's waits
  // The API callback ids the subscriber has on, for every part that wants some.
  CallbackSwitch callbacks_;
  std::atomic<bool> started_{false};
  std::atomic<bool> activity_enabled_{false};
  // Paused with the kinds left on for the detach to switch off (PauseActivity).
  std::atomic<bool> kinds_off_pending_{false};
  std::atomic<uint64_t> recorded_ahead_{0};
  std::atomic<uint64_t> prepared_{0};  // Prepare's registrations
  bool finalized_ = false;  // CUPTI finalized at least once (under cupti_mu_)
  std::atomic<uint64_t> resumes_dropped_{0};  // Record's false
  std::atomic<uint64_t> flushes_not_made_{0}, flushes_ungated_{0};  // FlushForced's
  bool flushed_for_detach_ = false;  // this pause's buffers flushed; control thread only
  // What the last finalize dropped unreturned (Finalize), given back to
  // the pool by TryDetach once the gate is open; control thread only.
  std::vector<uint8_t*> dropped_by_finalize_;
  void SetActivityEnabledLocked(bool enabled, bool at_start);
  std::mutex switch_mu_;  // one switch at a time (app threads, control thread)

  // CUPTI attachment, changed by the control thread and by application
  // threads that open a capture range; all under cupti_mu_.
  std::mutex cupti_mu_;
  void* subscriber_ = nullptr;  // CUpti_SubscriberHandle
  bool callbacks_registered_ = false;
  bool detached_ = false;  // finalized since the last attach, or not attached since cuInit
  // The detach a pause after recording makes; null when pauses keep CUPTI
  // (GPUCAP_PAUSE_DETACH=0, PM sampling).
  std::unique_ptr<CuptiDetach> detach_;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CUPTI_SESSION_H_
