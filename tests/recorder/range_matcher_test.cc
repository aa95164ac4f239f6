#include "range_matcher.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

namespace gpucap::recorder {
namespace {

std::unique_ptr<RangeMatcher> Make(const std::string& pattern) {
  std::string error;
  auto m = RangeMatcher::Make(pattern, &error);
  EXPECT_NE(m, nullptr) << error;
  return m;
}

// The answer computed apart from the matcher: std::regex_search itself.
bool Search(const std::string& pattern, const std::string& name) {
  return std::regex_search(name, std::regex(pattern));
}

TEST(RangeMatcher, AnswersAsRegexSearchDoes) {
  const std::vector<std::string> patterns = {"ProfilerStep#\\d+", "ProfilerStep", "Step#?\\d", "^fwd$",
                                             "(Step|Phase)#\\d+", "a*b", ""};
  const std::vector<std::string> names = {"ProfilerStep#12", "ProfilerStep#", "xProfilerStep#3y", "Step7",
                                          "Step#7", "fwd", "fwd2", "Phase#0", "b", "aaab", "", "ProfilerSte"};
  for (const auto& p : patterns) {
    auto m = Make(p);
    MatchCache cache;
    for (int round = 0; round < 2; ++round) {  // the second round from the cache
      for (const auto& n : names) {
        EXPECT_EQ(m->Matches(n), Search(p, n)) << p << " / " << n;
        EXPECT_EQ(cache.Matches(*m, n), Search(p, n)) << p << " / " << n << " round " << round;
      }
    }
  }
}

TEST(MatchCache, ANameRepeatedRunsTheRegexOnce) {
  auto m = Make("Step#\\d+");
  MatchCache cache;
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(cache.Matches(*m, "Step#42"));
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.hits(), 9u);
}

TEST(MatchCache, ABufferWrittenAgainWithAnotherNameIsAnotherKey) {
  // emit_nvtx formats each name into a fresh string, often at the address
  // the last one had: the cache must answer for the text, not the address.
  auto m = Make("Step#\\d+");
  MatchCache cache;
  char buf[64];
  const char* texts[] = {"Step#1", "Stepper", "Step#1", "Step#x", "Step#22", "Stepper"};
  for (const char* t : texts) {
    std::snprintf(buf, sizeof(buf), "%s", t);
    EXPECT_EQ(cache.Matches(*m, buf), Search("Step#\\d+", t)) << t;
  }
  // Same length, same first bytes, a different last one.
  std::snprintf(buf, sizeof(buf), "%s", "Step#1");
  EXPECT_TRUE(cache.Matches(*m, buf));
  buf[5] = 'z';
  EXPECT_FALSE(cache.Matches(*m, buf));
}

TEST(MatchCache, ManyMoreNamesThanEntriesStillAnswerRight) {
  auto m = Make("op#\\d*7$");
  MatchCache cache;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 1000; ++i) {
      std::string n = "op#" + std::to_string(i);
      ASSERT_EQ(cache.Matches(*m, n), Search("op#\\d*7$", n)) << n;
    }
  }
}

TEST(MatchCache, AnotherMatcherIsNotAnsweredFromTheFirstOnesEntries) {
  auto a = Make("Step#\\d+");
  auto b = Make("Phase#\\d+");
  MatchCache cache;
  EXPECT_TRUE(cache.Matches(*a, "Step#1"));
  EXPECT_FALSE(cache.Matches(*b, "Step#1"));
  EXPECT_TRUE(cache.Matches(*b, "Phase#1"));
  EXPECT_FALSE(cache.Matches(*a, "Phase#1"));
}

TEST(RangeMatcher, APatternWithoutRegexSyntaxIsItsLiteral) {
  EXPECT_TRUE(Make("ProfilerStep")->literal_only());
  EXPECT_FALSE(Make("ProfilerStep#\\d+")->literal_only());
  EXPECT_FALSE(Make("Step*")->literal_only());
  EXPECT_FALSE(Make("")->literal_only());
}

}  // namespace
}  // namespace gpucap::recorder
