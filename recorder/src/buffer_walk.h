// The one pass over a completed CUPTI buffer on the record path: it does not
// decode records for output, it only gathers what the raw bytes cannot carry
// (the text behind name pointers) and what lets the builder skip the buffer
// later (time span, counts per kind, record strides). The one change it makes
// to the records: their correlation ids are shifted by the CUPTI session's
// shift (correlation_shift.h), so that ids stay unique across detaches.
#ifndef GPUCAP_RECORDER_BUFFER_WALK_H_
#define GPUCAP_RECORDER_BUFFER_WALK_H_

#include <cstddef>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "correlation_shift.h"
#include "gpucap/format/model.h"
#include "string_interner.h"

namespace gpucap::recorder {

struct WalkResult {
  format::ChunkInfo info;
  std::vector<format::SmallMessage> strings;  // definitions for pointers new in this buffer
  std::vector<uint32_t> threads;              // OS tids of API records, each once per buffer
  uint32_t highest_correlation = 0;           // the highest id in the buffer, shifted
};

// `correlation_shift` is added to every non-zero correlation id of the kinds
// the builder joins by (kernels, copies, sets, API calls, external
// correlations, overheads, syncs, CUDA events, graph traces), in place.
WalkResult WalkBuffer(uint8_t* buffer, size_t valid_size, StringInterner* interner,
                      uint32_t correlation_shift = 0);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_BUFFER_WALK_H_
