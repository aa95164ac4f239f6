#include "gpucap/format/activity_kind.h"

namespace gpucap::format {

std::string ActivityKindName(uint32_t kind) {
  switch (static_cast<ActivityKind>(kind)) {
    case ActivityKind::kMemcpy: return "MEMCPY";
    case ActivityKind::kMemset: return "MEMSET";
    case ActivityKind::kKernel: return "KERNEL";
    case ActivityKind::kDriver: return "DRIVER";
    case ActivityKind::kRuntime: return "RUNTIME";
    case ActivityKind::kDevice: return "DEVICE";
    case ActivityKind::kContext: return "CONTEXT";
    case ActivityKind::kConcurrentKernel: return "CONCURRENT_KERNEL";
    case ActivityKind::kName: return "NAME";
    case ActivityKind::kMarker: return "MARKER";
    case ActivityKind::kMarkerData: return "MARKER_DATA";
    case ActivityKind::kOverhead: return "OVERHEAD";
    case ActivityKind::kEnvironment: return "ENVIRONMENT";
    case ActivityKind::kMemcpy2: return "MEMCPY2";
    case ActivityKind::kFunction: return "FUNCTION";
    case ActivityKind::kModule: return "MODULE";
    case ActivityKind::kCudaEvent: return "CUDA_EVENT";
    case ActivityKind::kStream: return "STREAM";
    case ActivityKind::kSynchronization: return "SYNCHRONIZATION";
    case ActivityKind::kExternalCorrelation: return "EXTERNAL_CORRELATION";
    case ActivityKind::kMemory2: return "MEMORY2";
    case ActivityKind::kMemoryPool: return "MEMORY_POOL";
    case ActivityKind::kGraphTrace: return "GRAPH_TRACE";
    case ActivityKind::kJit: return "JIT";
  }
  return "kind " + std::to_string(kind);
}

}  // namespace gpucap::format
