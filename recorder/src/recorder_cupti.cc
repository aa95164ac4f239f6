// The recorder's hold on CUPTI: the callbacks CUPTI calls, attaching to it,
// enabling the activity kinds, and what a pause lets go of.
//
// What the application pays for (bench/README.md, "The recorder's price"):
// CUPTI attached with activity callbacks registered costs nothing; the
// resource callbacks cost nothing when only the ones the recorder handles
// are enabled, while the whole resource domain cost every kernel launch
// about 1 us (0.8-1.3 us in four comparisons), paused or recording. A pause disables the activity kinds
// and, after a recording, detaches CUPTI (cupti_detach.h: cuptiFinalize with
// every other thread held out of CUDA by the entry gate); the next recording
// attaches again.
#include <cuda.h>
#include <cupti.h>

#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "api_selection.h"
#include "gpucap/format/activity_kind.h"
#include "process_recorder.h"
#include "recorder.h"
#include "stream_facts.h"

namespace gpucap::recorder {
namespace {

// CUPTI's buffer callbacks take no user data: they find the recorder through
// the process's one global.
void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  if (Recorder* r = ProcessRecorder()) {
    r->OnBufferRequested(buffer, size, max_records);
  } else {
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;
  }
}

void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size,
                              size_t valid) {
  Recorder* r = ProcessRecorder();
  if (!r) return;  // never handed out by us
  // Read the drop count here, outside any lock of ours, as CUPTI asks.
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) != CUPTI_SUCCESS) dropped = 0;
  uint32_t context_id = 0;
  if (ctx) cuptiGetContextId(ctx, &context_id);
  r->OnBufferCompleted(context_id, stream, buffer, size, valid, dropped);
}

void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* data) {
  auto* r = static_cast<Recorder*>(userdata);
  if (!r) return;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    r->OnResource(cbid, data);
  } else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    r->OnApiCallback(domain, cbid, data);
  }
}

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

}  // namespace

void Recorder::StartCupti() {
  if (cupti_started_.exchange(true)) return;
  // Made before any callback can reach it, and kept until the process ends.
  if (config_.capture_streams && config_.graphs) capture_streams_ = std::make_unique<CaptureStreams>(&callbacks_);
  // Callback API records need the subscriber; `all` keeps CUPTI's records.
  if (config_.api_source == ApiRecordSource::kCallback && config_.api == ApiSelection::kLean && config_.subscribe) {
    BufferPool* pool = pool_.get();
    api_records_ = std::make_unique<ApiRecords>(
        LeanApiIds(), pool->buffer_bytes(), static_cast<uint32_t>(getpid()), [pool] { return pool->Take(); },
        [this, pool](uint8_t* buffer, size_t valid) {
          OnBufferCompleted(0, 0, buffer, pool->buffer_bytes(), valid, 0);
        });
  }
  bool recording = state_.load() == kRecording;
  // A recorder that starts paused holds nothing of CUPTI (CUPTI initialised
  // costs every CUDA call ~290 instructions) unless something must be seen
  // while paused: graphs built meanwhile (GPUCAP_PAUSED_GRAPHS=1), the
  // cudaProfilerStart that opens a capture range, the first context that PM
  // sampling is configured in. Its first recording attaches (AttachCupti).
  bool profiler_api_gate = gate_ && config_.capture.source == CaptureRangeSpec::Source::kProfilerApi;
  if (recording || config_.paused_subscribe || profiler_api_gate || config_.pm_counters) {
    AttachCupti();
  } else {
    std::lock_guard<std::mutex> lock(cupti_mu_);
    detached_ = true;  // contexts made before the first recording announce no device
  }
  if (recording) SetActivityEnabled(true, /*at_start=*/true);
}

void Recorder::MakeDetach() {
  // PM sampling sessions live in CUPTI too: finalizing would end them.
  if (!config_.pause_detach || config_.pm_counters) return;
  const GpucapEntryGateV1* gate = CuptiDetach::FindGate();
  if (!gate) {
    log_.Log("gpucap: pauses keep CUPTI attached: the entry gate (libgpucap_gate.so, which gpucap record "
            "preloads) is not in this process");
    return;
  }
  // CUPTI's own driver calls pass the closed gate: it makes them while it
  // finalizes.
  detach_ = std::make_unique<CuptiDetach>(gate, std::chrono::microseconds(config_.detach_wait_us),
                                          CodeRangesOf(reinterpret_cast<const void*>(&cuptiFinalize)));
}

void Recorder::AttachCupti() {
  std::lock_guard<std::mutex> lock(cupti_mu_);
  auto check = [&](CUptiResult r, const char* what) {
    if (r == CUPTI_SUCCESS) return true;
    const char* msg = nullptr;
    cuptiGetResultString(r, &msg);
    log_.Log(std::string("gpucap: ") + what + ": " + (msg ? msg : "error"));
    return false;
  };
  bool late = detached_;
  if (!callbacks_registered_) {
    if (config_.system_thread_ids) {
      check(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "thread id type");
    }
    if (config_.device_buffer_bytes) {
      size_t v = config_.device_buffer_bytes, sz = sizeof(v);
      check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &v),
            "device buffer size");
    }
    if (!check(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted),
               "cuptiActivityRegisterCallbacks")) {
      return;
    }
    if (config_.flush_period_ms) cuptiActivityFlushPeriod(config_.flush_period_ms);
    if (config_.latency_timestamps) {
      check(cuptiActivityEnableLatencyTimestamps(1), "latency timestamps");
    }
    callbacks_registered_ = true;
    detached_ = false;
  }
  if (config_.subscribe && !subscriber_) {
    CUpti_SubscriberHandle sub;
    if (check(cuptiSubscribe(&sub, OnCallback, this),
              "cuptiSubscribe (another CUPTI tool in this process?)")) {
      subscriber_ = sub;
      callbacks_.Attach(sub);
      if (config_.resource_domain) {
        check(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RESOURCE), "resource callbacks");
      } else {
        for (CUpti_CallbackId cbid : kResourceCallbacks) {
          check(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, cbid), "resource callback");
        }
      }
    }
  }
  // The profiler-API callbacks of a capture range, the calls that make
  // streams and the capture boundaries: wanted once, switched on by every
  // Attach.
  EnableGateCallbacks();
  for (uint32_t cbid : kStreamCreationCallbacks) {
    callbacks_.Want(CallbackSwitch::kStreamFacts, CUPTI_CB_DOMAIN_DRIVER_API, cbid, true);
  }
  if (capture_streams_) capture_streams_->Enable();
  if (late) {
    // Contexts made while CUPTI was away announced no device: describe
    // every device, as the first context's callback would have.
    int count = 0;
    if (cuDeviceGetCount(&count) == CUDA_SUCCESS) {
      std::lock_guard<std::mutex> seen(seen_mu_);
      for (int d = 0; d < count; ++d) {
        if (devices_seen_.insert(static_cast<uint32_t>(d)).second) {
          new_devices_.push_back(static_cast<uint32_t>(d));
        }
      }
    }
  }
}

void Recorder::RecordCupti() {
  AttachCupti();
  SetActivityEnabled(true);
}

void Recorder::PauseCupti() {
  SetActivityEnabled(false);
  ReleaseCupti();
}

// CUPTI with its activity kinds switched off still costs the launching
// thread (PyTorch saw 10-20% after its profiler ended until cuptiFinalize:
// pytorch/pytorch#144455; +88% of an empty launch here): a pause after a
// recording finalizes it, with the entry gate holding every other thread
// out of CUDA meanwhile (docs/recorder-detach.md).
void Recorder::ReleaseCupti(bool only_if_paused) {
  if (!detach_) {
    cuptiActivityFlushAll(0);
    return;
  }
  // Every buffer comes back before CUPTI lets go of them.
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  WaitForCompletions(std::chrono::milliseconds(300));
  // A capture range switches on application threads: one may have started
  // recording again since.
  if (only_if_paused && state_.load() != kPaused) return;
  detach_->NewPause();
  TryDetach();
}

void Recorder::TryDetach() {
  {
    std::lock_guard<std::mutex> lock(cupti_mu_);
    if (!callbacks_registered_ && !subscriber_) return;  // holds nothing of CUPTI
  }
  CuptiDetach::Outcome o = detach_->Run([this] { return FinalizeCupti(); });
  if (o == CuptiDetach::Outcome::kFailed) log_.Log("gpucap: cuptiFinalize failed: pauses keep CUPTI attached");
}

CuptiDetach::Finalized Recorder::FinalizeCupti() {
  // Every other thread is out of CUDA now, or held at its entry. Never wait
  // here for a lock: a thread held at the gate may own it (a capture range's
  // switch on an application thread), so the attempt is let go instead.
  std::unique_lock<std::mutex> switching(switch_mu_, std::try_to_lock);
  if (!switching.owns_lock()) return CuptiDetach::Finalized::kBusy;
  std::unique_lock<std::mutex> lock(cupti_mu_, std::try_to_lock);
  if (!lock.owns_lock() || state_.load() != kPaused || activity_enabled_.load()) {
    return CuptiDetach::Finalized::kBusy;
  }
  if (cuptiFinalize() != CUPTI_SUCCESS) return CuptiDetach::Finalized::kError;
  subscriber_ = nullptr;
  callbacks_.Detach();
  callbacks_registered_ = false;
  detached_ = true;
  return CuptiDetach::Finalized::kYes;
}

void Recorder::OnApiCallback(uint32_t domain, uint32_t cbid, const void* data) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (ApiRecords* records = api_records_.get(); records && cb && records->Records(domain, cbid)) {
    if (cb->callbackSite == CUPTI_API_ENTER) {
      records->OnEnter(domain, cb->correlationId, Now());
    } else {
      uint64_t now = Now();
      uint32_t result = cb->functionReturnValue ? *static_cast<const uint32_t*>(cb->functionReturnValue) : 0;
      uint32_t tid = config_.system_thread_ids ? CurrentOsTid() : static_cast<uint32_t>(pthread_self());
      records->OnExit(domain, cbid, cb->correlationId, result, now, tid);
    }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && IsStreamCreation(cbid) &&
      state_.load(std::memory_order_acquire) != kStopped) {
    // Kept while paused (when CUPTI is held), like graph topology: a stream
    // made now runs work later.
    if (auto s = DescribeCreatedStream(cbid, data, Now(), CurrentOsTid())) AddEvent(*s);
  }
  if (gate_ && OnGateCallback(domain, cbid, data)) return;
  if (CaptureStreams* cs = capture_streams_.get()) {
    if (auto e = cs->OnApi(domain, cbid, data, Now(), CurrentOsTid())) {
      if (state_.load(std::memory_order_acquire) != kStopped) AddEvent(std::move(*e));
    }
  }
}

void Recorder::HoldWhilePaused() {
  if (!config_.pause_detach || !config_.paused_subscribe || !config_.subscribe) return;
  {
    std::lock_guard<std::mutex> lock(cupti_mu_);
    if (!detached_) return;
  }
  // Resource callbacks again, so that graphs built while paused keep their
  // topology; no activity kind is enabled.
  AttachCupti();
}

void Recorder::SetActivityEnabled(bool enabled, bool at_start) {
  // Capture ranges switch from application threads, SIGUSR2 and the size
  // cap from the control thread.
  std::lock_guard<std::mutex> lock(switch_mu_);
  if (!cupti_started_.load() || activity_enabled_.load() == enabled) return;
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
      log_.Log("gpucap: activity kind " + format::ActivityKindName(kind) + " not enabled: " +
              (msg ? msg : "error"));
    }
  }
  if (!want_api) return;
  if (ApiRecords* records = api_records_.get()) {
    // The lean calls through callbacks: no RUNTIME or DRIVER activity kind.
    records->SetOn(enabled);
    for (const auto& [domain, cbid] : records->ids()) {
      callbacks_.Want(CallbackSwitch::kApiRecords, domain, cbid, enabled);
    }
    return;
  }
  // An enable at cuInit (StartCupti) or a later one: a resume.
  SelectApis(config_.api, enabled, enabled && !at_start);
}

}  // namespace gpucap::recorder
