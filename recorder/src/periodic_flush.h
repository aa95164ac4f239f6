// When the flight recorder asks CUPTI to hand over its buffers
// (GPUCAP_RING_FLUSH_MS, `gpucap record --ring-flush-ms`); no clock and no
// thread of its own, so that its rule is tested with made-up times. The
// control thread asks it every pass (every 50 ms, or sooner when woken).
//
// Why: CUPTI hands a buffer to the recorder only when it is full or
// flushed, and its own periodic flush (cuptiActivityFlushPeriod) returns
// full buffers only. A job with modest activity keeps its records inside
// CUPTI for as long as it runs; the hang, slow-step and signal dumps flush
// CUPTI first, but a crash handler cannot call CUPTI, and a crash dump held
// none of the job's GPU activity (issue 46: 30 steps of a PyTorch job, 0
// activity records). A default flush every period (the buffers whose
// records are all complete, full or not) bounds what a crash dump lacks to
// about that period, or to the end of the work running then.
//
// The rule: due while recording, once `period_ns` has passed since the last
// flush, or since the recording started or resumed (a pause records
// nothing; the next recording counts afresh). Never with a zero period
// (off, and outside ring mode). A check that comes late (a control thread
// busy with a dump) flushes once and counts from then: no catching up.
#ifndef GPUCAP_RECORDER_PERIODIC_FLUSH_H_
#define GPUCAP_RECORDER_PERIODIC_FLUSH_H_

#include <cstdint>

namespace gpucap::recorder {

class PeriodicFlush {
 public:
  explicit PeriodicFlush(uint64_t period_ns) : period_ns_(period_ns) {}

  // Whether a flush is due at `now_ns` (any monotonic clock, the same on
  // every call); true counts the period from `now_ns`. `recording`: the
  // recorder is recording activity now.
  bool Due(uint64_t now_ns, bool recording);

 private:
  const uint64_t period_ns_;
  bool counting_ = false;  // recording at the last check
  uint64_t since_ns_ = 0;  // the last flush, or the recording's start
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_PERIODIC_FLUSH_H_
