// Which runtime and driver calls become activity records. Recording every
// call costs more than the rest of tracing together (cudaGetDevice alone can
// outnumber launches); the lean set keeps the calls a timeline needs:
// launches, graph launches, copies, memsets, allocations, synchronisation,
// event record and stream waits, graph instantiation.
#ifndef GPUCAP_RECORDER_API_SELECTION_H_
#define GPUCAP_RECORDER_API_SELECTION_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config.h"

namespace gpucap::recorder {

// True when a callback name (as CUPTI gives it, e.g. "cudaLaunchKernel_v7000")
// belongs to the lean set.
bool IsLeanApi(const char* name);

// The lean set's (domain, callback id) pairs, CUPTI's numbers; asked of
// CUPTI once by name (~1200 names) and kept.
const std::vector<std::pair<uint32_t, uint32_t>>& LeanApiIds();

// Turns the selected API records on or off in CUPTI: kAll switches the
// RUNTIME and DRIVER kinds whole, kLean the lean callback ids one by one,
// kNone nothing. Returns how many callback ids kLean switched.
//
// `late`: a resume after CUPTI started (SIGUSR2, a capture range). On the
// H200 (CUPTI 13.0) lean ids enabled one by one then gave no RUNTIME or
// DRIVER record at all (seen again on 2026-12-04, also after the ids were
// switched on and off at cuInit), so a late enable turns both kinds on whole
// and the ids outside the lean set off (the order CUPTI documents for "all
// but a few"); disabling also turns the kinds off.
int SelectApis(ApiSelection selection, bool enable, bool late = false);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_API_SELECTION_H_
