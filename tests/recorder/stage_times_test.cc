// StageTimes (stage_times.h): each stage's count and quantiles, stages that
// never ran left out, the samples bounded while the count goes on.
#include "stage_times.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>

namespace gpucap::recorder {
namespace {

std::map<std::string, uint64_t> StatsOf(const StageTimes& t) {
  std::vector<std::pair<std::string, uint64_t>> v;
  t.Stats(&v);
  return {v.begin(), v.end()};
}

TEST(StageTimes, EachStageReportsItsCountAndQuantiles) {
  StageTimes t;
  for (uint64_t ns = 1; ns <= 100; ++ns) t.Add(StageTimes::kSubscribe, ns * 1000);
  t.Add(StageTimes::kFinalize, 7);
  auto s = StatsOf(t);
  EXPECT_EQ(s["cupti_stage_subscribe_count"], 100u);
  EXPECT_EQ(s["cupti_stage_subscribe_ns_p50"], 50000u);
  EXPECT_EQ(s["cupti_stage_subscribe_ns_p99"], 99000u);
  EXPECT_EQ(s["cupti_stage_subscribe_ns_max"], 100000u);
  EXPECT_EQ(s["cupti_stage_finalize_count"], 1u);
  EXPECT_EQ(s["cupti_stage_finalize_ns_max"], 7u);
  // Stages that never ran say nothing (not a zero that reads as "instant").
  EXPECT_EQ(s.count("cupti_stage_settle_count"), 0u);
  EXPECT_EQ(s.count("cupti_stage_kinds_on_ns_p99"), 0u);
  EXPECT_EQ(s.size(), 8u) << "four keys for each of the two stages that ran";
}

TEST(StageTimes, AScopeTimesWhatRunsInsideIt) {
  StageTimes t;
  {
    StageTimes::Scope timed(&t, StageTimes::kFlush);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  { StageTimes::Scope untimed(nullptr, StageTimes::kFlush); }
  auto s = StatsOf(t);
  EXPECT_EQ(s["cupti_stage_flush_count"], 1u);
  EXPECT_GE(s["cupti_stage_flush_ns_max"], 2'000'000u);
}

TEST(StageTimes, SamplesAreBoundedButEveryStageIsCounted) {
  StageTimes t;
  for (size_t i = 0; i < StageTimes::kMaxSamples + 10; ++i) t.Add(StageTimes::kKindsOn, i < StageTimes::kMaxSamples ? 1 : 1'000'000);
  auto s = StatsOf(t);
  EXPECT_EQ(s["cupti_stage_kinds_on_count"], StageTimes::kMaxSamples + 10);
  EXPECT_EQ(s["cupti_stage_kinds_on_ns_max"], 1u);  // the samples past the bound are not kept
}

}  // namespace
}  // namespace gpucap::recorder
