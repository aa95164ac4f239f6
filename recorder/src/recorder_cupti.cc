// The recorder's side of CUPTI: the functions CUPTI calls (the buffer
// callbacks, which find the recorder through the process's one global, and
// the subscriber's resource and API callbacks), starting the session at
// cuInit, and what each attach switches on for the recorder's parts. The
// hold on CUPTI itself is cupti_session.h's; the buffers cupti_buffers.h's.
#include <cuda.h>
#include <cupti.h>

#include <pthread.h>
#include <unistd.h>

#include "api_selection.h"
#include "graph_events.h"
#include "host_node_timer.h"
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

}  // namespace

CuptiSession::Entry Recorder::CuptiEntry() { return {BufferRequested, BufferCompleted, OnCallback, this}; }

void Recorder::StartCupti() {
  if (!cupti_.MarkStarted()) return;
  // Made before any callback can reach it, and kept until the process ends.
  if (config_.capture_streams && config_.graphs) {
    capture_streams_ = std::make_unique<CaptureStreams>(cupti_.callbacks());
  }
  // Callback API records need the subscriber; `all` keeps CUPTI's records.
  if (config_.api_source == ApiRecordSource::kCallback && config_.api == ApiSelection::kLean && config_.subscribe) {
    BufferPool* pool = buffers_->pool();
    api_records_ = std::make_unique<ApiRecords>(
        LeanApiIds(), pool->buffer_bytes(), static_cast<uint32_t>(getpid()), [pool] { return pool->Take(); },
        [this](uint8_t* buffer, size_t valid) { buffers_->OnFilled(buffer, valid); });
  }
  bool recording = state_.load() == kRecording;
  // A recorder that starts paused holds nothing of CUPTI (CUPTI initialised
  // costs every CUDA call ~290 instructions) unless something must be seen
  // while paused: graphs built meanwhile (GPUCAP_PAUSED_GRAPHS=1), the
  // cudaProfilerStart that opens a capture range, the first context that PM
  // sampling is configured in. Its first recording attaches (CuptiSession::Attach).
  bool profiler_api_gate = capture_.gated() && config_.capture.source == CaptureRangeSpec::Source::kProfilerApi;
  cupti_.Start(recording || config_.paused_subscribe || profiler_api_gate || config_.pm_counters, recording,
               api_records_.get());
}

// Under the session's attachment lock, after the subscriber.
void Recorder::OnCuptiAttached(bool late) {
  // The profiler-API callbacks of a capture range, the calls that make
  // streams and the capture boundaries: wanted once, switched on by every
  // Attach.
  capture_.EnableCallbacks();
  for (uint32_t cbid : kStreamCreationCallbacks) {
    cupti_.callbacks()->Want(CallbackSwitch::kStreamFacts, CUPTI_CB_DOMAIN_DRIVER_API, cbid, true);
  }
  if (capture_streams_) capture_streams_->Enable();
  if (late) {
    // Contexts made while CUPTI was away announced no device: describe
    // every device, as the first context's callback would have.
    int count = 0;
    if (cuDeviceGetCount(&count) == CUDA_SUCCESS) facts_.seen()->SeeDevices(count);
  }
}

void Recorder::OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  buffers_->OnRequested(buffer, size, max_records);
}

void Recorder::OnBufferCompleted(uint32_t context_id, uint32_t stream_id, uint8_t* buffer, size_t size,
                                 size_t valid, size_t dropped) {
  buffers_->OnCompleted(context_id, stream_id, buffer, size, valid, dropped);
}

void Recorder::OnResource(uint32_t cbid, const void* data) {
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_CONTEXT_CREATED: {
      const auto* rd = static_cast<const CUpti_ResourceData*>(data);
      uint32_t device = 0;
      if (rd && rd->context && cuptiGetDeviceId(rd->context, &device) == CUPTI_SUCCESS) {
        bool first = facts_.seen()->SeeDevice(device);
        // Described (and its NVML counters started) on the control thread's
        // next pass, not its next one-second tick.
        if (first) facts_.DeviceSeen();
        // Configured here, on the creating thread with the new context
        // current and the device still idle: from the control thread, with
        // the device busy, cuptiPmSamplingSetConfig fails.
        if (first && config_.pm_counters) pm_.Start(device, rd->context);
      }
      return;
    }
    case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING: {
      const auto* rd = static_cast<const CUpti_ResourceData*>(data);
      if (rd && rd->context && config_.pm_counters) pm_.StopFor(rd->context);
      return;
    }
    case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
      // Name memory of an unloaded module may be reused for other names.
      buffers_->ForgetStrings();
      return;
    default:
      break;
  }
  if (!config_.graphs || state_.load(std::memory_order_acquire) == kStopped) return;
  // Topology is kept while paused: a graph built now may be replayed later.
  if (InHostNodeWrap()) return;  // our own parameter change, not the application's
  auto e = GraphEventFor(cbid, data, Now(), CurrentOsTid());
  if (!e) return;
  if (config_.host_node_times) WrapHostNode(data, *e);
  if (capture_streams_ && e->kind == format::GraphEventKind::kNodeCreated) {
    capture_streams_->FillNodeCreated(&*e);
    e->api_correlation_id = CorrelationShift::Apply(e->api_correlation_id, cupti_.correlations()->shift());
  }
  AddEvent(std::move(*e));
}

void Recorder::OnApiCallback(uint32_t domain, uint32_t cbid, const void* data) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (ApiRecords* records = api_records_.get(); records && cb && records->Records(domain, cbid)) {
    uint32_t correlation = CorrelationShift::Apply(cb->correlationId, cupti_.correlations()->shift());
    if (cb->callbackSite == CUPTI_API_ENTER) {
      records->OnEnter(domain, correlation, Now());
    } else {
      uint64_t now = Now();
      uint32_t result = cb->functionReturnValue ? *static_cast<const uint32_t*>(cb->functionReturnValue) : 0;
      uint32_t tid = config_.system_thread_ids ? CurrentOsTid() : static_cast<uint32_t>(pthread_self());
      records->OnExit(domain, cbid, correlation, result, now, tid);
    }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && IsStreamCreation(cbid) &&
      state_.load(std::memory_order_acquire) != kStopped) {
    // Kept while paused (when CUPTI is held), like graph topology: a stream
    // made now runs work later.
    if (auto s = DescribeCreatedStream(cbid, data, Now(), CurrentOsTid())) AddEvent(*s);
  }
  if (capture_.gated() && capture_.OnCallback(domain, cbid, data)) return;
  if (CaptureStreams* cs = capture_streams_.get()) {
    if (auto e = cs->OnApi(domain, cbid, data, Now(), CurrentOsTid())) {
      if (state_.load(std::memory_order_acquire) != kStopped) AddEvent(std::move(*e));
    }
  }
}

}  // namespace gpucap::recorder
