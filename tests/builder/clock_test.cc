#include "gpucap/builder/clock.h"

#include <gtest/gtest.h>

namespace gpucap::builder {
namespace {

format::ClockSample Sample(uint64_t cupti, int64_t realtime) {
  format::ClockSample s;
  s.cupti_ns = cupti;
  s.realtime_ns = realtime;
  return s;
}

TEST(ClockMap, InterpolatesDriftBetweenSamplesAndHoldsOutside) {
  // Realtime runs 100 ns ahead at 1 s and 300 ns ahead at 2 s.
  ClockMap m({Sample(2'000'000'000, 2'000'000'300), Sample(1'000'000'000, 1'000'000'100)});
  EXPECT_EQ(m.ToRealtime(1'000'000'000), 1'000'000'100);
  EXPECT_EQ(m.ToRealtime(1'500'000'000), 1'500'000'200);
  EXPECT_EQ(m.ToRealtime(2'000'000'000), 2'000'000'300);
  EXPECT_EQ(m.ToRealtime(500'000'000), 500'000'100);
  EXPECT_EQ(m.ToRealtime(3'000'000'000), 3'000'000'300);
  EXPECT_TRUE(m.calibrated());
}

TEST(ClockMap, WithoutSamplesCuptiTimeIsRealtime) {
  ClockMap m(std::vector<format::ClockSample>{});
  EXPECT_FALSE(m.calibrated());
  EXPECT_EQ(m.ToRealtime(1234), 1234);
}

TEST(ClockMap, MonotonicAcrossSamples) {
  ClockMap m({Sample(1000, 5000), Sample(2000, 5900), Sample(3000, 7100)});
  int64_t prev = m.ToRealtime(0);
  for (uint64_t t = 1; t < 4000; t += 7) {
    int64_t r = m.ToRealtime(t);
    EXPECT_GE(r, prev) << t;
    prev = r;
  }
}

}  // namespace
}  // namespace gpucap::builder
