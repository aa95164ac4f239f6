#include "gpucap/builder/trace_model.h"

namespace gpucap::builder {

std::string_view CategoryName(Category c) {
  switch (c) {
    case Category::kKernel: return "kernel";
    case Category::kGpuMemcpy: return "gpu_memcpy";
    case Category::kGpuMemset: return "gpu_memset";
    case Category::kCudaRuntime: return "cuda_runtime";
    case Category::kCudaDriver: return "cuda_driver";
    case Category::kCudaSync: return "cuda_sync";
    case Category::kGpuUserAnnotation: return "gpu_user_annotation";
    case Category::kUserAnnotation: return "user_annotation";
    case Category::kOverhead: return "overhead";
    case Category::kCpuInstant: return "cpu_instant_event";
    case Category::kCudaEvent: return "cuda_event";
  }
  return "unknown";
}

std::string_view FlowKindName(FlowKind k) {
  switch (k) {
    case FlowKind::kLaunch: return "ac2g";
    case FlowKind::kGraphDependency: return "graph_dependency";
  }
  return "flow";
}

}  // namespace gpucap::builder
