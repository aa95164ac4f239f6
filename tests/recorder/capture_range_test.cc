// Capture ranges, sampling and triggers: the gate's decisions, without a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "capture_range.h"
#include "range_matcher.h"
#include "trigger_file.h"

namespace gpucap::recorder {
namespace {

using Action = CaptureGate::Action;
using format::RecordingState;

CaptureRangeSpec Nvtx(const std::string& pattern) {
  CaptureRangeSpec s;
  s.source = CaptureRangeSpec::Source::kNvtx;
  s.pattern = pattern;
  return s;
}

CaptureGate::RangeKey Push(int depth = 0, uint32_t tid = 7) { return {tid, 0, depth, 0}; }

// Runs `steps` matching ranges through the gate and returns the indices
// recorded, checking that each record is followed by a pause (or stop) at
// the same range's close.
std::vector<int> RecordedSteps(CaptureGate& gate, int steps) {
  std::vector<int> out;
  for (int i = 0; i < steps; ++i) {
    CaptureGate::Decision open = gate.Open(Push(), "step#" + std::to_string(i));
    CaptureGate::Decision close = gate.Close(Push());
    if (open.action == Action::kRecord) {
      out.push_back(i);
      EXPECT_EQ(open.label, "step#" + std::to_string(i));
      EXPECT_NE(close.action, Action::kNone) << "step " << i << " opened recording but did not end it";
    } else {
      EXPECT_EQ(close.action, Action::kNone) << "step " << i;
    }
  }
  return out;
}

TEST(CaptureRangeParse, AcceptsNsysNamesAndRefusesOthers) {
  CaptureRangeSpec s;
  std::string err;
  ASSERT_TRUE(ParseCaptureRange("nvtx:ProfilerStep#\\d+", &s, &err));
  EXPECT_EQ(s.source, CaptureRangeSpec::Source::kNvtx);
  EXPECT_EQ(s.pattern, "ProfilerStep#\\d+");
  ASSERT_TRUE(ParseCaptureRange("cudaProfilerApi", &s, &err));
  EXPECT_EQ(s.source, CaptureRangeSpec::Source::kProfilerApi);
  EXPECT_FALSE(ParseCaptureRange("nvtx:", &s, &err));
  EXPECT_FALSE(ParseCaptureRange("cudaprofilerapi", &s, &err));
  EXPECT_NE(err.find("cudaprofilerapi"), std::string::npos) << err;

  ASSERT_TRUE(ParseCaptureRangeEnd("stop", &s, &err));
  EXPECT_EQ(s.end_after, 1u);
  ASSERT_TRUE(ParseCaptureRangeEnd("repeat", &s, &err));
  EXPECT_EQ(s.end_after, 0u);
  ASSERT_TRUE(ParseCaptureRangeEnd("repeat:3", &s, &err));
  EXPECT_EQ(s.end_after, 3u);
  for (const char* bad : {"repeat:0", "repeat:", "repeat:3x", "repeat:-1", "again"}) {
    EXPECT_FALSE(ParseCaptureRangeEnd(bad, &s, &err)) << bad;
  }
}

TEST(CaptureGate, StopEndsAfterTheFirstRangeLikeNsys) {
  CaptureGate gate(Nvtx("step"));
  EXPECT_EQ(gate.Initial().action, Action::kPause);
  auto open = gate.Open(Push(), "step#0");
  EXPECT_EQ(open.action, Action::kRecord);
  EXPECT_EQ(open.state, RecordingState::kRecording);
  // A nested matching range, and a pop of some inner range: neither ends it.
  EXPECT_EQ(gate.Open(Push(1), "step#inner").action, Action::kNone);
  EXPECT_EQ(gate.Close(Push(1)).action, Action::kNone);
  // Another thread's range at the same depth is not this one.
  EXPECT_EQ(gate.Close(Push(0, 8)).action, Action::kNone);
  auto close = gate.Close(Push());
  EXPECT_EQ(close.action, Action::kPauseAndStop);
  EXPECT_TRUE(gate.finished());
  EXPECT_EQ(gate.Open(Push(), "step#1").action, Action::kNone);
  EXPECT_EQ(gate.ranges_recorded(), 1u);
}

TEST(CaptureGate, RepeatNRecordsNRangesThenStops) {
  CaptureRangeSpec s = Nvtx("step");
  s.end_after = 3;
  s.end_given = true;
  CaptureGate gate(s);
  EXPECT_EQ(RecordedSteps(gate, 6), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(gate.finished());
}

TEST(CaptureGate, SampleRecordsTheLastOfEachNAndRepeatsByDefault) {
  CaptureRangeSpec s = Nvtx("step");
  s.sample_every = 100;
  CaptureGate gate(s);
  std::vector<int> got = RecordedSteps(gate, 2000);
  ASSERT_EQ(got.size(), 20u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], 99 + 100 * static_cast<int>(i));
  EXPECT_EQ(gate.ranges_seen(), 2000u);
  EXPECT_FALSE(gate.finished());
}

TEST(CaptureGate, SampledDecisionsSayWhichAndWhy) {
  CaptureRangeSpec s = Nvtx("step");
  s.sample_every = 2;
  CaptureGate gate(s);
  EXPECT_EQ(gate.Open(Push(), "step#0").action, Action::kNone);
  gate.Close(Push());
  auto d = gate.Open(Push(), "step#1");
  ASSERT_EQ(d.action, Action::kRecord);
  EXPECT_EQ(d.state, RecordingState::kSampled);
  EXPECT_NE(d.why.find("step#1"), std::string::npos) << d.why;
  EXPECT_NE(d.why.find("1 in 2"), std::string::npos) << d.why;
  EXPECT_EQ(gate.Close(Push()).action, Action::kPause);
}

// The range before each pick says so (Decision::ahead), so that CUPTI can
// be attached and switched on off the picked range's thread; no other does,
// periodic or random, and not once the ranges to record are done.
TEST(CaptureGate, TheRangeBeforeEachPickSaysOneIsNext) {
  for (std::optional<uint64_t> seed : {std::optional<uint64_t>(), std::optional<uint64_t>(7)}) {
    CaptureRangeSpec s = Nvtx("step");
    s.sample_every = 5;
    s.sample_seed = seed;
    s.end_after = 6;
    s.end_given = true;
    CaptureGate gate(s);
    std::vector<int> picked, ahead;
    for (int i = 0; i < 60; ++i) {
      CaptureGate::Decision d = gate.Open(Push(), "step#" + std::to_string(i));
      if (d.action == Action::kRecord) picked.push_back(i);
      if (d.ahead) {
        EXPECT_EQ(d.action, Action::kNone) << "step " << i;
        EXPECT_EQ(d.ranges_seen, static_cast<uint64_t>(i) + 1) << "the count this range made, under the gate's lock";
        ahead.push_back(i);
      }
      gate.Close(Push());
    }
    ASSERT_EQ(picked.size(), 6u);
    std::vector<int> before;
    for (int p : picked) {
      if (p > 0 && (before.empty() || before.back() != p - 1) &&
          std::find(picked.begin(), picked.end(), p - 1) == picked.end()) {
        before.push_back(p - 1);
      }
    }
    EXPECT_EQ(ahead, before) << (seed ? "random" : "periodic");
  }
}

TEST(CaptureGate, SampleWithRepeatNStopsAfterNSamples) {
  CaptureRangeSpec s = Nvtx("step");
  s.sample_every = 10;
  s.end_after = 2;
  s.end_given = true;
  CaptureGate gate(s);
  EXPECT_EQ(RecordedSteps(gate, 100), (std::vector<int>{9, 19}));
}

TEST(CaptureGate, TriggerRecordsTheNextKRangesOnly) {
  CaptureRangeSpec s = Nvtx("step");
  s.trigger_file = "/tmp/t";
  CaptureGate gate(s);
  EXPECT_TRUE(RecordedSteps(gate, 5).empty());  // nothing until the file appears
  EXPECT_FALSE(gate.trigger_busy());
  EXPECT_EQ(gate.Arm(2, "trigger").action, Action::kNone);  // exact: waits for the range
  EXPECT_TRUE(gate.trigger_busy());
  std::vector<int> got = RecordedSteps(gate, 5);
  EXPECT_EQ(got, (std::vector<int>{0, 1}));
  EXPECT_FALSE(gate.trigger_busy());
  EXPECT_FALSE(gate.finished());  // a trigger file repeats by default
}

TEST(CaptureGate, TriggerStaysBusyWhileItsRangeIsOpen) {
  CaptureRangeSpec s = Nvtx("step");
  s.trigger_file = "/tmp/t";
  CaptureGate gate(s);
  gate.Arm(1, "trigger");
  auto d = gate.Open(Push(), "step#0");
  ASSERT_EQ(d.action, Action::kRecord);
  EXPECT_NE(d.why.find("trigger"), std::string::npos);
  EXPECT_TRUE(gate.trigger_busy());
  gate.Close(Push());
  EXPECT_FALSE(gate.trigger_busy());
}

// A range whose recording could not start (the entry gate did not close
// for CUPTI's switch) is let go: not counted as recorded, its close ends
// nothing, and the next matching range records in its place (stop after
// one), a trigger keeps its turn, a sample's number is not spent.
TEST(CaptureGate, ADroppedRangeIsNotRecordedAndTheNextOneTakesItsPlace) {
  CaptureGate stop(Nvtx("step"));
  auto opened = stop.Open(Push(), "step#0");
  ASSERT_EQ(opened.action, Action::kRecord);
  EXPECT_EQ(opened.range_index, 0u);
  stop.Dropped(Push(), opened.range_index);
  EXPECT_FALSE(stop.MayClose());
  EXPECT_EQ(stop.Close(Push()).action, Action::kNone) << "nothing was recording";
  EXPECT_EQ(stop.ranges_recorded(), 0u);
  EXPECT_EQ(stop.ranges_dropped(), 1u);
  ASSERT_EQ(stop.Open(Push(), "step#1").action, Action::kRecord);
  EXPECT_EQ(stop.Close(Push()).action, Action::kPauseAndStop);
  EXPECT_EQ(stop.ranges_recorded(), 1u);

  CaptureRangeSpec t = Nvtx("step");
  t.trigger_file = "/tmp/t";
  CaptureGate trigger(t);
  trigger.Arm(1, "trigger");
  ASSERT_EQ(trigger.Open(Push(), "step#0").action, Action::kRecord);
  trigger.Dropped(Push(), 0);
  EXPECT_TRUE(trigger.trigger_busy()) << "its one range is still to record";
  trigger.Close(Push());
  ASSERT_EQ(trigger.Open(Push(), "step#1").action, Action::kRecord);
  trigger.Close(Push());
  EXPECT_FALSE(trigger.trigger_busy());

  CaptureRangeSpec s = Nvtx("step");
  s.sample_every = 2;
  CaptureGate sample(s);
  sample.Open(Push(), "step#0");
  sample.Close(Push());
  auto first = sample.Open(Push(), "step#1");
  ASSERT_EQ(first.action, Action::kRecord);
  EXPECT_NE(first.why.find("sample 1"), std::string::npos) << first.why;
  EXPECT_EQ(first.range_index, 1u);
  sample.Dropped(Push(), first.range_index);
  sample.Close(Push());
  sample.Open(Push(), "step#2");
  sample.Close(Push());
  auto next = sample.Open(Push(), "step#3");
  ASSERT_EQ(next.action, Action::kRecord);
  EXPECT_NE(next.why.find("sample 1"), std::string::npos) << "the dropped one's number is not spent: " << next.why;

  // Another range's key is not it, nor a later range under the same key
  // (every cudaProfilerApi range has one key).
  CaptureGate other(Nvtx("step"));
  ASSERT_EQ(other.Open(Push(), "step#0").action, Action::kRecord);
  other.Dropped(Push(0, 8), 0);
  EXPECT_TRUE(other.MayClose());
  other.Close(Push());
  CaptureRangeSpec r = Nvtx("step");
  r.end_after = 0;
  CaptureGate again(r);
  auto one = again.Open(Push(), "step#0");
  again.Close(Push());
  ASSERT_EQ(again.Open(Push(), "step#1").action, Action::kRecord);
  again.Dropped(Push(), one.range_index);  // the first range's late drop
  EXPECT_TRUE(again.MayClose()) << "the second range is still recording";
  EXPECT_EQ(again.ranges_dropped(), 0u);
  EXPECT_EQ(other.ranges_dropped(), 0u);
}

TEST(CaptureGate, EarlyArmRecordsFromThePreviousRangesEnd) {
  CaptureRangeSpec s = Nvtx("step");
  s.sample_every = 3;
  s.arm_early = true;
  CaptureGate gate(s);
  EXPECT_EQ(gate.Initial().action, Action::kPause);  // step 0 is not sampled
  EXPECT_EQ(gate.Open(Push(), "step#0").action, Action::kNone);
  EXPECT_EQ(gate.Close(Push()).action, Action::kNone);
  EXPECT_EQ(gate.Open(Push(), "step#1").action, Action::kNone);
  // Closing step 1 arms for step 2, the sampled one.
  auto armed = gate.Close(Push());
  EXPECT_EQ(armed.action, Action::kRecord);
  EXPECT_EQ(armed.state, RecordingState::kSampled);
  EXPECT_EQ(gate.Open(Push(), "step#2").action, Action::kRecord);
  EXPECT_EQ(gate.Close(Push()).action, Action::kPause);
}

TEST(CaptureGate, EarlyArmWithEveryRangeRecordsFromTheStart) {
  CaptureRangeSpec s = Nvtx("step");
  s.arm_early = true;
  s.end_after = 0;
  s.end_given = true;
  CaptureGate gate(s);
  EXPECT_EQ(gate.Initial().action, Action::kRecord);
}

// --delay with a capture range: the delay comes first, ranges inside it are
// neither recorded nor counted, so sampling counts from the delay's end.
TEST(CaptureGate, HeldRangesAreNotCountedAndSamplingStartsAtTheRelease) {
  CaptureRangeSpec s = Nvtx("step");
  s.sample_every = 3;
  CaptureGate gate(s);
  auto hold = gate.Hold("--delay 2s");
  EXPECT_EQ(hold.action, Action::kPause);
  EXPECT_EQ(hold.why, "--delay 2s");
  EXPECT_TRUE(RecordedSteps(gate, 7).empty());
  EXPECT_EQ(gate.ranges_seen(), 0u);
  EXPECT_EQ(gate.Release().action, Action::kPause);  // what Initial() says
  EXPECT_EQ(gate.Release().action, Action::kNone);   // once
  EXPECT_EQ(RecordedSteps(gate, 9), (std::vector<int>{2, 5, 8}));
}

TEST(CaptureGate, HeldGateStopsOnlyAfterARangeFromTheRelease) {
  CaptureGate gate(Nvtx("step"));  // end: stop after one range
  gate.Hold("--delay");
  EXPECT_TRUE(RecordedSteps(gate, 3).empty());
  EXPECT_FALSE(gate.finished());
  gate.Release();
  EXPECT_EQ(gate.Open(Push(), "step#3").action, Action::kRecord);
  EXPECT_EQ(gate.Close(Push()).action, Action::kPauseAndStop);
}

TEST(CaptureGate, HeldTriggerAndEarlyArmWaitForTheRelease) {
  CaptureRangeSpec s = Nvtx("step");
  s.trigger_file = "/tmp/t";
  s.arm_early = true;
  CaptureGate gate(s);
  gate.Hold("--delay");
  EXPECT_EQ(gate.Arm(1, "trigger").action, Action::kNone);  // not armed early inside the delay
  EXPECT_TRUE(RecordedSteps(gate, 2).empty());
  auto d = gate.Release();  // the trigger's range is next: armed early now
  EXPECT_EQ(d.action, Action::kRecord);
  EXPECT_EQ(gate.Open(Push(), "step#2").action, Action::kRecord);
  EXPECT_FALSE(gate.Close(Push()).action == Action::kNone);
  EXPECT_FALSE(gate.trigger_busy());
}

TEST(CaptureGate, StartEndRangesCloseByIdFromAnyThread) {
  CaptureGate gate(Nvtx("phase"));
  CaptureGate::RangeKey started{0, 0, 0, 42};
  ASSERT_EQ(gate.Open(started, "phase#0").action, Action::kRecord);
  EXPECT_EQ(gate.Close(CaptureGate::RangeKey{0, 0, 0, 41}).action, Action::kNone);
  EXPECT_EQ(gate.Close(started).action, Action::kPauseAndStop);
}

TEST(RangeMatcher, SearchesWithTheLiteralPrefixAsAShortcut) {
  std::string err;
  auto m = RangeMatcher::Make("ProfilerStep#\\d+", &err);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->Matches("ProfilerStep#12"));
  EXPECT_FALSE(m->Matches("ProfilerStep#"));
  EXPECT_FALSE(m->Matches("aten::mm"));
  // A quantifier after the literal: "ab?" matches "a" alone.
  auto q = RangeMatcher::Make("ab?c", &err);
  ASSERT_TRUE(q);
  EXPECT_TRUE(q->Matches("xac"));
  EXPECT_FALSE(RangeMatcher::Make("step[", &err));
  EXPECT_FALSE(err.empty());
}

TEST(TriggerFile, RetiringRenamesItSoItsGoingSaysDone) {
  std::string path = ::testing::TempDir() + "gpucap_trigger_" + std::to_string(getpid());
  std::remove((path + ".done").c_str());
  TriggerFile t(path);
  EXPECT_FALSE(t.Present());
  std::ofstream(path) << "x";
  EXPECT_TRUE(t.Present());
  EXPECT_EQ(t.Retire(), "renamed to " + path + ".done");
  EXPECT_FALSE(t.Present());
  std::ifstream done(path + ".done");
  EXPECT_TRUE(done.good());
  std::remove((path + ".done").c_str());
}

}  // namespace
}  // namespace gpucap::recorder
