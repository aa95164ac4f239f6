#include "range_clock.h"

#include <gtest/gtest.h>

namespace gpucap::recorder {
namespace {

// A fake system clock that ticks by 10 on each reading, and a "CUPTI" that
// reads it (the same clock) or reads it with an offset (another clock).
uint64_t g_t = 1000;
int64_t g_offset = 0;
uint64_t Tick() { return g_t += 10; }
uint64_t Cupti() { return static_cast<uint64_t>(static_cast<int64_t>(Tick()) + g_offset); }

TEST(RangeClock, ReadsTheDirectClockOnlyOnceCheckedToBeCuptis) {
  g_offset = 0;
  RangeClock c(Cupti, Tick, true);
  EXPECT_FALSE(c.direct()) << "CUPTI's until checked";
  EXPECT_TRUE(c.Check());
  EXPECT_TRUE(c.direct());
  EXPECT_EQ(c.failed_checks(), 0u);
}

TEST(RangeClock, OneFailedCheckReturnsToCuptiForGood) {
  g_offset = 0;
  RangeClock c(Cupti, Tick, true);
  ASSERT_TRUE(c.Check());
  g_offset = 1'000'000;  // CUPTI now on a clock of its own
  EXPECT_FALSE(c.Check());
  EXPECT_FALSE(c.direct());
  g_offset = 0;
  EXPECT_FALSE(c.Check()) << "not trusted again";
  EXPECT_FALSE(c.direct());
  EXPECT_EQ(c.failed_checks(), 1u);
  uint64_t before = g_t;
  uint64_t now = c.Now();
  EXPECT_GT(now, before) << "read through CUPTI's function";
}

TEST(RangeClock, AClockBehindCuptisIsNeverUsed) {
  g_offset = -15;  // earlier than the reading before it
  RangeClock c(Cupti, Tick, true);
  EXPECT_FALSE(c.Check());
  EXPECT_FALSE(c.direct());
}

TEST(RangeClock, NotAllowedStaysOnCupti) {
  g_offset = 0;
  RangeClock c(Cupti, Tick, false);
  EXPECT_FALSE(c.Check());
  EXPECT_FALSE(c.direct());
  EXPECT_EQ(c.failed_checks(), 0u);
}

}  // namespace
}  // namespace gpucap::recorder
