// Which runtime and driver calls become activity records. Recording every
// call costs more than the rest of tracing together (cudaGetDevice alone can
// outnumber launches); the lean set keeps the calls a timeline needs:
// launches, graph launches, copies, memsets, allocations, synchronisation,
// event record and stream waits, graph instantiation.
#ifndef GPUCAP_RECORDER_API_SELECTION_H_
#define GPUCAP_RECORDER_API_SELECTION_H_

#include <string>

#include "config.h"

namespace gpucap::recorder {

// True when a callback name (as CUPTI gives it, e.g. "cudaLaunchKernel_v7000")
// belongs to the lean set.
bool IsLeanApi(const char* name);

struct ApiSelectionResult {
  int runtime_cbids = 0;
  int driver_cbids = 0;
  std::string error;
};

// Applies the selection to CUPTI. kAll enables the RUNTIME and DRIVER kinds
// whole; kLean enables the lean callback ids one by one; kNone neither.
ApiSelectionResult ApplyApiSelection(ApiSelection selection);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_API_SELECTION_H_
