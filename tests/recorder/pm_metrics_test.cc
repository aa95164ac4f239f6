#include "pm_metrics.h"

#include <gtest/gtest.h>

#include <set>

namespace gpucap::recorder {
namespace {

TEST(PmMetrics, SplitsOnCommasAndDropsBlanks) {
  EXPECT_EQ(SplitPmMetricList(" a, b,,c ,"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(SplitPmMetricList("").empty());
  EXPECT_TRUE(SplitPmMetricList(" , ").empty());
}

TEST(PmMetrics, ParsesLabelsAndAlternatives) {
  std::vector<PmMetricChoice> c;
  std::string err;
  ASSERT_TRUE(ParsePmMetricEntries({"SM busy = x.avg.pct | y.avg.pct", "z.sum"}, &c, &err)) << err;
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], (PmMetricChoice{"SM busy", {"x.avg.pct", "y.avg.pct"}}));
  EXPECT_EQ(c[1], (PmMetricChoice{"", {"z.sum"}}));
}

TEST(PmMetrics, EmptyListAndDefaultKeywordMeanTheDefaults) {
  std::vector<PmMetricChoice> none, keyword, mixed;
  std::string err;
  ASSERT_TRUE(ParsePmMetricEntries({}, &none, &err));
  ASSERT_TRUE(ParsePmMetricEntries({"default"}, &keyword, &err));
  ASSERT_TRUE(ParsePmMetricEntries({"a", "default"}, &mixed, &err));
  EXPECT_EQ(none.size(), DefaultPmMetricEntries().size());
  EXPECT_EQ(none, keyword);
  ASSERT_EQ(mixed.size(), none.size() + 1);
  EXPECT_EQ(mixed[0].candidates, std::vector<std::string>{"a"});
}

TEST(PmMetrics, DefaultsAreLabelledPercentages) {
  std::vector<PmMetricChoice> c;
  std::string err;
  ASSERT_TRUE(ParsePmMetricEntries({}, &c, &err));
  std::set<std::string> labels;
  for (const auto& choice : c) {
    EXPECT_FALSE(choice.label.empty());
    labels.insert(choice.label);
    for (const auto& name : choice.candidates) EXPECT_EQ(PmMetricUnit(name, ""), "%") << name;
  }
  EXPECT_EQ(labels, (std::set<std::string>{"SM active", "DRAM throughput", "Tensor pipe active"}));
}

TEST(PmMetrics, RejectsEmptyNamesAndLabels) {
  std::vector<PmMetricChoice> c;
  std::string err;
  EXPECT_FALSE(ParsePmMetricEntries({"a||b"}, &c, &err));
  EXPECT_NE(err.find("a||b"), std::string::npos);
  EXPECT_FALSE(ParsePmMetricEntries({"=a"}, &c, &err));
  EXPECT_FALSE(ParsePmMetricEntries({"label="}, &c, &err));
}

TEST(PmMetrics, ResolvesToFirstKnownCandidateOnce) {
  std::vector<PmMetricChoice> c = {
      {"DRAM", {"dramc__x", "dram__x"}},
      {"", {"sm__y"}},
      {"Tensor", {"t1", "t2"}},
      {"again", {"dram__x"}},
  };
  std::set<std::string> known = {"dram__x", "sm__y", "t3"};
  PmMetricResolution r = ResolvePmMetrics(c, [&](const std::string& n) { return known.count(n) > 0; });
  EXPECT_EQ(r.chosen, (std::vector<PmMetric>{{"DRAM", "dram__x"}, {"sm__y", "sm__y"}}));
  ASSERT_EQ(r.unavailable.size(), 1u);
  EXPECT_NE(r.unavailable[0].find("Tensor"), std::string::npos);
  EXPECT_NE(r.unavailable[0].find("t2"), std::string::npos);
}

TEST(PmMetrics, UnitsFromNameThenCupti) {
  EXPECT_EQ(PmMetricUnit("sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "cycles"), "%");
  EXPECT_EQ(PmMetricUnit("l1tex__t_sector_hit_rate.pct", ""), "%");
  EXPECT_EQ(PmMetricUnit("gpc__cycles_elapsed.avg.per_second", "cycles/second"), "cycles/second");
  EXPECT_EQ(PmMetricUnit("pcie__rx_requests_aperture_bar1_op_read.sum", ""), "");
}

}  // namespace
}  // namespace gpucap::recorder
