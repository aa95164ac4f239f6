// What a stream's activity records leave out: its priority and flags
// (issue 17 item 4). CUPTI's kernel and copy records name a stream by id
// only, and CUPTI_ACTIVITY_KIND_STREAM records would arrive in activity
// chunks, where the builder meets them only when it decodes the window
// they fall in. So the recorder writes a StreamInfo message, which every
// window can read, when the stream is made: at the exit of the driver call
// that made it (cuStreamCreate, cuStreamCreateWithPriority; the runtime's
// calls make these), from that call's own parameters.
//
// No CUDA call is made from inside a CUPTI callback: the driver holds its
// locks through the resource callbacks, CUPTI's hook on a nested driver call
// takes CUPTI's, and CUPTI's worker thread takes them the other way round.
// cuStreamGetPriority from the STREAM_CREATED callback deadlocked a 64-thread
// program toggled by SIGUSR2 on the H200 (bench/README.md, "Instructions
// retired by callgrind").
#ifndef GPUCAP_RECORDER_STREAM_FACTS_H_
#define GPUCAP_RECORDER_STREAM_FACTS_H_

#include <cstdint>
#include <optional>

#include "gpucap/format/model.h"

namespace gpucap::recorder {

// The driver callback ids of the calls that make streams.
inline constexpr uint32_t kStreamCreationCallbacks[] = {124 /* cuStreamCreate */,
                                                        367 /* cuStreamCreateWithPriority */};
inline bool IsStreamCreation(uint32_t driver_cbid) {
  for (uint32_t c : kStreamCreationCallbacks) {
    if (c == driver_cbid) return true;
  }
  return false;
}

// The stream, flags and priority a stream-making call's parameters name
// (CUPTI's cuStreamCreate_params / cuStreamCreateWithPriority_params);
// nothing for other calls. Priority is as asked: the driver clamps it to
// the device's range, which a default-range request never leaves.
struct CreatedStream {
  void* stream = nullptr;  // CUstream, written by the call
  uint32_t flags = 0;
  int32_t priority = 0;
};
std::optional<CreatedStream> StreamCreationParams(uint32_t driver_cbid, const void* params);

// The StreamInfo of a stream-making driver call at its exit (`callback_data`
// is CUPTI's CUpti_CallbackData), or nothing when the call failed, it is not
// one of kStreamCreationCallbacks, or CUPTI cannot say which stream it made.
std::optional<format::StreamInfo> DescribeCreatedStream(uint32_t driver_cbid, const void* callback_data,
                                                        uint64_t timestamp_ns, uint32_t os_tid);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_STREAM_FACTS_H_
