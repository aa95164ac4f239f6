// The timestamps of range events: CUPTI's clock, as every record in a
// capture carries (the builder converts), read the cheapest way that gives
// CUPTI's values. On Linux cuptiGetTimestamp reads a system clock through
// clock_gettime; when a check finds its reading between two readings of
// CLOCK_REALTIME every time, the range path reads CLOCK_REALTIME itself (one
// vDSO call instead of CUPTI's wrapper around the same). The recorder checks
// again at every periodic clock sample; one failed check (another tool gave
// CUPTI a clock of its own, say) sends the range path back to CUPTI for good.
#ifndef GPUCAP_RECORDER_RANGE_CLOCK_H_
#define GPUCAP_RECORDER_RANGE_CLOCK_H_

#include <atomic>
#include <cstdint>

namespace gpucap::recorder {

class RangeClock {
 public:
  using Read = uint64_t (*)();
  // `cupti`: CUPTI's clock; `direct`: the candidate read in its place.
  // Starts on `cupti` until Check says otherwise; allow_direct false keeps
  // it there (GPUCAP_RANGE_CLOCK=cupti).
  RangeClock(Read cupti, Read direct, bool allow_direct);

  // `tries` readings of cupti between two of direct: all inside, and the
  // range path reads direct; one outside, and it reads cupti from then on.
  // Returns whether direct is used. Any thread, not concurrently with itself.
  bool Check(int tries = 16);

  uint64_t Now() const { return direct_.load(std::memory_order_relaxed) ? read_direct_() : read_cupti_(); }
  bool direct() const { return direct_.load(std::memory_order_relaxed); }
  uint64_t failed_checks() const { return failed_.load(std::memory_order_relaxed); }

  // CLOCK_REALTIME in ns, the candidate the recorder checks.
  static uint64_t Realtime();

 private:
  Read read_cupti_;
  Read read_direct_;
  std::atomic<bool> direct_{false};
  std::atomic<bool> allowed_;
  std::atomic<uint64_t> failed_{0};
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_RANGE_CLOCK_H_
