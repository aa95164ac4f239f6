#include "api_selection.h"

#include <cupti.h>

#include <cstring>

namespace gpucap::recorder {
namespace {

// Prefixes of the calls worth a record. "cudaLaunch" covers the kernel,
// cooperative and host-function launches; allocation prefixes cover the
// async forms.
constexpr const char* kLeanPrefixes[] = {
    "cudaLaunch",          "cudaGraphLaunch",       "cudaGraphInstantiate", "cudaGraphExecUpdate",
    "cudaGraphUpload",     "cudaStreamBeginCapture", "cudaStreamEndCapture", "cudaMemcpy",
    "cudaMemset",          "cudaMalloc",            "cudaFree",             "cudaHostAlloc",
    "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaEventRecord",
    "cudaStreamWaitEvent", "cuLaunch",              "cuGraphLaunch",        "cuGraphInstantiate",
    "cuGraphExecUpdate",   "cuGraphUpload",         "cuStreamBeginCapture", "cuStreamEndCapture",
    "cuMemcpy",            "cuMemset",              "cuMemAlloc",           "cuMemFree",
    "cuMemHostAlloc",      "cuStreamSynchronize",   "cuCtxSynchronize",     "cuEventSynchronize",
    "cuEventRecord",       "cuStreamWaitEvent",
};

}  // namespace

bool IsLeanApi(const char* name) {
  if (!name) return false;
  for (const char* p : kLeanPrefixes) {
    if (std::strncmp(name, p, std::strlen(p)) == 0) return true;
  }
  return false;
}

int SelectApis(ApiSelection selection, bool enable) {
  if (selection == ApiSelection::kAll) {
    for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER}) {
      if (enable) {
        cuptiActivityEnable(kind);
      } else {
        cuptiActivityDisable(kind);
      }
    }
    return 0;
  }
  if (selection != ApiSelection::kLean) return 0;
  int switched = 0;
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    CUpti_CallbackId end = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                               ? static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                               : static_cast<CUpti_CallbackId>(CUPTI_DRIVER_TRACE_CBID_SIZE);
    for (CUpti_CallbackId cbid = 1; cbid < end; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !IsLeanApi(name)) continue;
      CUptiResult r = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? cuptiActivityEnableRuntimeApi(cbid, enable)
                                                            : cuptiActivityEnableDriverApi(cbid, enable);
      switched += r == CUPTI_SUCCESS;
    }
  }
  return switched;
}

}  // namespace gpucap::recorder
