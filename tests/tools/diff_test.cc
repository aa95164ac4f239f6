// gpucap diff: the verdict's rules, and the exit status a CI gate reads.
#include <gtest/gtest.h>

#include "gpucap/tools/stats/kernel_diff.h"
#include "tool_test_util.h"

namespace gpucap::tools {
namespace {

GpuStats Tally(std::initializer_list<std::tuple<const char*, int, int64_t>> kernels) {
  GpuStats s;
  for (auto [name, count, each] : kernels) {
    for (int i = 0; i < count; ++i) s.kernels[name].Add(each);
  }
  return s;
}

const KernelDelta& Row(const KernelDiff& d, const std::string& name) {
  for (const KernelDelta& k : d.kernels) {
    if (k.name == name) return k;
  }
  static const KernelDelta kNone;
  ADD_FAILURE() << name << " missing";
  return kNone;
}

TEST(Diff, OnlyRegressionsPastBothThePercentAndTheFloorCount) {
  GpuStats a = Tally({{"small", 10, 100}, {"big", 5, 20000}, {"gone", 1, 50000}});
  GpuStats b = Tally({{"small", 10, 120}, {"big", 5, 24000}, {"new", 2, 5000}});
  DiffOptions o;  // 10%, 5 us
  KernelDiff d = DiffKernels(a, b, o);
  EXPECT_FALSE(Row(d, "small").past) << "+20% but 200 ns: under the floor";
  EXPECT_TRUE(Row(d, "big").past) << "+20%, +20 us";
  EXPECT_EQ(Row(d, "big").delta(), 20000);
  EXPECT_NEAR(Row(d, "big").change_pct, 20.0, 1e-9);
  EXPECT_TRUE(Row(d, "new").past) << "a new kernel of 10 us";
  EXPECT_FALSE(Row(d, "gone").past) << "faster (gone) never fails";
  EXPECT_EQ(d.past, 2u);
  EXPECT_EQ(d.kernels.front().past, true) << "regressions listed first";

  o.threshold_pct = 25;
  d = DiffKernels(a, b, o);
  EXPECT_FALSE(Row(d, "big").past);
  EXPECT_TRUE(Row(d, "new").past);

  o.metric = DiffOptions::Metric::kMean;
  GpuStats longer = Tally({{"small", 20, 100}, {"big", 10, 20000}, {"gone", 2, 50000}});
  EXPECT_FALSE(DiffKernels(a, longer, o).Past()) << "twice the steps, same per-launch times";
  o.counts = true;
  EXPECT_TRUE(DiffKernels(a, longer, o).Past()) << "--counts: counts changed";

  testing::Json j = testing::ParseOrFail(DiffJson(DiffKernels(a, b, DiffOptions{}), DiffOptions{}));
  EXPECT_EQ(j["past"].u(), 2u);
  EXPECT_FALSE(j["total_past"].boolean) << "151000 -> 131200 ns: less in all";
  EXPECT_TRUE(ParsePercent("2.5%").ok());
  EXPECT_FALSE(ParsePercent("ten").ok());
}

TEST(Diff, ExitStatusGatesOnTheThreshold) {
  std::string torch = testing::Fixture("torch_train");
  testing::CliRun same = testing::Gpucap("diff " + torch + " " + torch + " -q");
  EXPECT_EQ(same.code, 0) << same.output;
  EXPECT_NE(same.output.find("within the threshold"), std::string::npos);
  // Step 6 replays a graph of the forward pass only; step 1 is a whole
  // eager training step: from 6 to 1 is a regression, from 1 to 6 is not.
  std::string steps = "diff " + torch + " " + torch + " -q --window 'nvtx:ProfilerStep#\\d+'";
  testing::CliRun worse = testing::Gpucap(steps + " --select 6 --select-b 1");
  EXPECT_EQ(worse.code, 3) << worse.output;
  EXPECT_NE(worse.output.find("PAST THE THRESHOLD"), std::string::npos);
  testing::CliRun better = testing::Gpucap(steps + " --select 1 --select-b 6");
  EXPECT_EQ(better.code, 0) << better.output;
  testing::CliRun loose = testing::Gpucap(steps + " --select 6 --select-b 1 --min-delta 10s -f json");
  EXPECT_EQ(loose.code, 0) << loose.output;
  testing::Json j = testing::ParseOrFail(loose.output);
  EXPECT_FALSE(j["total_past"].boolean);
  EXPECT_EQ(testing::Gpucap(steps + " --threshold lots").code, 2);
}

}  // namespace
}  // namespace gpucap::tools
