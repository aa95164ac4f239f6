// An activity buffer of `bytes` (ten records of kind 10 starting at `t`), as
// the ring tests hand the writer: the writer keeps a pointer, so `bytes`
// must outlive the write.
#ifndef GPUCAP_TESTS_FORMAT_RING_CHUNK_H_
#define GPUCAP_TESTS_FORMAT_RING_CHUNK_H_

#include <cstdint>
#include <vector>

#include "gpucap/format/capture_writer.h"

namespace gpucap::format {

inline ActivityBuffer RingChunk(const std::vector<uint8_t>& bytes, uint64_t t) {
  ActivityBuffer b;
  b.data = bytes.data();
  b.size = bytes.size();
  b.info.raw_size = static_cast<uint32_t>(bytes.size());
  b.info.record_count = 10;
  b.info.kind_counts = {{10, 10}};
  b.info.min_start_ns = t;
  b.info.max_start_ns = t + 1;
  return b;
}

}  // namespace gpucap::format

#endif  // GPUCAP_TESTS_FORMAT_RING_CHUNK_H_
