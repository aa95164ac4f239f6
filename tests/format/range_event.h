// An NVTX range event as the recorder hands the writer one, with the
// fields the ring tests tell apart (open_ranges_test.cc, frame_ring_test.cc).
#ifndef GPUCAP_TESTS_FORMAT_RANGE_EVENT_H_
#define GPUCAP_TESTS_FORMAT_RANGE_EVENT_H_

#include <cstdint>
#include <string>
#include <utility>

#include "gpucap/format/model.h"

namespace gpucap::format {

inline RangeEvent TestRangeEvent(RangeKind kind, uint32_t tid, uint64_t ts, std::string name = "",
                                 uint64_t domain = 0, uint64_t id = 0) {
  RangeEvent e;
  e.kind = kind;
  e.os_tid = tid;
  e.timestamp_ns = ts;
  e.name = std::move(name);
  e.domain = domain;
  e.id = id;
  return e;
}

}  // namespace gpucap::format

#endif  // GPUCAP_TESTS_FORMAT_RANGE_EVENT_H_
