// The one pass over a completed CUPTI buffer on the record path: it does not
// decode records for output, it only gathers what the raw bytes cannot carry
// (the text behind name pointers) and what lets the builder skip the buffer
// later (time span, counts per kind, record strides).
#ifndef GPUCAP_RECORDER_BUFFER_WALK_H_
#define GPUCAP_RECORDER_BUFFER_WALK_H_

#include <cstddef>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "gpucap/format/model.h"
#include "string_interner.h"

namespace gpucap::recorder {

struct WalkResult {
  format::ChunkInfo info;
  std::vector<format::SmallMessage> strings;  // definitions for pointers new in this buffer
  std::vector<uint32_t> threads;              // OS tids of API records, each once per buffer
};

WalkResult WalkBuffer(const uint8_t* buffer, size_t valid_size, StringInterner* interner);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_BUFFER_WALK_H_
