#include "capture_switch.h"

#include <cuda.h>
#include <cupti.h>

#include <chrono>
#include <cstdio>

#include "os_tid.h"

namespace gpucap::recorder {
namespace {

using Action = CaptureGate::Action;

constexpr uint64_t kProfilerRangeId = ~0ull;  // the one cudaProfilerStart/Stop range

uint64_t SteadyNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// cudaProfilerStart runs cuProfilerStart: the runtime call's callback is
// the one taken, the driver's inside it skipped.
thread_local bool t_in_runtime_profiler_call = false;

}  // namespace

CaptureSwitch::CaptureSwitch(const Config& config, RecorderPhase* phase, CuptiSession* cupti, OnceLog* log,
                             Hooks recorder)
    : config_(config), phase_(phase), cupti_(cupti), log_(log), recorder_(std::move(recorder)) {}

void CaptureSwitch::Open() {
  if (!config_.capture_error.empty()) log_->Log("gpucap: capture range off: " + config_.capture_error);
  if (!config_.graph_trace_refused.empty()) {
    log_->Log("gpucap: graph-level records (--cuda-graph-trace graph) off: " + config_.graph_trace_refused);
  }
  const CaptureRangeSpec& spec = config_.capture;
  if (!spec.enabled()) return;
  if (spec.source == CaptureRangeSpec::Source::kNvtx) {
    std::string why;
    names_ = RangeMatcher::Make(spec.pattern, &why);
    if (!names_) {
      log_->Log("gpucap: capture range nvtx:" + spec.pattern + " is not a valid regex (" + why +
              "); recording everything");
      phase_->store(RecorderPhase::kRecording);
      return;
    }
  }
  if (!spec.trigger_file.empty()) trigger_ = std::make_unique<TriggerFile>(spec.trigger_file);
  gate_ = std::make_unique<CaptureGate>(spec);
  if (config_.start_delay_s > 0) {
    // The delay comes first: ranges count from its end (ReleaseDelay).
    char why[96];
    snprintf(why, sizeof why, "--delay %gs before the capture range", config_.start_delay_s);
    Apply(gate_->Hold(why), nullptr, CuptiSession::kControlAttempts);
  } else {
    Apply(gate_->Initial(), nullptr, CuptiSession::kControlAttempts);
  }
}

bool CaptureSwitch::Matches(std::string_view name) const {
  // Most names lack the pattern's literal: they are answered before the
  // thread's cache is looked up.
  if (!names_ || !names_->MayMatch(name)) return false;
  if (names_->literal_only()) return true;
  thread_local MatchCache cache;
  return cache.Matches(*names_, name);
}

void CaptureSwitch::OpenMatched(std::string_view name, const CaptureGate::RangeKey& key) {
  Apply(gate_->Open(key, std::string(name)), &key);
}

void CaptureSwitch::Close(const CaptureGate::RangeKey& key) { Apply(gate_->Close(key)); }

void CaptureSwitch::ReleaseDelay() { Apply(gate_->Release(), nullptr, CuptiSession::kControlAttempts); }

void CaptureSwitch::ProfilerApi(bool start) {
  if (!gate_ || config_.capture.source != CaptureRangeSpec::Source::kProfilerApi) return;
  CaptureGate::RangeKey key;
  key.start_id = kProfilerRangeId;
  if (start) {
    Apply(gate_->Open(key, "cudaProfilerApi#" + std::to_string(gate_->ranges_seen())), &key);
  } else if (gate_->MayClose()) {
    Apply(gate_->Close(key));
  }
}

void CaptureSwitch::Apply(const CaptureGate::Decision& d, const CaptureGate::RangeKey* opened, int attempts) {
  if (d.ahead && config_.attach_ahead && cupti_->detaches()) {
    ahead_wanted_.store(d.ranges_seen + 1);
    recorder_.wake_control();
  }
  if (d.action == Action::kNone) return;
  // One switch at a time, waited for: a switch is bounded (the entry gate's
  // bound and its hold), and one skipped for another would leave the
  // capture gate's decision unapplied (a pause lost: recording on with no
  // range open). Nothing a switch runs applies another on its thread (the
  // profiler-API callbacks come from the program's cudaProfilerStart/Stop).
  std::lock_guard<std::mutex> one_switch(apply_mu_);
  // Never wait for a Stop in progress on another thread: the switch is
  // dropped (and counted) instead.
  std::unique_lock<std::mutex> stopping(*recorder_.stop_mu, std::try_to_lock);
  if (!stopping.owns_lock() || phase_->load() == RecorderPhase::kStopped) {
    switches_skipped_.fetch_add(1, std::memory_order_relaxed);
    if (d.action == Action::kRecord && opened) gate_->Dropped(*opened, d.range_index);
    return;
  }
  bool profiler = config_.capture.source == CaptureRangeSpec::Source::kProfilerApi;
  uint64_t t0 = SteadyNs();
  if (d.action == Action::kRecord) {
    if (recorder_.writer_stopped()) {
      switches_skipped_.fetch_add(1, std::memory_order_relaxed);
      if (opened) gate_->Dropped(*opened, d.range_index);
      return;
    }
    uint64_t at = recorder_.now();
    // Recording before CUPTI switches: a detach pending from the last
    // pause sees it and lets CUPTI be (CuptiSession::Finalize).
    phase_->store(RecorderPhase::kRecording);
    if (cupti_->started() && !cupti_->Record(attempts)) {
      // The gate did not close in its bound: this range is not recorded
      // (cupti_resumes_dropped, capture_ranges_dropped), rather than CUPTI
      // switched beside other threads' calls; the capture gate lets it go.
      phase_->store(RecorderPhase::kPaused);
      switches_skipped_.fetch_add(1, std::memory_order_relaxed);
      if (opened) gate_->Dropped(*opened, d.range_index);
      return;
    }
    recorder_.note_state(d.state, d.why, at);
    if (profiler && !d.label.empty()) {
      format::WindowMark m;
      m.kind = format::WindowMarkKind::kOpen;
      m.timestamp_ns = recorder_.now();
      m.os_tid = CurrentOsTid();
      m.id = profiler_window_ = recorder_.next_window_id();
      m.label = d.label;
      recorder_.add_event(std::move(m));
    }
  } else {
    if (profiler && profiler_window_) {
      format::WindowMark m;
      m.kind = format::WindowMarkKind::kClose;
      m.timestamp_ns = recorder_.now();
      m.os_tid = CurrentOsTid();
      m.id = profiler_window_;
      profiler_window_ = 0;
      recorder_.add_event(std::move(m));
    }
    bool was_recording = cupti_->activity_enabled();
    uint64_t at = recorder_.now();
    phase_->store(RecorderPhase::kPaused);
    cupti_->PauseActivity();
    // Taken at the control thread's next pass (50 ms at most), not at once:
    // the release's forced flush hands over the records of GPU work not
    // yet done as incomplete, so the range's last kernels get that long to
    // finish first. What the delay costs: the kinds stay on until the
    // detach (PauseActivity), and the calls meanwhile pay recording's price.
    if (config_.pause_detach && was_recording && d.action == Action::kPause) release_wanted_.store(true);
    recorder_.note_state(d.state, d.why, at);
    if (d.action == Action::kPauseAndStop) {
      stop_wanted_.store(true);
      recorder_.wake_control();
    }
  }
  uint64_t ns = SteadyNs() - t0;
  switches_.fetch_add(1, std::memory_order_relaxed);
  switch_ns_total_.fetch_add(ns, std::memory_order_relaxed);
  uint64_t max = switch_ns_max_.load(std::memory_order_relaxed);
  while (ns > max && !switch_ns_max_.compare_exchange_weak(max, ns, std::memory_order_relaxed)) {
  }
  if (!config_.quiet && d.action == Action::kPauseAndStop) {
    fprintf(stderr, "gpucap: %s; stopping\n", d.why.c_str());
  }
}

bool CaptureSwitch::TakeAheadWanted(std::function<bool()>* still) {
  uint64_t wanted = ahead_wanted_.exchange(0);
  if (wanted == 0 || !gate_) return false;
  *still = [this, seen = wanted - 1] { return gate_->ranges_seen() == seen; };
  return true;
}

bool CaptureSwitch::Poll() {
  if (stop_wanted_.load()) return true;
  if (!trigger_ || trigger_stuck_) return false;
  if (!trigger_taken_) {
    if (!trigger_->Present()) return false;
    trigger_taken_ = true;
    uint32_t k = config_.capture.trigger_windows;
    if (!config_.quiet) {
      fprintf(stderr, "gpucap: %s appeared: recording the next %u matching range(s)\n",
              trigger_->path().c_str(), k);
    }
    Apply(gate_->Arm(k, "trigger file " + trigger_->path()), nullptr, CuptiSession::kControlAttempts);
    return false;
  }
  if (gate_->trigger_busy()) return false;
  // Its ranges are done: hand CUPTI's buffers to the writer, then take the
  // file away, so that its going says the trace is in the capture.
  if (!cupti_->activity_enabled() && !cupti_->FlushForced(std::chrono::milliseconds(0))) {
    return false;  // the gate did not close for the flush: at the next pass
  }
  std::string what = trigger_->Retire();
  trigger_taken_ = false;
  if (what.rfind("left", 0) == 0) trigger_stuck_ = true;
  if (!config_.quiet || trigger_stuck_) {
    fprintf(stderr, "gpucap: trigger file %s %s\n", trigger_->path().c_str(), what.c_str());
  }
  return false;
}

void CaptureSwitch::Stats(std::vector<std::pair<std::string, uint64_t>>* extra) {
  if (!gate_) return;
  extra->emplace_back("capture_ranges_seen", gate_->ranges_seen());
  extra->emplace_back("capture_ranges_recorded", gate_->ranges_recorded());
  extra->emplace_back("capture_ranges_dropped", gate_->ranges_dropped());
  extra->emplace_back("capture_switches", switches_.load());
  extra->emplace_back("capture_switch_ns_total", switch_ns_total_.load());
  extra->emplace_back("capture_switch_ns_max", switch_ns_max_.load());
  extra->emplace_back("capture_switches_skipped", switches_skipped_.load());
}

void CaptureSwitch::EnableCallbacks() {
  if (!gate_ || config_.capture.source != CaptureRangeSpec::Source::kProfilerApi) return;
  auto want = [&](uint32_t domain, uint32_t cbid) {
    cupti_->callbacks()->Want(CallbackSwitch::kGate, domain, cbid, true);
  };
  want(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
  want(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
  want(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
  want(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
}

bool CaptureSwitch::OnCallback(uint32_t domain, uint32_t cbid, const void* data) {
  bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  bool start, stop;
  if (runtime) {
    start = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000;
    stop = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    start = cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    stop = cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
  } else {
    return false;
  }
  if (!start && !stop) return false;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (!cb) return true;
  bool enter = cb->callbackSite == CUPTI_API_ENTER;
  if (runtime) {
    t_in_runtime_profiler_call = enter;
  } else if (t_in_runtime_profiler_call) {
    return true;
  }
  // At the call's entry: launches after a start and before a stop are in.
  if (enter) ProfilerApi(start);
  return true;
}

}  // namespace gpucap::recorder
