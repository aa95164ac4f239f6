// The flight recorder's blocked-call trigger: a thread that has been inside
// one CUDA call (runtime or driver) for `bound_ns` or more, seen through the
// entry gate's calls in flight (gate_api.h: a thread's word stays the same
// while one call is in flight and changes with every call it enters or
// leaves). Like StepWatch (step_watch.h) it has no clock and no thread of
// its own: the control thread gives it what the gate shows every pass, with
// the time, so its rules are tested with made-up times and words.
//
// - A call is dated from the first look that saw its word, so it is
//   reported between `bound_ns` and one look later than `bound_ns` after it
//   began: the control thread looks at most 50 ms apart.
// - Each call is reported once, however long it stays; the same thread's
//   next blocked call is reported again. Threads that pass the bound at the
//   same look make one trigger (one dump).
// - Forget() (recording paused) starts afresh: a call is timed only while
//   recording, as a step hang is.
// Why the gate and not CUPTI: CUPTI's API records come when a call returns,
// and its enter callbacks cost +17.8% a launch (bench/README.md); the gate
// knows a call's entry for one add it makes anyway.
#ifndef GPUCAP_RECORDER_CALL_WATCH_H_
#define GPUCAP_RECORDER_CALL_WATCH_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gate_api.h"

namespace gpucap::recorder {

// A call past the bound, from the look that first saw it.
struct BlockedCall {
  uint32_t os_tid = 0;
  uint64_t since_ns = 0;
};

class CallWatch {
 public:
  explicit CallWatch(uint64_t bound_ns) : bound_ns_(bound_ns) {}

  // What the gate shows at `now_ns`: the calls that passed the bound at this
  // look (none reported before), in the order given.
  std::vector<BlockedCall> Observe(uint64_t now_ns, std::span<const GpucapGateCall> calls);
  void Forget() { seen_.clear(); }

  uint64_t bound_ns() const { return bound_ns_; }

  // The dump's trigger for what one Observe returned: "hang: a CUDA call in
  // flight for 5.0 s on thread 1234 (python)", with every thread named when
  // several passed at once. `thread_name` gives a thread's name or "".
  static std::string Trigger(uint64_t now_ns, const std::vector<BlockedCall>& blocked,
                             const std::function<std::string(uint32_t)>& thread_name);

 private:
  struct Seen {
    uint32_t word = 0;
    uint64_t since_ns = 0;
    bool reported = false;
    bool present = false;  // seen at the current look
  };
  uint64_t bound_ns_;
  std::unordered_map<uint32_t, Seen> seen_;  // by thread
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CALL_WATCH_H_
