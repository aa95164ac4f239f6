// One CUPTI runtime API record written where a test's buffer needs it: the
// record the recorder's buffer walk and correlation shift read (kind,
// times, thread, correlation id), in CUPTI's layout.
#ifndef GPUCAP_TESTS_RECORDER_API_RECORD_H_
#define GPUCAP_TESTS_RECORDER_API_RECORD_H_

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gpucap::recorder {

// One API record with CUPTI's `correlation` at `buffer`; its size.
inline size_t PutApiRecord(uint8_t* buffer, uint32_t correlation) {
  CUpti_ActivityAPI r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  r.start = 1000;
  r.end = 2000;
  r.threadId = 7;
  r.correlationId = correlation;
  std::memcpy(buffer, &r, sizeof(r));
  return sizeof(r);
}

}  // namespace gpucap::recorder

#endif  // GPUCAP_TESTS_RECORDER_API_RECORD_H_
