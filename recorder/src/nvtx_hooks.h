// gpucap as an NVTX tool. NVTX v3 is header-only: every shared object that
// uses it (libtorch, cuBLAS, the application) initialises its own copy and
// asks the library named by NVTX_INJECTION64_PATH to fill that copy's
// callback tables. Each call fills one table with gpucap's handlers.
#ifndef GPUCAP_RECORDER_NVTX_HOOKS_H_
#define GPUCAP_RECORDER_NVTX_HOOKS_H_

#include <cstdint>

struct nvtxExtModuleInfo_t;

namespace gpucap::recorder {

// `get_export_table` is NVTX's NvtxGetExportTableFunc_t. The handlers send
// events to the process's recorder (process_recorder.h) while it records.
// Returns false when the NVTX copy offers no callback table.
bool InstallNvtxHooks(const void* (*get_export_table)(uint32_t));

// Fills an NVTX extension module's slots when it is the payload extension
// (schemas, enums, nvtx*Payload calls); false for other modules. Events go
// to the process's recorder, as the core handlers' do.
bool InstallNvtxPayloadHooks(nvtxExtModuleInfo_t* info);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_NVTX_HOOKS_H_
