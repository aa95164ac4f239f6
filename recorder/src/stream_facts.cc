#include "stream_facts.h"

#include <cuda.h>
#include <cupti.h>

namespace gpucap::recorder {

static_assert(kStreamCreationCallbacks[0] == CUPTI_DRIVER_TRACE_CBID_cuStreamCreate);
static_assert(kStreamCreationCallbacks[1] == CUPTI_DRIVER_TRACE_CBID_cuStreamCreateWithPriority);

std::optional<CreatedStream> StreamCreationParams(uint32_t driver_cbid, const void* params) {
  if (params == nullptr) return std::nullopt;
  CreatedStream c;
  if (driver_cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamCreate) {
    const auto* p = static_cast<const cuStreamCreate_params*>(params);
    if (p->phStream == nullptr) return std::nullopt;
    c.stream = *p->phStream;
    c.flags = p->Flags;
  } else if (driver_cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamCreateWithPriority) {
    const auto* p = static_cast<const cuStreamCreateWithPriority_params*>(params);
    if (p->phStream == nullptr) return std::nullopt;
    c.stream = *p->phStream;
    c.flags = p->flags;
    c.priority = p->priority;
  } else {
    return std::nullopt;
  }
  return c;
}

std::optional<format::StreamInfo> DescribeCreatedStream(uint32_t driver_cbid, const void* callback_data,
                                                        uint64_t timestamp_ns, uint32_t os_tid) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(callback_data);
  if (cb == nullptr || cb->callbackSite != CUPTI_API_EXIT || cb->context == nullptr) return std::nullopt;
  if (cb->functionReturnValue == nullptr || *static_cast<const CUresult*>(cb->functionReturnValue) != CUDA_SUCCESS) {
    return std::nullopt;
  }
  std::optional<CreatedStream> made = StreamCreationParams(driver_cbid, cb->functionParams);
  if (!made || made->stream == nullptr) return std::nullopt;
  format::StreamInfo s;
  s.timestamp_ns = timestamp_ns;
  s.os_tid = os_tid;
  s.priority = made->priority;
  s.flags = made->flags;
  CUstream stream = static_cast<CUstream>(made->stream);
  if (cuptiGetStreamIdEx(cb->context, stream, 0, &s.stream_id) != CUPTI_SUCCESS) return std::nullopt;
  if (cuptiGetContextId(cb->context, &s.context_id) != CUPTI_SUCCESS) return std::nullopt;
  if (cuptiGetDeviceId(cb->context, &s.device) != CUPTI_SUCCESS) return std::nullopt;
  return s;
}

}  // namespace gpucap::recorder
