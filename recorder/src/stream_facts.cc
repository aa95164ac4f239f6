#include "stream_facts.h"

#include <cuda.h>
#include <cupti.h>

namespace gpucap::recorder {

std::optional<format::StreamInfo> DescribeStream(const void* resource_data, uint64_t timestamp_ns,
                                                 uint32_t os_tid) {
  const auto* rd = static_cast<const CUpti_ResourceData*>(resource_data);
  if (rd == nullptr || rd->context == nullptr || rd->resourceHandle.stream == nullptr) return std::nullopt;
  CUstream stream = rd->resourceHandle.stream;
  format::StreamInfo s;
  s.timestamp_ns = timestamp_ns;
  s.os_tid = os_tid;
  if (cuptiGetStreamIdEx(rd->context, stream, 0, &s.stream_id) != CUPTI_SUCCESS) return std::nullopt;
  if (cuptiGetContextId(rd->context, &s.context_id) != CUPTI_SUCCESS) return std::nullopt;
  if (cuptiGetDeviceId(rd->context, &s.device) != CUPTI_SUCCESS) return std::nullopt;
  // Both are plain reads of what the creating call set; a stream they fail
  // on still gets its ids, with priority and flags 0 (the defaults).
  int priority = 0;
  if (cuStreamGetPriority(stream, &priority) == CUDA_SUCCESS) s.priority = priority;
  unsigned int flags = 0;
  if (cuStreamGetFlags(stream, &flags) == CUDA_SUCCESS) s.flags = flags;
  return s;
}

}  // namespace gpucap::recorder
