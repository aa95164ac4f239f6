// What each pass of the recorder's control thread (control_thread.h) does,
// in order: dumps asked for, the step and blocked-call triggers, collect
// full range chunks, flush CUPTI's completed buffers when
// asked or at the flight recorder's period, a stop signal, the end of
// --delay, SIGUSR2's toggle, letting go of CUPTI after a recorded range and
// the detach's retries, attaching ahead of a recorded range, the capture
// ranges' end, --duration, a
// writer that stopped, PM polls, new devices, and the one-second tick. And
// the stop itself: flushing CUPTI, writing the trailer and closing the
// capture.
#include <cupti.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include "periodic_flush.h"
#include "proc_text.h"
#include "recorder.h"

namespace gpucap::recorder {

void Recorder::ControlLoop() {
  using Clock = std::chrono::steady_clock;
  auto started = Clock::now();
  auto last_tick = started;
  auto last_pm_poll = started;
  Clock::time_point recording_since = started;
  bool delay_done = config_.start_delay_s <= 0;
  bool flush_again = false;  // a flush the entry gate did not close for
  int delay_tries = 0;       // starts of the recording after --delay tried
  uint64_t dumps_logged = 0;
  // Ring mode only, where a crash dump is what the recording is for. A file
  // written as it goes loses CUPTI's unflushed buffers to a crash too, but
  // there the price of a flush every period has not been weighed.
  PeriodicFlush ring_flush(config_.ring() ? uint64_t{config_.ring_flush_ms} * 1'000'000 : 0);
  for (;;) {
    if (!control_.Wait()) return;
    for (const std::string& trigger : control_.TakeDumps()) Dump(trigger);
    if (step_watch_) WatchSteps(false);
    if (call_watch_) WatchCalls();
    if (config_.ring() && dumps_written() + writer_->counters().dumps_failed > dumps_logged) {
      dumps_logged = dumps_written() + writer_->counters().dumps_failed;
      std::string last = last_dump();
      bool failed = last.rfind("dump failed", 0) == 0;
      if (failed || !config_.quiet) log_.Log("gpucap: flight recorder: " + (failed ? last : "wrote " + last));
    }
    if (control_.TakeRangesWanted()) ranges_->Collect(/*full_only=*/true);
    auto now = Clock::now();
    // CUPTI's default flush (every buffer whose records are all complete,
    // full or not: cheap, nothing cut short), when asked for, and in ring
    // mode at its period while recording (a paused CUPTI records nothing
    // and may be detached). No wait for the completions: the writer takes
    // them as they come. One flush a pass serves both.
    bool asked = control_.TakeFlushWanted();
    bool again = std::exchange(flush_again, false);
    bool flush_wanted = (asked || again) && cupti_.activity_enabled();
    auto since_start = std::chrono::duration_cast<std::chrono::nanoseconds>(now - started);
    bool ring_flush_due = ring_flush.Due(static_cast<uint64_t>(since_start.count()),
                                         state_.load() == kRecording && cupti_.activity_enabled());
    // Not made (the entry gate did not close for it): tried again at the
    // next pass, not at once (each try holds the program's new calls).
    if ((flush_wanted || ring_flush_due) && !cupti_.Flush(0)) flush_again = true;
    if (int sig = control_.TakeStopSignal()) {
      Stop(sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "signal");
      // Die as the signal would have killed us before we flushed.
      signal(sig, SIG_DFL);
      raise(sig);
      return;
    }
    if (!delay_done && std::chrono::duration<double>(now - started).count() >= config_.start_delay_s) {
      delay_done = true;
      if (capture_.gated()) {
        capture_.ReleaseDelay();
      } else if (!config_.start_paused && !writer_->stopped()) {
        // The entry gate did not close for the switch: tried again at the
        // next pass (once a pass after the first), as if the delay had not
        // ended yet.
        if (ResumeFromControl(delay_tries++ == 0 ? CuptiSession::kControlAttempts : 1)) {
          recording_since = now;
        } else {
          delay_done = false;
          if (delay_tries == 1) log_.Log("gpucap: recording after --delay waits for CUDA calls in flight to leave");
        }
      }
    }
    if (control_.TakeToggle() && delay_done) {
      uint64_t at = Now();  // before CUPTI is switched (NoteRecordingState)
      if (state_.load() == kRecording) {
        state_.store(kPaused);
        cupti_.Pause();
        NoteRecordingState(format::RecordingState::kPaused, "SIGUSR2", at);
        if (!config_.quiet) fprintf(stderr, "gpucap: paused (SIGUSR2)\n");
      } else if (writer_->stopped()) {
        // Past the size cap or a disk error there is nothing to resume into.
        log_.Log("gpucap: SIGUSR2 ignored: the capture is closed to new data");
      } else if (state_.load() == kPaused || state_.load() == kStarting) {
        if (ResumeFromControl(CuptiSession::kControlAttempts)) {
          recording_since = now;
          NoteRecordingState(format::RecordingState::kRecording, "SIGUSR2", at);
          if (!config_.quiet) fprintf(stderr, "gpucap: recording (SIGUSR2)\n");
        } else {
          log_.Log("gpucap: SIGUSR2 resume dropped: CUDA calls stayed in flight past the gate's bound");
        }
      }
    }
    if (capture_.TakeReleaseWanted() && state_.load() == kPaused) cupti_.Release(true);
    // A detach that gave up (a call stayed in CUDA past its bound) tries
    // again at the next ticks of the same pause.
    if (cupti_.detaches() && state_.load() == kPaused && cupti_.DetachRetryDue()) cupti_.TryDetach();
    // The range before a recorded one opened: attach and switch on now, so
    // that the recorded range's thread does not (CuptiSession::RecordAhead).
    std::function<bool()> still;
    if (capture_.TakeAheadWanted(&still) && state_.load() == kPaused) cupti_.RecordAhead(still);
    if (state_.load() == kPaused) cupti_.HoldWhilePaused();
    if (capture_.gated() && capture_.Poll()) {
      Stop("capture range end");
      return;
    }
    if (config_.duration_s > 0 && state_.load() == kRecording &&
        std::chrono::duration<double>(now - recording_since).count() >= config_.duration_s) {
      Stop("duration reached");
      return;
    }
    if (writer_->stopped() && !logged_writer_stop_) {
      // Disk full, I/O error or the size cap: stop paying for tracing.
      logged_writer_stop_ = true;
      // Paused first, as SIGUSR2 pauses: a detach then may run, and the
      // kinds' switch off is not taken for one a resume overtook.
      state_.store(kPaused);
      cupti_.Pause();
      Status err = writer_->error();
      fprintf(stderr, "gpucap: stopped recording to %s: %s; the program continues\n",
              output_path_.c_str(), err.ok() ? "size cap reached" : err.message().c_str());
    }
    if (now - last_pm_poll >= std::chrono::milliseconds(200)) {
      last_pm_poll = now;
      pm_.PollAll();
    }
    if (facts_.TakeDevicesPending()) facts_.ReportDevices();
    if (now - last_tick >= std::chrono::seconds(1)) {
      last_tick = now;
      Tick(false);
    }
  }
}

bool Recorder::ResumeFromControl(int attempts) {
  RecorderPhase::Value was = state_.load();
  state_.store(kRecording);
  if (cupti_.Record(attempts)) return true;
  state_.store(was);
  return false;
}

bool Recorder::RequestSignalDump() {
  if (!config_.ring() || state_.load(std::memory_order_relaxed) == kStopped) return false;
  control_.RequestSignalDump();
  return true;
}

bool Recorder::RequestApiDump(const char* why) {
  if (!config_.ring() || state_.load() == kStopped) return false;
  control_.RequestDump(why && *why ? std::string("api: ") + why : std::string("api"));
  return true;
}

void Recorder::Dump(const std::string& trigger) {
  if (cupti_.started() && cupti_.activity_enabled()) {
    // The buffers CUPTI is filling now hold the last moments: cut them short.
    // One try for the gate (a dump for a call blocked in CUDA would find it
    // shut every time), then without it.
    cupti_.FlushForced(std::chrono::milliseconds(300), 1, CuptiSession::Fallback::kUngated);
  }
  if (api_records_) api_records_->Collect();
  facts_.ReportDevices();
  facts_.ReportThreads();
  events_->Collect();
  ranges_->Collect();
  format::Trailer trailer;
  trailer.end_cupti_ns = Now();
  trailer.stats = Stats(WriterDrops::kLeaveToWriter);
  trailer.stop_reason = "flight-recorder dump";
  if (!writer_->RequestDump(trigger, std::move(trailer))) {
    log_.Log("gpucap: flight recorder: dump (" + trigger + ") not written: the writer is behind or stopped");
  }
}

void Recorder::WatchSteps(bool final) {
  steps_drained_.clear();
  steps_->Drain(&steps_drained_);
  for (const StepEnd& step : steps_drained_) step_watch_->Observe(step);
  // Paused, no range reaches the log: a pause is not a hang.
  if (state_.load() != kRecording) step_watch_->Disarm();
  std::vector<std::string> due = final ? step_watch_->TakePending() : step_watch_->Poll(RangeNow());
  for (const std::string& trigger : due) Dump(trigger);
}

void Recorder::WatchCalls() {
  // Paused: a call is timed only while recording, as a step hang is.
  if (state_.load() != kRecording) {
    call_watch_->Forget();
    return;
  }
  size_t n = call_gate_->calls_in_flight(calls_seen_.data(), calls_seen_.size());
  if (n > calls_seen_.size()) {
    calls_seen_.resize(n + 64);
    n = std::min(call_gate_->calls_in_flight(calls_seen_.data(), calls_seen_.size()), calls_seen_.size());
  }
  uint64_t now = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
  std::vector<BlockedCall> blocked = call_watch_->Observe(now, {calls_seen_.data(), n});
  if (blocked.empty()) return;
  Dump(CallWatch::Trigger(now, blocked, ThreadName));
}

void Recorder::Stop(const char* reason) {
  std::lock_guard<std::mutex> lock(stop_mu_);
  int state = state_.load();
  if (state == kStopped) return;
  auto stop_began = std::chrono::steady_clock::now();
  state_.store(kPaused);  // no new events from the application
  control_.Quit();
  if (cupti_.started()) {
    cupti_.FlushForced(std::chrono::milliseconds(300), CuptiSession::kControlAttempts,
                       CuptiSession::Fallback::kUngated);
    // Already stopped when this runs at exit (StopPmSamplersAtExit).
    StopPmSamplers();
    cupti_.KindsOffAtStop();
  }
  facts_.StopNvml();
  Tick(true);
  format::Trailer trailer;
  trailer.clean_shutdown = true;
  trailer.end_cupti_ns = Now();
  trailer.stats = Stats(WriterDrops::kLeaveToWriter);
  trailer.stop_reason = reason;
  // Dumps asked for that the control thread had not taken yet (a program
  // that calls gpucap_dump() and exits) are written before the end.
  if (config_.ring()) {
    for (const std::string& trigger : control_.TakeDumps()) Dump(trigger);
    if (step_watch_) WatchSteps(true);
  }
  state_.store(kStopped);
  if (config_.ring() && config_.ring_dump_at_exit) {
    std::string why = reason;
    writer_->RequestDump(why == "exit" ? why : "stop: " + why, trailer);
  }
  Status s = writer_->Close(std::move(trailer), std::chrono::seconds(5));
  format::WriterCounters c = writer_->counters();
  if (!s.ok()) {
    fprintf(stderr, "gpucap: %s\n", s.message().c_str());
  } else if (config_.ring()) {
    if (!config_.quiet || c.dumps_failed) {
      fprintf(stderr, "gpucap: flight recorder stopped (%s): %llu dumps written, %llu failed%s%s\n", reason,
              static_cast<unsigned long long>(c.dumps_written), static_cast<unsigned long long>(c.dumps_failed),
              c.dumps_written + c.dumps_failed ? "; last: " : "", writer_->last_dump().c_str());
    }
  } else if (!config_.quiet) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stop_began).count();
    fprintf(stderr, "gpucap: wrote %s (%.1f MB, %llu chunks, %s; stop took %.1f ms)\n",
            output_path_.c_str(), c.bytes_written / 1e6,
            static_cast<unsigned long long>(c.chunks_written), reason, ms);
  }
  uint64_t drops = buffers_->cupti_dropped() + buffers_->pool_empty() + c.buffers_dropped_queue_full;
  if (drops && !config_.quiet) {
    fprintf(stderr,
            "gpucap: dropped %llu CUPTI records, %llu buffer requests (pool empty), %llu buffers "
            "(writer behind); see GPUCAP_POOL_MB\n",
            static_cast<unsigned long long>(buffers_->cupti_dropped()),
            static_cast<unsigned long long>(buffers_->pool_empty()),
            static_cast<unsigned long long>(c.buffers_dropped_queue_full));
  }
}

void Recorder::AbandonAfterFork() {
  // The writer thread and the control thread do not exist in the child, and
  // the file is the parent's: keep every path away from both for good.
  state_.store(kStopped);
  (void)writer_.release();
}

}  // namespace gpucap::recorder
