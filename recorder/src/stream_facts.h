// What a stream's activity records leave out: its priority and flags
// (issue 17 item 4). CUPTI's kernel and copy records name a stream by id
// only, and CUPTI_ACTIVITY_KIND_STREAM records would arrive in activity
// chunks, where the builder meets them only when it decodes the window
// they fall in. So the recorder asks the driver when the stream is made
// (CUPTI's STREAM_CREATED resource callback, on the creating thread) and
// writes a StreamInfo message, which every window can read.
#ifndef GPUCAP_RECORDER_STREAM_FACTS_H_
#define GPUCAP_RECORDER_STREAM_FACTS_H_

#include <cstdint>
#include <optional>

#include "gpucap/format/model.h"

namespace gpucap::recorder {

// The stream of a STREAM_CREATED callback (`resource_data` is CUPTI's
// CUpti_ResourceData), or nothing when CUPTI or the driver cannot say
// which stream it is.
std::optional<format::StreamInfo> DescribeStream(const void* resource_data, uint64_t timestamp_ns,
                                                 uint32_t os_tid);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_STREAM_FACTS_H_
