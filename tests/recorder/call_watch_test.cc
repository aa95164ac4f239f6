// The blocked-call trigger's rules (call_watch.h), with made-up times and
// gate words: a word that stays is one call in flight; a changed word, or a
// thread gone from the list, is a call that returned.
#include "call_watch.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpucap::recorder {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kBound = 5000 * kMs;

// The control thread's looks, every 50 ms from `from` to `to` (inclusive),
// with the same calls each time; the calls reported, with the look's time.
struct Reported {
  uint64_t at_ns;
  BlockedCall call;
};
std::vector<Reported> Looks(CallWatch& watch, uint64_t from, uint64_t to, std::vector<GpucapGateCall> calls) {
  std::vector<Reported> out;
  for (uint64_t t = from; t <= to; t += 50 * kMs) {
    for (const BlockedCall& b : watch.Observe(t, calls)) out.push_back({t, b});
  }
  return out;
}

TEST(CallWatch, ACallInFlightPastTheBoundIsReportedOnceFromTheLookThatFirstSawIt) {
  CallWatch watch(kBound);
  std::vector<Reported> r = Looks(watch, 1000 * kMs, 20000 * kMs, {{77, 0x00050001}});
  ASSERT_EQ(r.size(), 1u) << "once, however long it stays";
  EXPECT_EQ(r[0].call.os_tid, 77u);
  EXPECT_EQ(r[0].call.since_ns, 1000 * kMs);
  EXPECT_EQ(r[0].at_ns, 6000 * kMs) << "at the first look the bound after";
}

TEST(CallWatch, ACallThatReturnsBeforeTheBoundIsNotReported) {
  CallWatch watch(kBound);
  EXPECT_TRUE(Looks(watch, 0, 4950 * kMs, {{77, 0x00050001}}).empty());
  EXPECT_TRUE(watch.Observe(5000 * kMs, {}).empty()) << "returned: gone from the list";
  // Back with the very same word (65,536 entries later): a new call, timed
  // from this look, not from the first one.
  EXPECT_TRUE(Looks(watch, 5050 * kMs, 9000 * kMs, {{77, 0x00050001}}).empty());
  EXPECT_TRUE(watch.Observe(9050 * kMs, {}).empty());
  EXPECT_TRUE(Looks(watch, 9100 * kMs, 14000 * kMs, {{77, 0x00070001}}).empty())
      << "its next call is timed from its own first look";
}

TEST(CallWatch, ManyShortCallsThatKeepAThreadInFlightAreNotOneBlockedCall) {
  // A thread seen inside a call at every look, but a different call each
  // time (a loop of synchronizes): its word changes from look to look.
  CallWatch watch(kBound);
  uint32_t word = 0x00010001;
  for (uint64_t t = 0; t <= 60000 * kMs; t += 50 * kMs) {
    GpucapGateCall call{77, word};
    EXPECT_TRUE(watch.Observe(t, {&call, 1}).empty()) << "at " << t / kMs << " ms";
    word += 0x00030000;  // three entries between looks
  }
}

TEST(CallWatch, TheSameThreadsNextBlockedCallIsReportedAgain) {
  CallWatch watch(kBound);
  ASSERT_EQ(Looks(watch, 0, 6000 * kMs, {{77, 0x00050001}}).size(), 1u);
  std::vector<Reported> r = Looks(watch, 6050 * kMs, 12000 * kMs, {{77, 0x00060001}});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].call.since_ns, 6050 * kMs);
}

TEST(CallWatch, ThreadsPastTheBoundAtOneLookComeTogetherAndOthersAreLeftAlone) {
  CallWatch watch(kBound);
  std::vector<Reported> r =
      Looks(watch, 0, 5000 * kMs, {{11, 0x00020001}, {12, 0x00090002}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].at_ns, r[1].at_ns);
  EXPECT_EQ(r[0].call.os_tid, 11u);
  EXPECT_EQ(r[1].call.os_tid, 12u);
  // A third thread that came later is timed from its own first look.
  r = Looks(watch, 5050 * kMs, 12000 * kMs, {{11, 0x00020001}, {12, 0x00090002}, {13, 0x00010001}});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].call.os_tid, 13u);
  EXPECT_EQ(r[0].at_ns, 10050 * kMs) << "5 s after its first look, 5050 ms";
}

TEST(CallWatch, ForgetStartsTheTimingAfresh) {
  CallWatch watch(kBound);
  EXPECT_TRUE(Looks(watch, 0, 4000 * kMs, {{77, 0x00050001}}).empty());
  watch.Forget();  // paused
  std::vector<Reported> r = Looks(watch, 8000 * kMs, 14000 * kMs, {{77, 0x00050001}});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].call.since_ns, 8000 * kMs) << "timed only from the look after the pause";
}

TEST(CallWatch, TheTriggerNamesEachThreadAndHowLongItsCallHasBeenInFlight) {
  auto names = [](uint32_t tid) { return tid == 11 ? std::string("pt_main_thread") : std::string(); };
  EXPECT_EQ(CallWatch::Trigger(7000 * kMs, {{11, 1500 * kMs}}, names),
            "hang: a CUDA call in flight for 5.5 s on thread 11 (pt_main_thread)");
  EXPECT_EQ(CallWatch::Trigger(7000 * kMs, {{11, 1500 * kMs}, {12, 2000 * kMs}}, names),
            "hang: CUDA calls in flight for 5.5 s on thread 11 (pt_main_thread), 5.0 s on thread 12");
}

}  // namespace
}  // namespace gpucap::recorder
