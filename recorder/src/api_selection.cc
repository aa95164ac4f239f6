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

ApiSelectionResult ApplyApiSelection(ApiSelection selection) {
  ApiSelectionResult r;
  if (selection == ApiSelection::kNone) return r;
  if (selection == ApiSelection::kAll) {
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) != CUPTI_SUCCESS) r.error += "runtime ";
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER) != CUPTI_SUCCESS) r.error += "driver ";
    r.runtime_cbids = r.driver_cbids = -1;
    return r;
  }
  for (CUpti_CallbackId cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) != CUPTI_SUCCESS) continue;
    if (IsLeanApi(name) && cuptiActivityEnableRuntimeApi(cbid, 1) == CUPTI_SUCCESS) ++r.runtime_cbids;
  }
  for (CUpti_CallbackId cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) != CUPTI_SUCCESS) continue;
    if (IsLeanApi(name) && cuptiActivityEnableDriverApi(cbid, 1) == CUPTI_SUCCESS) ++r.driver_cbids;
  }
  return r;
}

}  // namespace gpucap::recorder
