#include "gpucap/builder/trace_model.h"

#include "gpucap/builder/trace_keys.h"

namespace gpucap::builder {

std::string_view CategoryName(Category c) {
  switch (c) {
    case Category::kKernel: return trace_keys::kCatKernel;
    case Category::kGpuMemcpy: return trace_keys::kCatGpuMemcpy;
    case Category::kGpuMemset: return trace_keys::kCatGpuMemset;
    case Category::kCudaRuntime: return trace_keys::kCatCudaRuntime;
    case Category::kCudaDriver: return trace_keys::kCatCudaDriver;
    case Category::kCudaSync: return trace_keys::kCatCudaSync;
    case Category::kGpuUserAnnotation: return trace_keys::kCatGpuUserAnnotation;
    case Category::kUserAnnotation: return trace_keys::kCatUserAnnotation;
    case Category::kCpuOp: return trace_keys::kCatCpuOp;
    case Category::kOverhead: return trace_keys::kCatOverhead;
    case Category::kCpuInstant: return trace_keys::kCatCpuInstant;
    case Category::kCudaEvent: return trace_keys::kCatCudaEvent;
    case Category::kHostNode: return trace_keys::kCatHostNode;
    case Category::kCudaGraph: return trace_keys::kCatCudaGraph;
  }
  return "unknown";
}

std::string_view FlowKindName(FlowKind k) {
  switch (k) {
    case FlowKind::kLaunch: return trace_keys::kFlowLaunch;
    case FlowKind::kGraphDependency: return trace_keys::kFlowGraphDependency;
    case FlowKind::kForwardBackward: return trace_keys::kFlowForwardBackward;
  }
  return "flow";
}

}  // namespace gpucap::builder
