#include "cupti_session.h"

#include <cuda.h>

#include <chrono>
#include <functional>
#include <thread>

#include "api_selection.h"
#include "code_ranges.h"
#include "gpucap/format/activity_kind.h"

namespace gpucap::recorder {
namespace {

// The resource callbacks Recorder::OnResource and GraphEventFor handle.
constexpr CUpti_CallbackId kResourceCallbacks[] = {
    CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
    CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING,
    CUPTI_CBID_RESOURCE_GRAPH_CREATED,
    CUPTI_CBID_RESOURCE_GRAPH_CLONED,
    CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING,
    CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
    CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
    CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING,
    CUPTI_CBID_RESOURCE_GRAPHNODE_DEPENDENCY_CREATED,
    CUPTI_CBID_RESOURCE_GRAPHNODE_DEPENDENCY_DESTROY_STARTING,
    CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED,
    CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING,
    CUPTI_CBID_RESOURCE_GRAPH_NODE_UPDATED,
    CUPTI_CBID_RESOURCE_GRAPH_NODE_SET_PARAMS,
};

// `once` up to `attempts` times, a millisecond apart, until it answers
// true: the closes of the entry gate a caller may try before giving up.
bool InAttempts(int attempts, const std::function<bool()>& once) {
  for (int i = 0; i < attempts; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (once()) return true;
  }
  return false;
}

}  // namespace

CuptiSession::CuptiSession(const Config& config, const RecorderPhase* phase, OnceLog* log, Entry entry,
                           std::function<void(bool late)> attached)
    : config_(config), phase_(phase), log_(log), entry_(entry), attached_(std::move(attached)) {}

void CuptiSession::Start(bool attach, bool recording, ApiRecords* api_records) {
  api_records_ = api_records;
  if (attach) {
    Attach();
  } else {
    std::lock_guard<std::mutex> lock(cupti_mu_);
    detached_ = true;  // contexts made before the first recording announce no device
  }
  if (recording) {
    // At cuInit: no other thread has a CUDA call to race with yet.
    std::lock_guard<std::mutex> lock(switch_mu_);
    SetActivityEnabledLocked(true, /*at_start=*/true);
  }
}

void CuptiSession::MakeDetach() {
  // PM sampling sessions live in CUPTI too: finalizing would end them.
  if (!config_.pause_detach || config_.pm_counters) return;
  const GpucapEntryGateV1* gate = CuptiDetach::FindGate();
  if (!gate) {
    log_->Log("gpucap: pauses keep CUPTI attached: the entry gate (libgpucap_gate.so, which gpucap record "
              "preloads) is not in this process");
    return;
  }
  // CUPTI's own driver calls pass the closed gate: it makes them while it
  // finalizes.
  detach_ = std::make_unique<CuptiDetach>(gate, std::chrono::microseconds(config_.detach_wait_us),
                                          CodeRangesOf(reinterpret_cast<const void*>(&cuptiFinalize)));
}

bool CuptiSession::Check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  const char* msg = nullptr;
  cuptiGetResultString(r, &msg);
  log_->Log(std::string("gpucap: ") + what + ": " + (msg ? msg : "error"));
  return false;
}

bool CuptiSession::RegisterLocked() {
  if (callbacks_registered_) return true;
  if (finalized_) {
    // CUPTI numbers calls from the start again after its finalize: this
    // session's ids go past every id written before (correlation_shift.h).
    // Seen first: the last session's callback records still in the
    // threads' buffers (no callback runs while detached), and a completion
    // that took its buffer before the finalize's reclaim and may still be
    // walking it (waited for briefly; none is the rule). Before the buffer
    // callbacks: CUPTI is lent no buffer of this session before the shift.
    StageTimes::Scope timed(timed_stages(), StageTimes::kSettle);
    if (api_records_) api_records_->Collect();
    if (buffers_) buffers_->WaitForRunningCompletions(std::chrono::milliseconds(50));
    correlations_.NextSession();
  }
  {
    StageTimes::Scope timed(timed_stages(), StageTimes::kAttributes);
    if (config_.system_thread_ids) {
      Check(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "thread id type");
    }
    {
      // The pool's buffers come zeroed (buffer_pool.h): otherwise CUPTI
      // zeroes each one on the application thread that needs it. Set before
      // the buffer callbacks, so that it holds for the first buffer too;
      // again at each attach after a finalize, which may forget it.
      uint8_t zeroed = 1;
      size_t sz = sizeof(zeroed);
      Check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &sz, &zeroed),
            "zeroed activity buffers");
    }
    if (!config_.per_thread_buffers) {
      // Before the buffer callbacks and any kind, as CUPTI asks.
      uint8_t per_thread = 0;
      size_t sz = sizeof(per_thread);
      Check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &sz, &per_thread),
            "shared activity buffers");
    }
    if (config_.device_buffer_bytes) {
      size_t v = config_.device_buffer_bytes, sz = sizeof(v);
      Check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &v), "device buffer size");
    }
    if (config_.device_buffers_ahead >= 0) {
      size_t v = static_cast<size_t>(config_.device_buffers_ahead), sz = sizeof(v);
      Check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &sz, &v),
            "device buffers allocated ahead");
    }
  }
  StageTimes::Scope timed(timed_stages(), StageTimes::kRegister);
  if (!Check(cuptiActivityRegisterCallbacks(entry_.buffer_requested, entry_.buffer_completed),
             "cuptiActivityRegisterCallbacks")) {
    return false;
  }
  if (config_.flush_period_ms) cuptiActivityFlushPeriod(config_.flush_period_ms);
  if (config_.latency_timestamps) {
    Check(cuptiActivityEnableLatencyTimestamps(1), "latency timestamps");
  }
  callbacks_registered_ = true;
  return true;
}

void CuptiSession::Attach() {
  std::lock_guard<std::mutex> lock(cupti_mu_);
  // Late: CUPTI was away (detached, or not attached since cuInit), also
  // where Prepare registered it again since.
  bool late = detached_;
  if (!RegisterLocked()) return;
  detached_ = false;
  StageTimes::Scope timed(timed_stages(), StageTimes::kSubscribe);
  if (config_.subscribe && !subscriber_) {
    CUpti_SubscriberHandle sub;
    if (Check(cuptiSubscribe(&sub, entry_.callback, entry_.userdata),
              "cuptiSubscribe (another CUPTI tool in this process?)")) {
      subscriber_ = sub;
      callbacks_.Attach(sub);
      if (config_.resource_domain) {
        Check(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RESOURCE), "resource callbacks");
      } else {
        for (CUpti_CallbackId cbid : kResourceCallbacks) {
          Check(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, cbid), "resource callback");
        }
      }
    }
  }
  attached_(late);
}

void CuptiSession::Prepare() {
  std::lock_guard<std::mutex> lock(cupti_mu_);
  // Only after a finalize: CUPTI's first initialisation (a recorder started
  // paused) stays inside the gate, as it was measured.
  if (!detached_ || !finalized_ || callbacks_registered_) return;
  prepared_.fetch_add(1, std::memory_order_relaxed);
  RegisterLocked();
}

bool CuptiSession::AttachedLocked() const { return callbacks_registered_ && (subscriber_ || !config_.subscribe); }

bool CuptiSession::Gated(const std::function<void()>& change) {
  switch (detach_->Switch(change)) {
    case CuptiDetach::Switched::kMade:
      return true;
    case CuptiDetach::Switched::kGaveUp:
      return false;
    case CuptiDetach::Switched::kNoGate:
      break;
  }
  // No gate can vouch, so nothing detaches either: as without a detach.
  change();
  return true;
}

bool CuptiSession::Switched(const std::function<void()>& change) {
  if (!detach_ || !config_.switches_gated) {
    change();
    return true;
  }
  return Gated(change);
}

bool CuptiSession::Record(int attempts) {
  if (detach_ && config_.switches_gated) {
    // Nothing to change (an attach ahead made it, or the last pause's
    // kinds are still on for its detach): no hold of the other threads.
    std::lock_guard<std::mutex> switching(switch_mu_);
    std::lock_guard<std::mutex> lock(cupti_mu_);
    if (AttachedLocked() && activity_enabled_.load()) {
      kinds_off_pending_.store(false);
      return true;
    }
  }
  auto change = [this] {
    Attach();
    std::lock_guard<std::mutex> switching(switch_mu_);
    kinds_off_pending_.store(false);
    SetActivityEnabledLocked(true, false);
  };
  if (InAttempts(attempts, [&] { return Switched(change); })) return true;
  resumes_dropped_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void CuptiSession::RecordAhead(const std::function<bool()>& still) {
  auto wanted = [&] {
    return started_.load() && !activity_enabled_.load() && phase_->load() == RecorderPhase::kPaused && still();
  };
  if (!wanted()) return;
  // CUPTI's registration again after a finalize, with no other thread held
  // (GPUCAP_ATTACH_PREPARE): what the gate then holds them for is the
  // subscriber and the kinds.
  if (config_.attach_prepare && detach_) Prepare();
  // Under the switch lock, then the attachment's (Attach): the recorded
  // range's thread, which takes them one at a time, finds the kinds on or
  // switches them itself.
  Switched([&] {
    std::lock_guard<std::mutex> switching(switch_mu_);
    if (!wanted()) return;
    Attach();
    SetActivityEnabledLocked(true, false);
    recorded_ahead_.fetch_add(1, std::memory_order_relaxed);
  });
}

void CuptiSession::Pause() {
  PauseActivity();
  Release();
}

void CuptiSession::PauseActivity() {
  if (detach_ && config_.detach_late_off && activity_enabled_.load()) {
    kinds_off_pending_.store(true);
    return;
  }
  // A pause with the phase paused (a capture range's end, SIGUSR2) yields
  // to a resume that comes before the switch; the writer's stop does not.
  bool made = KindsOff(/*unless_resumed=*/phase_->load() == RecorderPhase::kPaused);
  // Not made under the gate in its bound: left on for the detach.
  if (!made && detach_ && activity_enabled_.load()) kinds_off_pending_.store(true);
}

bool CuptiSession::KindsOff(bool unless_resumed) {
  if (!started_.load() || !activity_enabled_.load()) return true;
  return Switched([this, unless_resumed] {
    // Checked under the switch lock, inside the hold (which may have waited
    // up to its bound): a range that opened meanwhile on another thread
    // (Record's path without a hold, which found the kinds on) keeps them.
    std::lock_guard<std::mutex> switching(switch_mu_);
    if (!unless_resumed || phase_->load() == RecorderPhase::kPaused) SetActivityEnabledLocked(false, false);
  });
}

bool CuptiSession::Flush(uint32_t flags) {
  auto flush = [this, flags] {
    StageTimes::Scope timed(timed_stages(), StageTimes::kFlush);
    cuptiActivityFlushAll(flags);
  };
  if (!detach_ || !config_.flush_gated) {
    flush();
    return true;
  }
  return Gated(flush);
}

bool CuptiSession::FlushForced(std::chrono::milliseconds wait, int attempts, Fallback fallback) {
  bool made = InAttempts(attempts, [this] { return Flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); });
  if (!made && fallback == Fallback::kUngated) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    flushes_ungated_.fetch_add(1, std::memory_order_relaxed);
    made = true;
  }
  if (!made) {
    flushes_not_made_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  // Waited for with the gate open: the completions run on CUPTI's thread.
  if (wait.count() > 0) buffers_->WaitForCompletions(wait);
  return true;
}

// CUPTI with its activity kinds switched off still costs the launching
// thread (PyTorch saw 10-20% after its profiler ended until cuptiFinalize:
// pytorch/pytorch#144455; +88% of an empty launch here): a pause after a
// recording finalizes it, with the entry gate holding every other thread
// out of CUDA meanwhile (docs/recorder-detach.md).
void CuptiSession::Release(bool only_if_paused) {
  if (!detach_) {
    Flush(0);
    return;
  }
  // A capture range switches on application threads: one may have started
  // recording again since.
  if (only_if_paused && phase_->load() != RecorderPhase::kPaused) return;
  detach_->NewPause();
  flushed_for_detach_ = false;
  TryDetach();
}

void CuptiSession::TryDetach() {
  {
    std::lock_guard<std::mutex> lock(cupti_mu_);
    if (!callbacks_registered_ && !subscriber_) return;  // holds nothing of CUPTI
  }
  // Every buffer comes back before CUPTI lets go of them: one flush a
  // pause, before its first attempt. A flush the gate did not close for is
  // an attempt given up (tried again at the next tick): a finalize now
  // would lose the range's last records.
  CuptiDetach::Outcome o = CuptiDetach::Outcome::kGaveUp;
  // The GPU work queued so far, waited for with the gate open until a wait
  // finds little queued (bounded: the gated flush and finalize then wait
  // only for what came since), before each attempt. Never finalized while
  // a wait is still in the driver (past its bound): the attempt is given
  // up, and made again at the next tick.
  // The kinds left on for the finalize (PauseActivity) stay on through the
  // waits, though the launches meanwhile pay CUPTI's recording price: a
  // graph launched while CUPTI is attached with its kinds off, then
  // finalized, faults at its next launch ("the graph fault found",
  // docs/recorder-detach.md).
  if (config_.detach_quiet_ms) {
    quiet_.WaitUntilShallow(std::chrono::milliseconds(config_.detach_quiet_ms), kShallowQueue);
  }
  if (config_.detach_quiet_ms && quiet_.busy()) {
    detach_->CountGiveUp();
  } else if (!flushed_for_detach_ && !FlushForced(std::chrono::milliseconds(300))) {
    detach_->CountGiveUp();
  } else {
    flushed_for_detach_ = true;
    o = detach_->Run([this] { return Finalize(); });
  }
  // Zeroed after the gate opened, not while the program's calls wait.
  if (o == CuptiDetach::Outcome::kDetached) {
    buffers_->GiveBack(dropped_by_finalize_);
    dropped_by_finalize_.clear();
  }
  if (o == CuptiDetach::Outcome::kFailed) log_->Log("gpucap: cuptiFinalize failed: pauses keep CUPTI attached");
  // No detach this pause after all: the kinds go off now, as without one.
  if (o != CuptiDetach::Outcome::kDetached && !detach_->RetryDue() && kinds_off_pending_.exchange(false)) {
    if (!KindsOff(/*unless_resumed=*/true)) kinds_off_pending_.store(true);  // still on: the next pause's detach takes them off
  }
}

CuptiDetach::Finalized CuptiSession::Finalize() {
  // Every other thread is out of CUDA now, or held at its entry. Never wait
  // here for a lock: a thread held at the gate may own it (a capture range's
  // switch on an application thread), so the attempt is let go instead.
  std::unique_lock<std::mutex> switching(switch_mu_, std::try_to_lock);
  if (!switching.owns_lock()) return CuptiDetach::Finalized::kBusy;
  std::unique_lock<std::mutex> lock(cupti_mu_, std::try_to_lock);
  if (!lock.owns_lock() || phase_->load() != RecorderPhase::kPaused ||
      (activity_enabled_.load() && !kinds_off_pending_.load())) {
    return CuptiDetach::Finalized::kBusy;
  }
  // The kinds left on at the pause (PauseActivity) go off with every other
  // thread held, so that nothing is launched between them and the finalize.
  if (kinds_off_pending_.exchange(false)) SetActivityEnabledLocked(false, false);
  {
    StageTimes::Scope timed(timed_stages(), StageTimes::kFinalize);
    if (cuptiFinalize() != CUPTI_SUCCESS) return CuptiDetach::Finalized::kError;
  }
  // Taken now, with both locks and the gate held: once the gate opens, a
  // recorded range may attach again and CUPTI be lent new buffers.
  if (config_.reclaim_at_detach) dropped_by_finalize_ = buffers_->TakeLent();
  subscriber_ = nullptr;
  callbacks_.Detach();
  callbacks_registered_ = false;
  detached_ = true;
  finalized_ = true;
  return CuptiDetach::Finalized::kYes;
}

void CuptiSession::HoldWhilePaused() {
  if (!config_.pause_detach || !config_.paused_subscribe || !config_.subscribe) return;
  {
    std::lock_guard<std::mutex> lock(cupti_mu_);
    if (!detached_) return;
  }
  // Resource callbacks again, so that graphs built while paused keep their
  // topology; no activity kind is enabled. Not made: at the next tick.
  Switched([this] { Attach(); });
}

void CuptiSession::KindsOffAtStop() {
  if (KindsOff(/*unless_resumed=*/false)) return;
  std::lock_guard<std::mutex> lock(switch_mu_);
  SetActivityEnabledLocked(false, false);
}

void CuptiSession::SetActivityEnabledLocked(bool enabled, bool at_start) {
  if (!started_.load() || activity_enabled_.load() == enabled) return;
  StageTimes::Scope timed(timed_stages(), enabled ? StageTimes::kKindsOn : StageTimes::kKindsOff);
  activity_enabled_.store(enabled);
  using K = format::ActivityKind;
  bool want_api = false;
  for (uint32_t kind : config_.kinds) {
    if (kind == static_cast<uint32_t>(K::kRuntime) || kind == static_cast<uint32_t>(K::kDriver)) {
      want_api = true;  // by callback id, below
      continue;
    }
    auto k = static_cast<CUpti_ActivityKind>(kind);
    CUptiResult r = enabled ? cuptiActivityEnable(k) : cuptiActivityDisable(k);
    if (enabled && r == CUPTI_SUCCESS && kind == static_cast<uint32_t>(K::kSynchronization)) {
      // Query records for work not done yet (polling loops) are noise and cost.
      cuptiActivityEnableAllSyncRecords(0);
    }
    if (r != CUPTI_SUCCESS && enabled) {
      const char* msg = nullptr;
      cuptiGetResultString(r, &msg);
      log_->Log("gpucap: activity kind " + format::ActivityKindName(kind) + " not enabled: " +
                (msg ? msg : "error"));
    }
  }
  if (!want_api) return;
  if (ApiRecords* records = api_records_) {
    // The lean calls through callbacks: no RUNTIME or DRIVER activity kind.
    records->SetOn(enabled);
    for (const auto& [domain, cbid] : records->ids()) {
      callbacks_.Want(CallbackSwitch::kApiRecords, domain, cbid, enabled);
    }
    return;
  }
  // An enable at cuInit (Start) or a later one: a resume.
  SelectApis(config_.api, enabled, enabled && !at_start);
}

void CuptiSession::Stats(std::vector<std::pair<std::string, uint64_t>>* extra) const {
  if (!detach_) return;
  detach_->Stats(extra);
  extra->emplace_back("cupti_recorded_ahead", recorded_ahead_.load());
  extra->emplace_back("cupti_resumes_dropped", resumes_dropped_.load());
  extra->emplace_back("cupti_flushes_not_made", flushes_not_made_.load());
  extra->emplace_back("cupti_flushes_ungated", flushes_ungated_.load());
  extra->emplace_back("cupti_sessions", correlations_.sessions());
  extra->emplace_back("correlation_shift", correlations_.shift());
  extra->emplace_back("cupti_attaches_prepared", prepared_.load());
  if (config_.detach_quiet_ms) {
    GpuQuiet::Counts quiet = quiet_.counts();
    extra->emplace_back("cupti_quiet_waits", quiet.waits);
    extra->emplace_back("cupti_quiet_shallow", quiet.shallow);
    extra->emplace_back("cupti_quiet_timeouts", quiet.timeouts);
  }
  stages_.Stats(extra);
}

}  // namespace gpucap::recorder
