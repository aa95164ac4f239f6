// The recorder inside one process: opens the capture, composes the parts
// that feed it, and is what the injection entry points, the NVTX handlers
// and the C API reach (process_recorder.h). Each part is a class of its own
// with its contract in its header, and none includes this one:
//
//   cupti_session.h   the hold on CUPTI: callbacks, subscriber, activity
//                     kinds, and the detach a pause makes (cupti_detach.h)
//   cupti_buffers.h   the buffers CUPTI records into, walked and handed to
//                     the writer
//   capture_switch.h  capture ranges applied: recording on and off where
//                     they open and close, the trigger file
//   control_thread.h  the recorder's thread, its wake-ups, the signals'
//                     requests
//   range_recorder.h  NVTX and API ranges and the window marks they derive
//   step_watch.h      the flight recorder's hang and slow-step triggers, fed
//                     the steps closed through step_log.h
//   call_watch.h      its blocked-call trigger, fed the entry gate's calls
//                     in flight
//   facts_reporter.h  devices and threads first seen, described; NVML
//   pm_sessions.h     PM sampling per device
//   recorder_phase.h  starting / recording / paused / stopped, read by all
//
// The recorder's own files: recorder.cc (opening the capture, events, the
// periodic tick and stats), recorder_cupti.cc (what CUPTI calls in the
// recorder, and what each attach switches on for the parts),
// recorder_control.cc (what a pass of the control thread does, and Stop).
#ifndef GPUCAP_RECORDER_RECORDER_H_
#define GPUCAP_RECORDER_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "api_records.h"
#include "call_watch.h"
#include "capture_switch.h"
#include "capture_streams.h"
#include "config.h"
#include "control_thread.h"
#include "cupti_buffers.h"
#include "cupti_session.h"
#include "event_log.h"
#include "facts_reporter.h"
#include "os_tid.h"
#include "once_log.h"
#include "pm_sessions.h"
#include "range_clock.h"
#include "range_log.h"
#include "range_recorder.h"
#include "recorder_phase.h"
#include "step_log.h"
#include "step_watch.h"
#include "gpucap/format/capture_writer.h"

namespace gpucap::recorder {

class Recorder {
 public:
  // Opens the capture and starts the writer and control threads. Returns
  // nullptr (after one line on stderr) when the capture cannot be created:
  // the process then runs unrecorded.
  static Recorder* Create(const Config& config);

  // Attaches to CUPTI and, unless paused, turns on activity tracing. Called
  // once, from the driver's cuInit through InitializeInjection.
  void StartCupti();

  // Flushes CUPTI, writes what is pending and closes the capture with its
  // trailer. Idempotent; safe from atexit and from the control thread.
  void Stop(const char* reason);

  // Ends PM sampling on every device; idempotent. Run at exit before
  // libnvperf_host's destructors and from Stop.
  void StopPmSamplers();

  // After fork, in the child: never touch the parent's capture.
  void AbandonAfterFork();

  // --- producers (any thread) ---
  uint64_t Now() const;
  // CUPTI's clock for range events, read the cheapest checked way.
  uint64_t RangeNow() const { return range_clock_.Now(); }
  bool accepting() const { return state_.load(std::memory_order_acquire) == kRecording; }
  // Batched per thread; range events and window marks keep their thread's
  // order with the ranges'.
  void AddEvent(format::SmallMessage event);
  void AddRange(format::RangeEvent event);    // also derives window marks
  // The NVTX handlers' path (AddRange's without a RangeEvent): the name is
  // copied once, into the calling thread's records. Only while accepting().
  // `cache`: the caller's thread_local RangeLog::WriterCache, or nullptr.
  void AddRangeFields(const RangeFields& f, std::string_view name,
                      const std::vector<format::ExtPayload>* ext = nullptr,
                      RangeLog::WriterCache* cache = nullptr) {
    range_recorder_->Add(f, name, ext, cache);
  }
  // Ids for window marks, shared by --window-nvtx and the C API so that
  // one's close never ends the other's window.
  uint64_t NextWindowId() { return range_recorder_->NextWindowId(); }

  // --- CUPTI callbacks ---
  void OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  void OnBufferCompleted(uint32_t context_id, uint32_t stream_id, uint8_t* buffer, size_t size,
                         size_t valid, size_t cupti_dropped);
  void OnResource(uint32_t cbid, const void* data);
  // Runtime and driver API callbacks: the ids CallbackSwitch has on (stream
  // creation, capture boundaries, a capture range's profiler calls, callback
  // API records).
  void OnApiCallback(uint32_t domain, uint32_t cbid, const void* data);

  // --- capture ranges (capture_switch.h), from the NVTX hooks ---
  bool gated() const { return capture_.gated(); }
  // A push or start (name is looked at only when gated); make_key() gives
  // its key, asked only of a name that matches.
  template <typename MakeKey>
  void GateRangeOpen(std::string_view name, MakeKey make_key) {
    if (capture_.Matches(name)) capture_.OpenMatched(name, make_key());
  }
  // A pop or end; make_key() is asked only while a capture range is open.
  template <typename MakeKey>
  void GateRangeClose(MakeKey make_key) {
    if (capture_.MayClose()) capture_.Close(make_key());
  }

  // Requests from signal handlers: async-signal-safe.
  void RequestToggle() { control_.RequestToggle(); }
  // The flight recorder (config ring()): SIGUSR1's dump (async-signal-safe)
  // and gpucap_dump()'s, trigger "api: <why>". The control thread collects
  // what is pending and the writer thread writes the dump (Dump). False
  // when there is no ring or the recorder stopped.
  bool RequestSignalDump();
  bool RequestApiDump(const char* why);
  uint64_t dumps_written() const { return writer_->counters().dumps_written; }
  // The last dump's path, or why it failed.
  std::string last_dump() const { return writer_->last_dump(); }
  void RequestStop(int signal) { control_.RequestStop(signal); }
  // The flight recorder's snapshot for the crash handler (crash_dump.h);
  // null without a ring.
  std::shared_ptr<format::RingCrashSlot> crash_slot() const { return writer_->crash_slot(); }

  const Config& config() const { return config_; }
  const std::string& output_path() const { return output_path_; }

 private:
  using enum RecorderPhase::Value;

  explicit Recorder(const Config& config);
  bool Open();
  // Open's steps, in order.
  bool OpenOutput(const char* host, int pid);
  void WriteSessionInfo(const char* host, int pid);
  void StartThreads(int pid);
  void ControlLoop();
  // The control thread's resume (SIGUSR2, --delay's end): the phase to
  // recording, then CUPTI (a pending detach sees the phase first), with
  // `attempts` closes of the entry gate; the phase back as it was when the
  // switch was not made.
  bool ResumeFromControl(int attempts);
  void Tick(bool final_tick);
  void SampleClock(format::ClockKind kind);
  // The recorder's counters. For a stats frame the writer's own drops are
  // included (kInclude); a trailer handed to the writer (Close,
  // RequestDump) leaves them out, since the writer adds its final counts
  // there itself: with both, each drop was counted twice.
  enum class WriterDrops { kInclude, kLeaveToWriter };
  format::RecorderStats Stats(WriterDrops writer_drops = WriterDrops::kInclude);
  // A flight-recorder dump: CUPTI's buffers and the pending events
  // collected, then queued to the writer with `trigger`.
  void Dump(const std::string& trigger);
  // The hang and slow-step triggers (config watches_steps()): the steps
  // closed since the last pass judged, and the dumps due written. A pass of
  // the control thread; `final`: the recording ends, the slow steps' dumps
  // not yet due are written now.
  void WatchSteps(bool final);
  // The blocked-call trigger (config ring_hang_call_s): what the entry gate
  // shows in flight judged, a dump written for calls past the bound. A pass
  // of the control thread.
  void WatchCalls();
  // OpenOutput's writer: a file, or the flight recorder's ring (no file
  // until a dump).
  bool OpenFile(int pid);
  bool OpenRing();
  // CUPTI's ways into this recorder (recorder_cupti.cc), and what each
  // attach of the session switches on for the recorder's parts.
  CuptiSession::Entry CuptiEntry();
  void OnCuptiAttached(bool late);
  // A RecordingChange message from the calling thread, stamped `at` (CUPTI's
  // clock, taken before the switch: CaptureSwitch::Hooks::note_state).
  void NoteRecordingState(format::RecordingState state, const std::string& why, uint64_t at);

  Config config_;
  OnceLog log_;
  std::string output_path_;
  std::unique_ptr<format::CaptureWriter> writer_;
  RecorderPhase state_;
  // Devices and threads first seen in callbacks, described by the control
  // thread; NVML's counters.
  FactsReporter facts_;
  // The buffers CUPTI records into; made with the writer.
  std::unique_ptr<CuptiBuffers> buffers_;
  // The hold on CUPTI: callbacks, subscriber, activity kinds, detach.
  CuptiSession cupti_;
  std::unique_ptr<EventLog> events_;
  // Range events and window marks, per thread (range_log.h); drained by the
  // control thread when a thread hands a chunk over (ControlThread::WantRanges).
  std::unique_ptr<RangeLog> ranges_;
  RangeClock range_clock_;
  // Ranges from the application's threads and the window marks they
  // derive (--window-nvtx); made with the range log.
  std::unique_ptr<RangeRecorder> range_recorder_;
  // The flight recorder's step triggers: the steps closed, handed over by
  // the range recorder, and what the control thread decides of them; null
  // unless the ring watches steps.
  std::unique_ptr<StepLog> steps_;
  std::unique_ptr<StepWatch> step_watch_;
  std::vector<StepEnd> steps_drained_;  // the control thread's
  // The blocked-call trigger and the entry gate it looks through; null
  // unless the ring watches calls and the gate is preloaded.
  std::unique_ptr<CallWatch> call_watch_;
  const GpucapEntryGateV1* call_gate_ = nullptr;
  std::vector<GpucapGateCall> calls_seen_;  // the control thread's
  // GPUCAP_API_RECORDS=callback: the lean calls' records; null otherwise.
  std::unique_ptr<ApiRecords> api_records_;
  // GPUCAP_CAPTURE_STREAMS=1: the stream of each captured node; null when off.
  std::unique_ptr<CaptureStreams> capture_streams_;
  // Capture ranges: applying their decisions, the trigger file.
  CaptureSwitch capture_;
  PmSessions pm_;  // --counters pm

  ControlThread control_;
  std::mutex stop_mu_;  // one Stop at a time; tried, never waited for, by a capture range's switch
  bool logged_writer_stop_ = false;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_RECORDER_H_
