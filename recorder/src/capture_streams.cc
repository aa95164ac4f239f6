#include "capture_streams.h"

#include <cuda.h>
#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace gpucap::recorder {
namespace {

using StreamOf = uintptr_t (*)(const void* params);

// A stream-ordered call whose ENTER notes its stream: (domain, cbid, ptsz,
// where the stream is in its params). Hand-picked: the calls that make a
// node under capture (kernels, copies, sets, host functions, event record /
// wait, stream-ordered allocation, child graphs). A call missing here makes
// its node without a stream, and the builder draws it on CUPTI's stream.
struct StreamOp {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  bool ptsz;
  StreamOf stream;
};

#define GPUCAP_RT(name, params, expr, ptsz)                                                       \
  StreamOp{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##name, ptsz, [](const void* v) { \
             const auto* p = static_cast<const params*>(v);                                       \
             return reinterpret_cast<uintptr_t>(expr);                                            \
           }}
#define GPUCAP_DRV(name, expr, ptsz)                                                              \
  StreamOp{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##name, ptsz, [](const void* v) {   \
             const auto* p = static_cast<const name##_params*>(v);                                \
             return reinterpret_cast<uintptr_t>(expr);                                            \
           }}

const StreamOp kStreamOps[] = {
    GPUCAP_RT(cudaLaunchKernel_v7000, cudaLaunchKernel_v7000_params, p->stream, false),
    GPUCAP_RT(cudaLaunchKernel_ptsz_v7000, cudaLaunchKernel_ptsz_v7000_params, p->stream, true),
    GPUCAP_RT(cudaLaunchKernelExC_v11060, cudaLaunchKernelExC_v11060_params,
              p->config ? p->config->stream : nullptr, false),
    GPUCAP_RT(cudaLaunchKernelExC_ptsz_v11060, cudaLaunchKernelExC_ptsz_v11060_params,
              p->config ? p->config->stream : nullptr, true),
    GPUCAP_RT(cudaLaunchCooperativeKernel_v9000, cudaLaunchCooperativeKernel_v9000_params, p->stream, false),
    GPUCAP_RT(cudaLaunchCooperativeKernel_ptsz_v9000, cudaLaunchCooperativeKernel_ptsz_v9000_params, p->stream,
              true),
    GPUCAP_RT(cudaLaunchHostFunc_v10000, cudaLaunchHostFunc_v10000_params, p->stream, false),
    GPUCAP_RT(cudaLaunchHostFunc_ptsz_v10000, cudaLaunchHostFunc_ptsz_v10000_params, p->stream, true),
    GPUCAP_RT(cudaMemcpyAsync_v3020, cudaMemcpyAsync_v3020_params, p->stream, false),
    GPUCAP_RT(cudaMemcpyAsync_ptsz_v7000, cudaMemcpyAsync_ptsz_v7000_params, p->stream, true),
    GPUCAP_RT(cudaMemcpy2DAsync_v3020, cudaMemcpy2DAsync_v3020_params, p->stream, false),
    GPUCAP_RT(cudaMemcpyToSymbolAsync_v3020, cudaMemcpyToSymbolAsync_v3020_params, p->stream, false),
    GPUCAP_RT(cudaMemcpyFromSymbolAsync_v3020, cudaMemcpyFromSymbolAsync_v3020_params, p->stream, false),
    GPUCAP_RT(cudaMemsetAsync_v3020, cudaMemsetAsync_v3020_params, p->stream, false),
    GPUCAP_RT(cudaMemsetAsync_ptsz_v7000, cudaMemsetAsync_ptsz_v7000_params, p->stream, true),
    GPUCAP_RT(cudaMemset2DAsync_v3020, cudaMemset2DAsync_v3020_params, p->stream, false),
    GPUCAP_RT(cudaEventRecord_v3020, cudaEventRecord_v3020_params, p->stream, false),
    GPUCAP_RT(cudaEventRecord_ptsz_v7000, cudaEventRecord_ptsz_v7000_params, p->stream, true),
    GPUCAP_RT(cudaEventRecordWithFlags_v11010, cudaEventRecordWithFlags_v11010_params, p->stream, false),
    GPUCAP_RT(cudaEventRecordWithFlags_ptsz_v11010, cudaEventRecordWithFlags_ptsz_v11010_params, p->stream, true),
    GPUCAP_RT(cudaStreamWaitEvent_v3020, cudaStreamWaitEvent_v3020_params, p->stream, false),
    GPUCAP_RT(cudaStreamWaitEvent_ptsz_v7000, cudaStreamWaitEvent_ptsz_v7000_params, p->stream, true),
    GPUCAP_RT(cudaMallocAsync_v11020, cudaMallocAsync_v11020_params, p->hStream, false),
    GPUCAP_RT(cudaMallocAsync_ptsz_v11020, cudaMallocAsync_ptsz_v11020_params, p->hStream, true),
    GPUCAP_RT(cudaFreeAsync_v11020, cudaFreeAsync_v11020_params, p->hStream, false),
    GPUCAP_RT(cudaFreeAsync_ptsz_v11020, cudaFreeAsync_ptsz_v11020_params, p->hStream, true),
    GPUCAP_RT(cudaGraphLaunch_v10000, cudaGraphLaunch_v10000_params, p->stream, false),
    GPUCAP_RT(cudaGraphLaunch_ptsz_v10000, cudaGraphLaunch_ptsz_v10000_params, p->stream, true),
    GPUCAP_DRV(cuLaunchKernel, p->hStream, false),
    GPUCAP_DRV(cuLaunchKernel_ptsz, p->hStream, true),
    GPUCAP_DRV(cuLaunchKernelEx, p->config ? p->config->hStream : nullptr, false),
    GPUCAP_DRV(cuLaunchKernelEx_ptsz, p->config ? p->config->hStream : nullptr, true),
    GPUCAP_DRV(cuLaunchHostFunc, p->hStream, false),
    GPUCAP_DRV(cuLaunchHostFunc_ptsz, p->hStream, true),
    GPUCAP_DRV(cuMemcpyAsync, p->hStream, false),
    GPUCAP_DRV(cuMemcpyAsync_ptsz, p->hStream, true),
    GPUCAP_DRV(cuMemcpyHtoDAsync_v2, p->hStream, false),
    GPUCAP_DRV(cuMemcpyHtoDAsync_v2_ptsz, p->hStream, true),
    GPUCAP_DRV(cuMemcpyDtoHAsync_v2, p->hStream, false),
    GPUCAP_DRV(cuMemcpyDtoHAsync_v2_ptsz, p->hStream, true),
    GPUCAP_DRV(cuMemcpyDtoDAsync_v2, p->hStream, false),
    GPUCAP_DRV(cuMemcpyDtoDAsync_v2_ptsz, p->hStream, true),
    GPUCAP_DRV(cuMemsetD8Async, p->hStream, false),
    GPUCAP_DRV(cuMemsetD8Async_ptsz, p->hStream, true),
    GPUCAP_DRV(cuMemsetD32Async, p->hStream, false),
    GPUCAP_DRV(cuMemsetD32Async_ptsz, p->hStream, true),
    GPUCAP_DRV(cuEventRecord, p->hStream, false),
    GPUCAP_DRV(cuEventRecord_ptsz, p->hStream, true),
    GPUCAP_DRV(cuEventRecordWithFlags, p->hStream, false),
    GPUCAP_DRV(cuEventRecordWithFlags_ptsz, p->hStream, true),
    GPUCAP_DRV(cuStreamWaitEvent, p->hStream, false),
    GPUCAP_DRV(cuStreamWaitEvent_ptsz, p->hStream, true),
    GPUCAP_DRV(cuMemAllocAsync, p->hStream, false),
    GPUCAP_DRV(cuMemAllocAsync_ptsz, p->hStream, true),
    GPUCAP_DRV(cuMemFreeAsync, p->hStream, false),
    GPUCAP_DRV(cuMemFreeAsync_ptsz, p->hStream, true),
    GPUCAP_DRV(cuGraphLaunch, p->hStream, false),
    GPUCAP_DRV(cuGraphLaunch_ptsz, p->hStream, true),
};

// Capture boundaries: always on. mode < 0: the call takes none.
enum class Boundary : uint8_t { kBegin, kEnd };
struct BoundaryOp {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  bool ptsz;
  Boundary kind;
  StreamOf stream;
  int (*mode)(const void* params);
};

#define GPUCAP_RT_B(name, kind, ptsz, mode_expr)                                                          \
  BoundaryOp{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##name, ptsz, kind,                   \
             [](const void* v) { return reinterpret_cast<uintptr_t>(static_cast<const name##_params*>(v)->stream); }, \
             [](const void* v) { [[maybe_unused]] const auto* p = static_cast<const name##_params*>(v); return int(mode_expr); }}
#define GPUCAP_DRV_B(name, kind, ptsz, mode_expr)                                                         \
  BoundaryOp{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##name, ptsz, kind,                     \
             [](const void* v) { return reinterpret_cast<uintptr_t>(static_cast<const name##_params*>(v)->hStream); }, \
             [](const void* v) { [[maybe_unused]] const auto* p = static_cast<const name##_params*>(v); return int(mode_expr); }}

const BoundaryOp kBoundaries[] = {
    GPUCAP_RT_B(cudaStreamBeginCapture_v10000, Boundary::kBegin, false, p->mode),
    GPUCAP_RT_B(cudaStreamBeginCapture_ptsz_v10000, Boundary::kBegin, true, p->mode),
    GPUCAP_RT_B(cudaStreamBeginCaptureToGraph_v12030, Boundary::kBegin, false, p->mode),
    GPUCAP_RT_B(cudaStreamBeginCaptureToGraph_ptsz_v12030, Boundary::kBegin, true, p->mode),
    GPUCAP_RT_B(cudaStreamEndCapture_v10000, Boundary::kEnd, false, -1),
    GPUCAP_RT_B(cudaStreamEndCapture_ptsz_v10000, Boundary::kEnd, true, -1),
    GPUCAP_DRV_B(cuStreamBeginCapture, Boundary::kBegin, false, -1),
    GPUCAP_DRV_B(cuStreamBeginCapture_ptsz, Boundary::kBegin, true, -1),
    GPUCAP_DRV_B(cuStreamBeginCapture_v2, Boundary::kBegin, false, p->mode),
    GPUCAP_DRV_B(cuStreamBeginCapture_v2_ptsz, Boundary::kBegin, true, p->mode),
    GPUCAP_DRV_B(cuStreamBeginCaptureToGraph, Boundary::kBegin, false, p->mode),
    GPUCAP_DRV_B(cuStreamBeginCaptureToGraph_ptsz, Boundary::kBegin, true, p->mode),
    GPUCAP_DRV_B(cuStreamEndCapture, Boundary::kEnd, false, -1),
    GPUCAP_DRV_B(cuStreamEndCapture_ptsz, Boundary::kEnd, true, -1),
};

template <typename T, size_t N>
const T* Find(const T (&table)[N], uint32_t domain, uint32_t cbid) {
  for (const T& t : table) {
    if (t.domain == domain && t.cbid == cbid) return &t;
  }
  return nullptr;
}

// The calls in progress on this thread: a runtime call and the driver call
// it makes. `generation` ties an entry to one switch-on of the ids: an
// entry left without its EXIT (ids switched off mid-call) is stale.
struct Call {
  uint32_t domain, cbid;
  uint64_t handle;
  uint32_t cupti_stream;
  uint32_t correlation;
  uint64_t generation;
};
constexpr int kDepth = 4;
thread_local Call t_calls[kDepth];
thread_local int t_depth = 0;
std::atomic<uint64_t> g_generation{1};

// CUDA's handle for the stream a call names: a ptsz call's 0 is the
// per-thread stream.
CUstream Handle(uintptr_t raw, bool ptsz) {
  if (raw == 0 && ptsz) return CU_STREAM_PER_THREAD;
  return reinterpret_cast<CUstream>(raw);
}

// CUPTI's id of the stream a call names. CUDA's special handles name the
// default streams (CU_STREAM_LEGACY 0x1, CU_STREAM_PER_THREAD 0x2), which
// cuptiGetStreamIdEx does not take as handles, nor as the NULL stream
// without a context (both failed on the H200 for capture_lanes' k_pt): they
// are the NULL stream of the call's context, with the per-thread flag for
// 0x2 (and for a ptsz call's NULL).
bool CuptiStreamId(CUcontext context, CUstream handle, bool ptsz, uint32_t* id) {
  bool special = handle == CU_STREAM_PER_THREAD || handle == CU_STREAM_LEGACY;
  if (!special && cuptiGetStreamIdEx(nullptr, handle, ptsz ? 1 : 0, id) == CUPTI_SUCCESS) return true;
  if (!special && handle != nullptr) return false;
  uint8_t per_thread = handle == CU_STREAM_PER_THREAD || (handle == nullptr && ptsz) ? 1 : 0;
  if (context == nullptr && cuCtxGetCurrent(&context) != CUDA_SUCCESS) return false;
  return context != nullptr && cuptiGetStreamIdEx(context, nullptr, per_thread, id) == CUPTI_SUCCESS;
}

uint64_t CaptureIdOf(CUstream stream, CUgraph* graph) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  if (cuStreamGetCaptureInfo(stream, &status, &id, graph, nullptr, nullptr, nullptr) != CUDA_SUCCESS) return 0;
  return status == CU_STREAM_CAPTURE_STATUS_NONE ? 0 : id;
}

bool Succeeded(const CUpti_CallbackData* cb) {
  // cudaError_t and CUresult alike: 0 is success.
  return cb->functionReturnValue != nullptr && *static_cast<const int*>(cb->functionReturnValue) == 0;
}

}  // namespace

void CaptureStreams::Enable() {
  std::lock_guard<std::mutex> lock(enable_mu_);
  for (const BoundaryOp& b : kBoundaries) callbacks_->Want(CallbackSwitch::kCaptureBoundaries, b.domain, b.cbid, true);
}

void CaptureStreams::SwitchStreamOps(bool on) {
  // Under enable_mu_.
  if (stream_ops_on_ == on) return;
  auto t0 = std::chrono::steady_clock::now();
  for (const StreamOp& op : kStreamOps) callbacks_->Want(CallbackSwitch::kCaptureStreamOps, op.domain, op.cbid, on);
  stream_ops_on_ = on;
  if (!on) g_generation.fetch_add(1, std::memory_order_relaxed);
  switches_.fetch_add(1, std::memory_order_relaxed);
  switch_ns_.fetch_add(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                 std::chrono::steady_clock::now() - t0)
                                                 .count()),
                       std::memory_order_relaxed);
}

std::optional<format::GraphEvent> CaptureStreams::OnApi(uint32_t domain, uint32_t cbid,
                                                        const void* data, uint64_t now_ns, uint32_t os_tid) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb == nullptr || cb->functionParams == nullptr) return std::nullopt;
  uint64_t generation = g_generation.load(std::memory_order_relaxed);
  if (const StreamOp* op = Find(kStreamOps, domain, cbid)) {
    if (cb->callbackSite == CUPTI_API_ENTER) {
      // Stale entries (their EXIT never came) go first.
      while (t_depth > 0 && t_calls[t_depth - 1].generation != generation) t_depth--;
      if (t_depth == kDepth) return std::nullopt;
      CUstream h = Handle(op->stream(cb->functionParams), op->ptsz);
      uint32_t id = format::kNoCaptureStream;
      if (!CuptiStreamId(cb->context, h, op->ptsz, &id)) {
        id = format::kNoCaptureStream;
        unresolved_.fetch_add(1, std::memory_order_relaxed);
      }
      t_calls[t_depth++] = {domain, cbid, reinterpret_cast<uint64_t>(h), id, cb->correlationId, generation};
    } else if (t_depth > 0 && t_calls[t_depth - 1].domain == domain && t_calls[t_depth - 1].cbid == cbid) {
      t_depth--;
    }
    return std::nullopt;
  }
  const BoundaryOp* b = Find(kBoundaries, domain, cbid);
  if (b == nullptr) return std::nullopt;
  CUstream h = Handle(b->stream(cb->functionParams), b->ptsz);
  if (b->kind == Boundary::kEnd && cb->callbackSite == CUPTI_API_ENTER) {
    // The capture's id while the stream still captures, for the EXIT.
    if (cb->correlationData != nullptr) *cb->correlationData = CaptureIdOf(h, nullptr);
    return std::nullopt;
  }
  if (cb->callbackSite != CUPTI_API_EXIT) return std::nullopt;
  format::GraphEvent e;
  e.timestamp_ns = now_ns;
  e.os_tid = os_tid;
  e.capture_stream_handle = reinterpret_cast<uint64_t>(h);
  uint32_t stream_id = format::kNoCaptureStream;
  if (CuptiStreamId(cb->context, h, b->ptsz, &stream_id)) e.capture_stream = stream_id;
  std::lock_guard<std::mutex> lock(enable_mu_);
  if (b->kind == Boundary::kBegin) {
    if (!Succeeded(cb)) return std::nullopt;
    CUgraph graph = nullptr;
    uint64_t id = CaptureIdOf(h, &graph);
    // A runtime call's nested driver call ends first: one event per capture.
    if (id == 0 || std::find(open_ids_.begin(), open_ids_.end(), id) != open_ids_.end()) return std::nullopt;
    open_ids_.push_back(id);
    open_.store(static_cast<int>(open_ids_.size()), std::memory_order_relaxed);
    SwitchStreamOps(true);
    begun_.fetch_add(1, std::memory_order_relaxed);
    e.kind = format::GraphEventKind::kCaptureBegan;
    e.capture_id = id;
    e.capture_mode = static_cast<uint32_t>(std::max(b->mode(cb->functionParams), 0));
    uint32_t graph_id = 0;
    if (graph != nullptr && cuptiGetGraphId(graph, &graph_id) == CUPTI_SUCCESS) e.graph_id = graph_id;
    return e;
  }
  // EndCapture EXIT: the capture is over whatever the result (an
  // invalidated capture ends too).
  uint64_t id = cb->correlationData != nullptr ? *cb->correlationData : 0;
  auto it = std::find(open_ids_.begin(), open_ids_.end(), id);
  if (id == 0 || it == open_ids_.end()) return std::nullopt;
  open_ids_.erase(it);
  open_.store(static_cast<int>(open_ids_.size()), std::memory_order_relaxed);
  if (open_ids_.empty()) SwitchStreamOps(false);
  ended_.fetch_add(1, std::memory_order_relaxed);
  e.kind = format::GraphEventKind::kCaptureEnded;
  e.capture_id = id;
  return e;
}

void CaptureStreams::FillNodeCreated(format::GraphEvent* e) {
  uint64_t generation = g_generation.load(std::memory_order_relaxed);
  for (int d = t_depth - 1; d >= 0; --d) {
    const Call& c = t_calls[d];
    if (c.generation != generation) break;
    if (c.cupti_stream == format::kNoCaptureStream) continue;  // unresolved: try the outer call
    e->capture_stream = c.cupti_stream;
    e->capture_stream_handle = c.handle;
    e->api_correlation_id = c.correlation;
    with_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  without_.fetch_add(1, std::memory_order_relaxed);
}

CaptureStreamStats CaptureStreams::stats() const {
  CaptureStreamStats s;
  s.captures_begun = begun_.load();
  s.captures_ended = ended_.load();
  s.switches = switches_.load();
  s.switch_ns_total = switch_ns_.load();
  s.unresolved = unresolved_.load();
  s.nodes_with_stream = with_.load();
  s.nodes_without_stream = without_.load();
  return s;
}

}  // namespace gpucap::recorder
