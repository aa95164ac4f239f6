#include "range_clock.h"

#include <time.h>

namespace gpucap::recorder {

RangeClock::RangeClock(Read cupti, Read direct, bool allow_direct)
    : read_cupti_(cupti), read_direct_(direct), allowed_(allow_direct) {}

uint64_t RangeClock::Realtime() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

bool RangeClock::Check(int tries) {
  if (!allowed_.load(std::memory_order_relaxed)) return false;
  for (int i = 0; i < tries; ++i) {
    uint64_t before = read_direct_();
    uint64_t c = read_cupti_();
    uint64_t after = read_direct_();
    if (c < before || c > after) {
      // Not the same clock (or not any more): CUPTI's, for good.
      allowed_.store(false, std::memory_order_relaxed);
      direct_.store(false, std::memory_order_relaxed);
      failed_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  }
  direct_.store(true, std::memory_order_relaxed);
  return true;
}

}  // namespace gpucap::recorder
