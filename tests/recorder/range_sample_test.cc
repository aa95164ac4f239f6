// --sample N's choice of ranges: periodic (the last of each block) or
// stratified random, exactly one chosen in each block of N, uniformly,
// the same for the same seed.
#include "range_sample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "capture_range.h"

namespace gpucap::recorder {
namespace {

// The chosen indices among ranges [0, blocks * every).
std::vector<uint64_t> ChosenIn(const RangeSample& s, uint64_t blocks) {
  std::vector<uint64_t> out;
  for (uint64_t i = 0; i < blocks * s.every(); ++i) {
    if (s.Chosen(i)) out.push_back(i);
  }
  return out;
}

TEST(RangeSample, WithoutASeedTheLastOfEachBlockAsBefore) {
  RangeSample s(100, std::nullopt);
  EXPECT_EQ(ChosenIn(s, 3), (std::vector<uint64_t>{99, 199, 299}));
  EXPECT_EQ(s.Describe(), "1 in 100");
  RangeSample each(1, 7);
  EXPECT_EQ(ChosenIn(each, 5).size(), 5u) << "1 in 1 is every range, seed or not";
}

TEST(RangeSample, ExactlyOneInEachBlockForManySeedsAndSizes) {
  for (uint32_t every : {2u, 3u, 7u, 10u, 100u, 1000u}) {
    for (uint64_t seed = 0; seed < 50; ++seed) {
      RangeSample s(every, seed);
      std::vector<uint64_t> chosen = ChosenIn(s, 20);
      ASSERT_EQ(chosen.size(), 20u) << "every " << every << " seed " << seed;
      for (uint64_t b = 0; b < 20; ++b) {
        EXPECT_EQ(chosen[b] / every, b) << "the b-th choice lies in block b";
        EXPECT_EQ(chosen[b] % every, s.Offset(b));
      }
    }
  }
}

TEST(RangeSample, TheSameSeedChoosesTheSameRangesAndOthersDiffer) {
  RangeSample a(10, 42), b(10, 42), c(10, 43);
  EXPECT_EQ(ChosenIn(a, 200), ChosenIn(b, 200));
  EXPECT_NE(ChosenIn(a, 200), ChosenIn(c, 200));
  EXPECT_EQ(a.Describe(), "1 in 10 at random (seed 42)");
}

// Uniform within a block: over 20,000 (seed, block) draws of 1 in 10, each
// offset's count is binomial(20000, 0.1): mean 2000, sd sqrt(1800) ~ 42.4.
// A bound of 6 sd fails a fair choice with probability below 1e-8 per
// offset, and fails a choice that always or never picks an offset, or one
// that favours one side of the block by 10%, for certain.
TEST(RangeSample, EachPositionInABlockIsChosenAsOftenAsAnother) {
  const uint32_t every = 10;
  std::vector<uint64_t> counts(every, 0);
  uint64_t draws = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    RangeSample s(every, seed);
    for (uint64_t block = 0; block < 100; ++block, ++draws) ++counts[s.Offset(block)];
  }
  double mean = static_cast<double>(draws) / every;
  double sd = std::sqrt(draws * (1.0 / every) * (1.0 - 1.0 / every));
  for (uint32_t k = 0; k < every; ++k) {
    EXPECT_LT(std::fabs(static_cast<double>(counts[k]) - mean), 6 * sd) << "offset " << k << ": " << counts[k];
  }
  // The same across seeds for one block (what one job sees at step b).
  std::vector<uint64_t> first(every, 0);
  for (uint64_t seed = 0; seed < 20000; ++seed) ++first[RangeSample(every, seed).Offset(0)];
  for (uint32_t k = 0; k < every; ++k) EXPECT_LT(std::fabs(first[k] - 2000.0), 6 * 42.43) << "offset " << k;
}

TEST(RangeSample, SeedsParseOrAreRefusedByName) {
  uint64_t seed = 0;
  std::string error;
  EXPECT_TRUE(ParseSampleSeed("0", &seed, &error));
  EXPECT_EQ(seed, 0u);
  EXPECT_TRUE(ParseSampleSeed("18446744073709551615", &seed, &error));
  EXPECT_EQ(seed, ~0ull);
  EXPECT_TRUE(ParseSampleSeed("auto", &seed, &error));
  EXPECT_FALSE(ParseSampleSeed("-1", &seed, &error));
  EXPECT_NE(error.find("'-1'"), std::string::npos);
  EXPECT_FALSE(ParseSampleSeed("18446744073709551616", &seed, &error));
  EXPECT_FALSE(ParseSampleSeed("1e3", &seed, &error));
}

// The capture gate records exactly the ranges the sample chose, and says
// which in the recording's reason.
TEST(RangeSample, TheCaptureGateRecordsTheChosenRanges) {
  CaptureRangeSpec spec;
  spec.source = CaptureRangeSpec::Source::kNvtx;
  spec.pattern = "step";
  spec.sample_every = 5;
  spec.sample_seed = 9;
  CaptureGate gate(spec);
  RangeSample expect(5, 9);
  std::vector<uint64_t> recorded;
  for (uint64_t i = 0; i < 40; ++i) {
    CaptureGate::RangeKey key;
    key.tid = 1;
    auto open = gate.Open(key, "step");
    if (open.action == CaptureGate::Action::kRecord) {
      recorded.push_back(i);
      EXPECT_NE(open.why.find("at random (seed 9)"), std::string::npos) << open.why;
    }
    gate.Close(key);
  }
  EXPECT_EQ(recorded, ChosenIn(expect, 8));
}

}  // namespace
}  // namespace gpucap::recorder
