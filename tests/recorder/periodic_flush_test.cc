// The flight recorder's periodic forced flush of CUPTI (periodic_flush.h),
// asked as the control thread asks it, a pass at a time, with made-up times.
// That the recorder then calls CUPTI is left to the GPU fixture
// (tests/gpu/record_fixtures.sh ring_crash): no fake CUPTI here counts flushes.
#include "periodic_flush.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace gpucap::recorder {
namespace {

constexpr uint64_t kMs = 1'000'000;

// The times (ms) of the flushes due over passes every `pass_ms` from 0 to
// `end_ms`, recording where `recording(t_ms)` says so.
std::vector<uint64_t> FlushTimes(PeriodicFlush* flush, uint64_t pass_ms, uint64_t end_ms,
                                 const std::function<bool(uint64_t)>& recording) {
  std::vector<uint64_t> out;
  for (uint64_t t = 0; t <= end_ms; t += pass_ms) {
    if (flush->Due(t * kMs, recording(t))) out.push_back(t);
  }
  return out;
}

TEST(PeriodicFlush, DueEveryPeriodWhileRecordingNeverWhilePausedAndAResumeCountsAfresh) {
  PeriodicFlush flush(500 * kMs);
  // Recording, paused from 2 s to 3.2 s, recording again.
  auto recording = [](uint64_t t) { return t < 2000 || t >= 3200; };
  EXPECT_EQ(FlushTimes(&flush, 50, 4500, recording), (std::vector<uint64_t>{500, 1000, 1500, 3700, 4200}))
      << "none at 2 s (paused), none while paused, the next a period after the resume";
}

TEST(PeriodicFlush, NeverWithAZeroPeriod) {
  PeriodicFlush off(0);
  EXPECT_TRUE(FlushTimes(&off, 50, 10'000, [](uint64_t) { return true; }).empty());
}

TEST(PeriodicFlush, NeverBeforeTheRecordingStarts) {
  PeriodicFlush flush(500 * kMs);
  // --start-paused, or a capture range not yet open, until 1.3 s.
  EXPECT_EQ(FlushTimes(&flush, 50, 2000, [](uint64_t t) { return t >= 1300; }),
            (std::vector<uint64_t>{1800}));
}

TEST(PeriodicFlush, RecordsWaitAtMostAPeriodAndAPassWhenPassesDoNotDivideThePeriod) {
  PeriodicFlush flush(500 * kMs);
  std::vector<uint64_t> times = FlushTimes(&flush, 70, 5000, [](uint64_t) { return true; });
  ASSERT_GE(times.size(), 8u);
  uint64_t last = 0;
  for (uint64_t t : times) {
    EXPECT_GE(t - last, 500u);
    EXPECT_LT(t - last, 500u + 70u) << "at " << t;
    last = t;
  }
}

TEST(PeriodicFlush, ALateCheckFlushesOnceAndCountsFromThenWithoutCatchingUp) {
  PeriodicFlush flush(500 * kMs);
  EXPECT_FALSE(flush.Due(0, true));
  EXPECT_TRUE(flush.Due(1700 * kMs, true)) << "the control thread was busy (a dump) for 1.7 s";
  EXPECT_FALSE(flush.Due(1750 * kMs, true)) << "no second flush for the periods missed";
  EXPECT_FALSE(flush.Due(2199 * kMs, true));
  EXPECT_TRUE(flush.Due(2200 * kMs, true));
}

}  // namespace
}  // namespace gpucap::recorder
