// Where the recorder stands, one atomic read by every part on any thread:
// starting (before the first recording: --delay, --start-paused, a capture
// range not yet open), recording, paused, stopped (the capture is closed, or
// abandoned in a forked child). The recorder and its capture-range switch
// change it; the CUPTI session and the buffer path only read it.
//
// The same operations as the std::atomic<int> it wraps, with the same
// default (sequentially consistent) order, so that each reader states the
// order it needs where it reads (the NVTX handlers' acquire loads).
#ifndef GPUCAP_RECORDER_RECORDER_PHASE_H_
#define GPUCAP_RECORDER_RECORDER_PHASE_H_

#include <atomic>

namespace gpucap::recorder {

class RecorderPhase {
 public:
  enum Value : int { kStarting, kRecording, kPaused, kStopped };

  Value load(std::memory_order order = std::memory_order_seq_cst) const {
    return static_cast<Value>(value_.load(order));
  }
  void store(Value v, std::memory_order order = std::memory_order_seq_cst) { value_.store(v, order); }

 private:
  std::atomic<int> value_{kStarting};
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_RECORDER_PHASE_H_
