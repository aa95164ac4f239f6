// The stream each captured graph node was made on (issue 17, logical lanes).
//
// CUPTI's graph-node-created callback (CUpti_GraphData) names no stream. It
// runs on the thread of the call that made the node, inside that call (seen
// in graphs_nvtx's capture-time stacks and in NVIDIA's cuda_graphs_trace
// sample; not documented by CUPTI). So while a stream capture is open in the
// process the recorder enables the API callbacks of the stream-ordered calls
// (kernel launches, async copies and sets, host functions, event records and
// waits, stream-ordered allocations, child graph launches), keeps the stream
// of the call in progress in a thread-local slot from its ENTER to its EXIT,
// and copies it onto the nodeCreated event the call raises. Outside captures
// only the begin/end-capture ids are on: those calls are rare.
//
// On by default (GPUCAP_CAPTURE_STREAMS=0 turns it off). Checked on the
// H200 by tests/gpu/capture_lanes.sh, whose capture is the capture_lanes
// fixture: CUDA's special handles (the per-thread and legacy default
// streams) are looked up as the NULL stream (CuptiStreamId).
#ifndef GPUCAP_RECORDER_CAPTURE_STREAMS_H_
#define GPUCAP_RECORDER_CAPTURE_STREAMS_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "callback_switch.h"
#include "gpucap/format/model.h"

namespace gpucap::recorder {

struct CaptureStreamStats {
  uint64_t captures_begun = 0;
  uint64_t captures_ended = 0;
  uint64_t switches = 0;            // stream-op ids switched on or off
  uint64_t switch_ns_total = 0;
  uint64_t unresolved = 0;          // cuptiGetStreamIdEx failed at ENTER
  uint64_t nodes_with_stream = 0;
  uint64_t nodes_without_stream = 0;  // created with no stream call in progress
};

class CaptureStreams {
 public:
  // Its ids are switched through the recorder's `callbacks`, which outlives it.
  explicit CaptureStreams(CallbackSwitch* callbacks) : callbacks_(callbacks) {}

  // Wants the begin/end-capture ids; the stream-op ids are wanted while a
  // capture is open.
  void Enable();

  // Every runtime/driver API callback. Returns a captureBegan/captureEnded
  // event to record for the capture boundaries, else nothing.
  std::optional<format::GraphEvent> OnApi(uint32_t domain, uint32_t cbid, const void* callback_data,
                                          uint64_t now_ns, uint32_t os_tid);

  // On a nodeCreated event, from the same thread: the stream-ordered call in
  // progress, if any (the innermost: a runtime call's nested driver call).
  void FillNodeCreated(format::GraphEvent* e);

  int open_captures() const { return open_.load(std::memory_order_relaxed); }
  CaptureStreamStats stats() const;

 private:
  void SwitchStreamOps(bool on);

  CallbackSwitch* const callbacks_;

  std::mutex enable_mu_;  // the stream-op ids' state; boundary calls only
  std::atomic<int> open_{0};
  bool stream_ops_on_ = false;        // under enable_mu_
  std::vector<uint64_t> open_ids_;    // captures open now (CUDA's ids), under enable_mu_
  std::atomic<uint64_t> begun_{0}, ended_{0}, switches_{0}, switch_ns_{0}, unresolved_{0}, with_{0}, without_{0};
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CAPTURE_STREAMS_H_
