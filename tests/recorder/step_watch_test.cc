// The flight recorder's hang and slow-step rules (step_watch.h) with
// made-up times, and the hand-over of closed steps (step_log.h).
#include "step_watch.h"

#include <gtest/gtest.h>

#include <string>
#include <atomic>
#include <thread>
#include <vector>

#include "step_log.h"

namespace gpucap::recorder {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kS = 1'000'000'000;

StepEnd Step(const std::string& name, uint64_t end_ms, uint64_t duration_ms, uint32_t tid = 7) {
  return StepEnd{tid, name, end_ms * kMs, duration_ms * kMs};
}

StepWatchOptions Slow(double k, uint32_t m, uint64_t interval_ns = 0) {
  StepWatchOptions o;
  o.slow_factor = k;
  o.slow_window = m;
  o.min_interval_ns = interval_ns;
  return o;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(StepWatch, HangOnceAfterTheLastCloseThenRearmedByTheNextClose) {
  StepWatchOptions o;
  o.hang_ns = 2 * kS;
  StepWatch w(o);
  EXPECT_TRUE(w.Poll(100 * kS).empty()) << "no step yet: a job still starting is not hung";
  w.Observe(Step("step#1", 1000, 100));
  EXPECT_TRUE(w.Poll(1000 * kMs + 2 * kS - 1).empty());
  std::vector<std::string> due = w.Poll(1000 * kMs + 2 * kS);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0], "hang: no step closed for 2 s (the last, step#1, on thread 7)");
  EXPECT_TRUE(w.Poll(60 * kS).empty()) << "one dump per hang";
  w.Observe(Step("step#2", 61000, 100));
  EXPECT_TRUE(w.Poll(62 * kS).empty());
  ASSERT_EQ(w.Poll(63 * kS).size(), 1u) << "re-armed by step#2's close";
}

TEST(StepWatch, DisarmWaitsForTheNextClose) {
  StepWatchOptions o;
  o.hang_ns = kS;
  StepWatch w(o);
  w.Observe(Step("step#1", 1000, 10));
  w.Disarm();  // paused
  EXPECT_TRUE(w.Poll(10 * kS).empty());
  w.Observe(Step("step#2", 11000, 10));
  EXPECT_EQ(w.Poll(12 * kS).size(), 1u);
}

TEST(StepWatch, HangOffDecidesNothing) {
  StepWatch w(Slow(3, 2));
  w.Observe(Step("step#1", 1000, 10));
  EXPECT_TRUE(w.Poll(1000 * kS).empty());
}

TEST(StepWatch, SlowIsAboveKTimesTheMedianOfTheLastM) {
  StepWatch w(Slow(2, 5));
  // Durations 10, 50, 12, 11, 13: median 12 (not the mean, 19.2).
  uint64_t t = 0;
  for (uint64_t d : {10, 50, 12, 11, 13}) w.Observe(Step("step#" + std::to_string(t), t += 100, d));
  w.Observe(Step("step#5", t += 100, 24));  // 2 x 12 exactly: not above
  EXPECT_TRUE(w.Poll(t * kMs).empty());
  // Window now 50, 12, 11, 13, 24: median 13; 27 > 26.
  w.Observe(Step("step#6", t += 100, 27));
  std::vector<std::string> due = w.Poll(t * kMs);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0], "slow step: step#6 took 27.0 ms, 2.1x the median 13.0 ms of the last 5 on thread 7");
  EXPECT_EQ(w.slow_steps(), 1u);
}

TEST(StepWatch, EvenWindowMedianIsTheMeanOfTheMiddleTwo) {
  StepWatch w(Slow(1, 4));
  uint64_t t = 0;
  for (uint64_t d : {10, 20, 40, 80}) w.Observe(Step("s#1", t += 100, d));
  w.Observe(Step("s#2", t += 100, 30));  // median 30: not above
  EXPECT_TRUE(w.Poll(t * kMs).empty());
  w.Observe(Step("s#3", t += 100, 36));  // window 20 40 80 30: median 35
  EXPECT_EQ(w.Poll(t * kMs).size(), 1u);
}

TEST(StepWatch, FirstMStepsNeverTrigger) {
  StepWatch w(Slow(2, 3));
  w.Observe(Step("step#0", 100, 1));
  w.Observe(Step("step#1", 1200, 1000));  // 1000x the one before, but the history is short
  w.Observe(Step("step#2", 3300, 2000));
  EXPECT_TRUE(w.Poll(10 * kS).empty());
  EXPECT_EQ(w.slow_steps(), 0u);
  w.Observe(Step("step#3", 9000, 5000));  // median of 1, 1000, 2000 is 1000
  EXPECT_EQ(w.Poll(10 * kS).size(), 1u);
}

TEST(StepWatch, FamiliesAreThreadAndNameWithoutDigits) {
  EXPECT_EQ(StepWatch::Family("ProfilerStep#12"), "ProfilerStep#");
  EXPECT_EQ(StepWatch::Family("train#3"), "train#");
  StepWatch w(Slow(2, 2));
  uint64_t t = 0;
  for (int i = 0; i < 4; ++i) w.Observe(Step("train#" + std::to_string(i), t += 10, 10, 1));
  // Another thread's long steps, and another family on thread 1: each has
  // its own history, too short to judge.
  w.Observe(Step("train#9", t += 1000, 1000, 2));
  w.Observe(Step("eval#1", t += 1000, 1000, 1));
  EXPECT_TRUE(w.Poll(t * kMs).empty());
  // Thread 2's own history is 1000; its 1000 ms step is not slow there.
  w.Observe(Step("train#10", t += 1000, 1000, 2));
  w.Observe(Step("train#11", t += 1000, 1000, 2));
  EXPECT_TRUE(w.Poll(t * kMs).empty());
  w.Observe(Step("train#4", t += 100, 100, 1));  // 10x thread 1's train# steps
  std::vector<std::string> due = w.Poll(t * kMs);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_TRUE(StartsWith(due[0], "slow step: train#4 took 100.0 ms")) << due[0];
}

TEST(StepWatch, SlowDumpIsDueAfterTheSettleTime) {
  StepWatchOptions o = Slow(2, 1);
  o.settle_ns = 500 * kMs;
  StepWatch w(o);
  w.Observe(Step("s#1", 100, 10));
  w.Observe(Step("s#2", 1000, 100));
  EXPECT_TRUE(w.Poll(1499 * kMs).empty());
  EXPECT_EQ(w.Poll(1500 * kMs).size(), 1u);
  EXPECT_TRUE(w.Poll(1600 * kMs).empty());
}

TEST(StepWatch, TakePendingGivesTheDumpsNotYetDue) {
  StepWatchOptions o = Slow(2, 1);
  o.settle_ns = 10 * kS;
  StepWatch w(o);
  w.Observe(Step("s#1", 100, 10));
  w.Observe(Step("s#2", 1000, 100));
  EXPECT_EQ(w.TakePending().size(), 1u);
  EXPECT_TRUE(w.Poll(100 * kS).empty());
}

TEST(StepWatch, RateLimitCountsTheSuppressedAndTheNextDumpSaysSo) {
  StepWatch w(Slow(2, 1, 10 * kS));
  w.Observe(Step("s#0", 100, 10));
  w.Observe(Step("s#1", 1000, 100));  // slow: dumped
  w.Observe(Step("s#2", 1100, 10));
  w.Observe(Step("s#3", 5000, 100));  // slow, 4 s later: suppressed
  w.Observe(Step("s#4", 5100, 10));
  w.Observe(Step("s#5", 10999, 100));  // 9.999 s after the dumped one: suppressed
  w.Observe(Step("s#6", 11000, 10));
  std::vector<std::string> due = w.Poll(20 * kS);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(w.suppressed(), 2u);
  w.Observe(Step("s#7", 11000 + 100, 100));  // 10.1 s after: dumped, saying 2 were left out
  due = w.Poll(20 * kS);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0],
            "slow step: s#7 took 100.0 ms, 10.0x the median 10.0 ms of the last 1 on thread 7; "
            "2 slow steps not dumped before it (rate limit)");
  EXPECT_EQ(w.slow_steps(), 4u);
  EXPECT_EQ(w.suppressed(), 2u);
}

TEST(StepLog, ClosesReachTheDrainWithNameAndDuration) {
  StepLog log;
  StepLog::Slot* s = log.Register(42);
  s->Open(0, 100, "outer#1");
  s->Open(1, 150, "other domain#1");
  s->Open(0, 200, "inner#1");
  EXPECT_TRUE(s->Close(0, 260));  // the newest of domain 0
  EXPECT_TRUE(s->Close(0, 400));
  EXPECT_FALSE(s->Close(0, 500)) << "nothing open in domain 0";
  std::vector<StepEnd> out;
  log.Drain(&out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "inner#1");
  EXPECT_EQ(out[0].duration_ns, 60u);
  EXPECT_EQ(out[0].end_ns, 260u);
  EXPECT_EQ(out[0].os_tid, 42u);
  EXPECT_EQ(out[1].name, "outer#1");
  EXPECT_EQ(out[1].duration_ns, 300u);
  out.clear();
  log.Drain(&out);
  EXPECT_TRUE(out.empty());
}

TEST(StepLog, LongNamesAreCutAndALappedRingCountsItsLosses) {
  StepLog log;
  StepLog::Slot* s = log.Register(1);
  std::string long_name(100, 'x');
  for (uint64_t i = 0; i < StepLog::kSlots + 5; ++i) {
    s->Open(0, i * 10, long_name);
    s->Close(0, i * 10 + 5);
  }
  std::vector<StepEnd> out;
  log.Drain(&out);
  ASSERT_EQ(out.size(), StepLog::kSlots);
  EXPECT_EQ(log.lost(), 5u);
  EXPECT_EQ(out.front().end_ns, 5 * 10 + 5u) << "the oldest went";
  EXPECT_EQ(out.back().end_ns, (StepLog::kSlots + 4) * 10 + 5);
  EXPECT_EQ(out.front().name, std::string(StepLog::kNameWords * 8 - 1, 'x'));
}

TEST(StepLog, ThreadsEachHaveTheirOwnSlot) {
  StepLog log;
  std::vector<std::thread> threads;
  for (uint32_t t = 1; t <= 4; ++t) {
    threads.emplace_back([&log, t] {
      StepLog::Slot* s = log.Register(t);
      for (uint64_t i = 0; i < 10; ++i) {
        s->Open(0, i, "step#");
        s->Close(0, i + t);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<StepEnd> out;
  log.Drain(&out);
  ASSERT_EQ(out.size(), 40u);
  for (const StepEnd& e : out) EXPECT_EQ(e.duration_ns, e.os_tid);
}

// The control thread drains while a thread closes steps: every step it
// reads is whole (its name, end and duration from one close, never a mix of
// two), in order, and what it does not read is counted as lost. Run under
// TSan too (scripts/test's filter).
TEST(StepLog, ADrainBesideClosesReadsWholeStepsOrCountsThemLost) {
  StepLog log;
  constexpr uint64_t kCloses = 200'000;
  std::atomic<bool> done{false};
  std::thread stepper([&] {
    StepLog::Slot* s = log.Register(9);
    for (uint64_t k = 1; k <= kCloses; ++k) {
      s->Open(0, k * 10, "step#" + std::to_string(k));
      s->Close(0, k * 10 + k % 7);
    }
    done.store(true);
  });
  std::vector<StepEnd> out;
  while (!done.load()) log.Drain(&out);
  stepper.join();
  log.Drain(&out);
  uint64_t last = 0;
  for (const StepEnd& e : out) {
    ASSERT_EQ(e.name.rfind("step#", 0), 0u) << e.name;
    uint64_t k = std::stoull(e.name.substr(5));
    ASSERT_GT(k, last) << "in order";
    last = k;
    ASSERT_EQ(e.end_ns, k * 10 + k % 7) << e.name;
    ASSERT_EQ(e.duration_ns, k % 7) << e.name;
  }
  EXPECT_EQ(out.size() + log.lost(), kCloses);
  EXPECT_EQ(last, kCloses) << "the last close is always read";
}

}  // namespace
}  // namespace gpucap::recorder
