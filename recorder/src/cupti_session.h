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
// Threads and locks: Attach, Record and Pause run on the control thread and
// on application threads that open or close a capture range; Release,
// TryDetach, RecordAhead and HoldWhilePaused on the control thread only. The
// attachment is under one mutex, a switch of the activity kinds under
// another; Record takes them one after the other, RecordAhead the switch's
// then the attachment's (so CUPTI attaches under both there); the finalize,
// which runs while other threads are held at the entry gate and may own
// either, only tries them, in that order.
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
#include "cupti_buffers.h"
#include "cupti_detach.h"
#include "once_log.h"
#include "recorder_phase.h"

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

  void Attach();
  void Record();  // Attach, then the kinds on
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
  // thread, while attached (CUPTI's buffer callbacks registered).
  void FlushForced(std::chrono::milliseconds wait);
  // A pause's second half, on the control thread; only_if_paused: not
  // when a capture range has started recording again meanwhile.
  void Release(bool only_if_paused = false);
  // One detach attempt (cupti_detach.h), on the control thread.
  void TryDetach();
  // While paused and detached with --paused-graphs: the resource callbacks
  // again, no activity kind.
  void HoldWhilePaused();
  // Capture ranges switch from application threads, SIGUSR2 and the size
  // cap from the control thread; at_start: the enable at cuInit, not a resume.
  void SetActivityEnabled(bool enabled, bool at_start = false);

  bool started() const { return started_.load(); }
  bool activity_enabled() const { return activity_enabled_.load(); }
  // Whether pauses after a recording detach; then whether an attempt is
  // due at this tick of a pause (cupti_detach.h).
  bool detaches() const { return detach_ != nullptr; }
  bool DetachRetryDue() const { return detach_->RetryDue(); }
  CallbackSwitch* callbacks() { return &callbacks_; }
  // The detach's counters (CuptiDetach::Stats) and cupti_recorded_ahead,
  // when a detach was made.
  void Stats(std::vector<std::pair<std::string, uint64_t>>* extra) const;

 private:
  // Runs inside the detach, with every other thread held out of CUDA.
  CuptiDetach::Finalized Finalize();

  const Config& config_;
  const RecorderPhase* const phase_;
  OnceLog* const log_;
  const Entry entry_;
  const std::function<void(bool late)> attached_;
  CuptiBuffers* buffers_ = nullptr;
  ApiRecords* api_records_ = nullptr;
  // The API callback ids the subscriber has on, for every part that wants some.
  CallbackSwitch callbacks_;
  std::atomic<bool> started_{false};
  std::atomic<bool> activity_enabled_{false};
  // Paused with the kinds left on for the detach to switch off (PauseActivity).
  std::atomic<bool> kinds_off_pending_{false};
  std::atomic<uint64_t> recorded_ahead_{0};
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
