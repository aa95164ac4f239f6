// Where a loaded object's code lies: the executable segments of the shared
// object (or program) that holds an address. The recorder exempts libcupti's
// code from the entry gate with it (cupti_detach.h); the gate tells the
// driver's functions from the data words of its export tables with it
// (gate_preload.cc). Uses dladdr and dl_iterate_phdr only (no allocation
// beyond the result).
#ifndef GPUCAP_RECORDER_CODE_RANGES_H_
#define GPUCAP_RECORDER_CODE_RANGES_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace gpucap::recorder {

// [begin, end) of the executable segments of the object holding `symbol`;
// empty when no loaded object holds it.
std::vector<std::pair<const void*, const void*>> CodeRangesOf(const void* symbol);

// Whether `p` lies in an executable segment of the object holding `symbol`.
bool InCodeOf(const void* p, const void* symbol);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CODE_RANGES_H_
