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

// Turns the selected API records on or off in CUPTI: kAll switches the
// RUNTIME and DRIVER kinds whole, kLean the lean callback ids one by one,
// kNone nothing. Returns how many callback ids kLean switched.
int SelectApis(ApiSelection selection, bool enable);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_API_SELECTION_H_
