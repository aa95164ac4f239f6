#include "pm_timeline.h"

#include <gtest/gtest.h>

namespace gpucap::recorder {
namespace {

constexpr uint64_t kSec = 1'000'000'000;

TEST(PmClock, SameClockWhenFirstSampleFallsBetweenReadings) {
  const uint64_t start = 1'780'000'000 * kSec;  // a realtime-based CUPTI clock
  PmClock c(start);
  EXPECT_EQ(c.mode(), PmClock::Mode::kUndecided);
  EXPECT_EQ(c.ToCupti(start + 5), start + 5) << "identity until decided";
  c.Observe(start + 300'000, start + kSec / 2);
  EXPECT_EQ(c.mode(), PmClock::Mode::kSame);
  EXPECT_EQ(c.ToCupti(start + 123), start + 123);
}

TEST(PmClock, ToleratesSmallSkewBeforeStart) {
  const uint64_t start = 1'780'000'000 * kSec;
  PmClock c(start, kSec);
  c.Observe(start - kSec / 2, start + kSec);
  EXPECT_EQ(c.mode(), PmClock::Mode::kSame);
}

TEST(PmClock, AnchorsAForeignTimeBase) {
  const uint64_t start = 1'780'000'000 * kSec;
  const uint64_t gpu = 3600 * kSec;  // ns since GPU boot, say
  PmClock c(start);
  c.Observe(gpu, start + kSec / 2);
  EXPECT_EQ(c.mode(), PmClock::Mode::kAnchored);
  EXPECT_EQ(c.ToCupti(gpu), start);
  EXPECT_EQ(c.ToCupti(gpu + 1'000'000), start + 1'000'000);
  c.Observe(gpu + 7, start + kSec);  // decided once
  EXPECT_EQ(c.ToCupti(gpu), start);
  EXPECT_NE(c.Describe().find("anchored"), std::string::npos);
}

TEST(PmClock, AnchorsAClockAheadOfCuptiWithoutWrapping) {
  const uint64_t start = 10 * kSec;
  const uint64_t raw = 1'780'000'000 * kSec;
  PmClock c(start);
  c.Observe(raw, start + kSec);
  EXPECT_EQ(c.mode(), PmClock::Mode::kAnchored);
  EXPECT_LT(c.offset_ns(), 0);
  EXPECT_EQ(c.ToCupti(raw + 42), start + 42);
  EXPECT_EQ(c.ToCupti(5), 0u) << "before the mapped epoch clamps to 0";
}

TEST(PmSampleSequence, KeepsContiguousSamples) {
  PmSampleSequence s(1000);
  EXPECT_EQ(s.Add(10'000, 11'000), PmSampleSequence::Verdict::kKeep);
  EXPECT_EQ(s.Add(11'000, 12'000), PmSampleSequence::Verdict::kKeep);
  EXPECT_EQ(s.kept(), 2u);
  EXPECT_EQ(s.lost(), 0u);
  EXPECT_EQ(s.first_start(), 10'000u);
  EXPECT_EQ(s.last_end(), 12'000u);
}

TEST(PmSampleSequence, DropsEmptyZeroAndBackwardSamples) {
  PmSampleSequence s(1000);
  EXPECT_EQ(s.Add(10'000, 10'000), PmSampleSequence::Verdict::kEmpty);
  EXPECT_EQ(s.Add(0, 0), PmSampleSequence::Verdict::kInvalid);
  EXPECT_EQ(s.Add(10'000, 11'000), PmSampleSequence::Verdict::kKeep);
  EXPECT_EQ(s.Add(10'000, 11'000), PmSampleSequence::Verdict::kInvalid) << "a repeat";
  EXPECT_EQ(s.Add(12'000, 11'500), PmSampleSequence::Verdict::kInvalid) << "ends before it starts";
  EXPECT_EQ(s.kept(), 1u);
  EXPECT_EQ(s.empty(), 1u);
  EXPECT_EQ(s.invalid(), 3u);
}

TEST(PmSampleSequence, CountsIntervalsMissingBetweenKeptSamples) {
  PmSampleSequence s(1000);
  s.Add(10'000, 11'000);
  s.Add(14'000, 15'000);  // 11'000..14'000: three samples gone
  EXPECT_EQ(s.lost(), 3u);
  s.Add(15'100, 16'000);  // jitter below half an interval is no loss
  EXPECT_EQ(s.lost(), 3u);
}

}  // namespace
}  // namespace gpucap::recorder
