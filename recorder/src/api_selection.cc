#include "api_selection.h"

#include <cupti.h>

#include <cstring>
#include <vector>

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

// Every callback id CUPTI names, runtime then driver, with its lean mark:
// asked of CUPTI once (~1200 names), since capture ranges switch at every
// sampled step and the names cost more than the switch.
struct NamedId {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  bool lean;
};

const std::vector<NamedId>& NamedIds() {
  static const std::vector<NamedId> ids = [] {
    std::vector<NamedId> out;
    for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
      CUpti_CallbackId end = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                                 ? static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                 : static_cast<CUpti_CallbackId>(CUPTI_DRIVER_TRACE_CBID_SIZE);
      for (CUpti_CallbackId cbid = 1; cbid < end; ++cbid) {
        const char* name = nullptr;
        if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS) continue;
        out.push_back({domain, cbid, IsLeanApi(name)});
      }
    }
    return out;
  }();
  return ids;
}

}  // namespace

const std::vector<std::pair<uint32_t, uint32_t>>& LeanApiIds() {
  static const std::vector<std::pair<uint32_t, uint32_t>> ids = [] {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    for (const NamedId& id : NamedIds()) {
      if (id.lean) out.emplace_back(static_cast<uint32_t>(id.domain), static_cast<uint32_t>(id.cbid));
    }
    return out;
  }();
  return ids;
}

bool IsLeanApi(const char* name) {
  if (!name) return false;
  for (const char* p : kLeanPrefixes) {
    if (std::strncmp(name, p, std::strlen(p)) == 0) return true;
  }
  return false;
}

int SelectApis(ApiSelection selection, bool enable, bool late) {
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
  const std::vector<NamedId>& ids = NamedIds();
  auto set = [](const NamedId& id, bool on) {
    return id.domain == CUPTI_CB_DOMAIN_RUNTIME_API ? cuptiActivityEnableRuntimeApi(id.cbid, on)
                                                    : cuptiActivityEnableDriverApi(id.cbid, on);
  };
  int switched = 0;
  if (late && enable) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
    for (const NamedId& id : ids) {
      if (id.lean) {
        switched += set(id, true) == CUPTI_SUCCESS;
      } else {
        set(id, false);
      }
    }
    return switched;
  }
  for (const NamedId& id : ids) {
    if (id.lean) switched += set(id, enable) == CUPTI_SUCCESS;
  }
  if (!enable) {
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
  }
  return switched;
}

}  // namespace gpucap::recorder
