#include "gpucap/builder/window.h"

#include "gpucap/builder/annotation_stacks.h"
#include "gpucap/builder/name_matcher.h"
#include "gpucap/builder/ranges.h"

#include <gtest/gtest.h>

#include <tuple>

namespace gpucap::builder {
namespace {

TEST(WindowSpec, ParsesEveryForm) {
  auto all = ParseWindowSpec("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->kind, WindowSpec::Kind::kAll);
  auto range = ParseWindowSpec("range:+1.5s:+2s");
  ASSERT_TRUE(range.ok()) << range.status().message();
  EXPECT_TRUE(range->start.relative);
  EXPECT_EQ(range->start.ns, 1'500'000'000u);
  EXPECT_EQ(range->end.ns, 2'000'000'000u);
  auto abs = ParseWindowSpec("range:1790857026000000000:1790857027000000000");
  ASSERT_TRUE(abs.ok());
  EXPECT_FALSE(abs->start.relative);
  EXPECT_EQ(abs->start.ns, 1790857026000000000u);
  auto every = ParseWindowSpec("every:250ms");
  ASSERT_TRUE(every.ok());
  EXPECT_EQ(every->every_ns, 250'000'000u);
  auto nvtx = ParseWindowSpec(R"(nvtx:ProfilerStep#\d+)");
  ASSERT_TRUE(nvtx.ok());
  EXPECT_EQ(nvtx->pattern, R"(ProfilerStep#\d+)");
  EXPECT_TRUE(ParseWindowSpec("marks").ok());
}

TEST(WindowSpec, RejectsWithAReason) {
  for (const char* bad : {"", "some", "all:1", "range:5", "range:+2s:+1s", "every:0", "every:10parsecs",
                          "nvtx:", "nvtx:(", "range:1.5:2", "every:1.0000000001s",
                          // A duration without its unit: every:100 once meant 100 ns.
                          "every:100", "every:1.5"}) {
    auto s = ParseWindowSpec(bad);
    EXPECT_FALSE(s.ok()) << bad;
    if (!s.ok()) {
      EXPECT_NE(s.status().message().find("--window"), std::string::npos);
    }
  }
}

TEST(Duration, ExactInDecimal) {
  EXPECT_EQ(*ParseDuration("1.5s"), 1'500'000'000u);
  EXPECT_EQ(*ParseDuration("0.1s"), 100'000'000u);
  EXPECT_EQ(*ParseDuration("10us"), 10'000u);
  EXPECT_EQ(*ParseDuration("42"), 42u);
  EXPECT_EQ(*ParseDuration("2m"), 120'000'000'000u);
  EXPECT_FALSE(ParseDuration("1.5ns").ok());
  EXPECT_FALSE(ParseDuration("ms").ok());
}

TEST(Selection, ListsAndRanges) {
  auto s = ParseSelection("2,5-7,3,5");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (std::vector<uint32_t>{2, 3, 5, 6, 7}));
  EXPECT_FALSE(ParseSelection("7-5").ok());
  EXPECT_FALSE(ParseSelection("a").ok());
  EXPECT_FALSE(ParseSelection("1,,2").ok());
  // The last uint32 index: a 32-bit loop counter never passes it.
  auto last = ParseSelection("4294967295");
  ASSERT_TRUE(last.ok()) << last.status().message();
  EXPECT_EQ(*last, (std::vector<uint32_t>{4294967295u}));
  auto top = ParseSelection("4294967293-4294967295");
  ASSERT_TRUE(top.ok()) << top.status().message();
  EXPECT_EQ(*top, (std::vector<uint32_t>{4294967293u, 4294967294u, 4294967295u}));
  std::vector<Window> w(3);
  for (uint32_t i = 0; i < 3; ++i) w[i].index = i;
  auto kept = SelectWindows(w, {0, 2});
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->size(), 2u);
  EXPECT_EQ((*kept)[1].index, 2u);
  auto past = SelectWindows(w, {3});
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("3 windows"), std::string::npos);
}

format::Capture CaptureWithRanges() {
  format::Capture c;
  auto push = [&](uint64_t ts, std::string name) {
    format::RangeEvent e;
    e.kind = format::RangeKind::kPush;
    e.os_tid = 1;
    e.timestamp_ns = ts;
    e.name = std::move(name);
    c.ranges.push_back(e);
  };
  auto pop = [&](uint64_t ts) {
    format::RangeEvent e;
    e.kind = format::RangeKind::kPop;
    e.os_tid = 1;
    e.timestamp_ns = ts;
    c.ranges.push_back(e);
  };
  push(1000, "ProfilerStep#1");
  push(1100, "forward");
  pop(1200);
  pop(2000);
  push(2000, "ProfilerStep#2");
  pop(3000);
  push(3000, "ProfilerStep#x");
  pop(3500);
  return c;
}

TEST(ResolveWindows, NvtxEveryRangeAndAll) {
  format::Capture c = CaptureWithRanges();
  CaptureExtent extent = ComputeExtent(c);
  EXPECT_EQ(extent.start_ns, 1000u);
  EXPECT_EQ(extent.end_ns, 3500u);
  RangeIndex ranges(c, extent.end_ns);
  auto nvtx = ResolveWindows(*ParseWindowSpec(R"(nvtx:ProfilerStep#\d+)"), c, extent, ranges);
  ASSERT_TRUE(nvtx.ok());
  ASSERT_EQ(nvtx->size(), 2u) << "the whole name must match";
  EXPECT_EQ((*nvtx)[0], (Window{0, "ProfilerStep#1", 1000, 2000, true, 0, R"(ProfilerStep#\d+)"}));
  EXPECT_EQ((*nvtx)[1], (Window{1, "ProfilerStep#2", 2000, 3000, true, 2, R"(ProfilerStep#\d+)"}));

  auto every = ResolveWindows(*ParseWindowSpec("every:1000ns"), c, extent, ranges);
  ASSERT_TRUE(every.ok());
  ASSERT_EQ(every->size(), 3u);
  EXPECT_EQ((*every)[2].start_ns, 3000u);
  EXPECT_EQ((*every)[2].end_ns, 4000u);
  for (size_t i = 1; i < every->size(); ++i) EXPECT_EQ((*every)[i].start_ns, (*every)[i - 1].end_ns);

  // A period near 2^64: one window, its end saturated, not a loop that wraps.
  auto huge = ResolveWindows(*ParseWindowSpec("every:18446744073709551615ns"), c, extent, ranges);
  ASSERT_TRUE(huge.ok()) << huge.status().message();
  ASSERT_EQ(huge->size(), 1u);
  EXPECT_EQ((*huge)[0].start_ns, 1000u);
  EXPECT_EQ((*huge)[0].end_ns, UINT64_MAX);
  auto far = ResolveWindows(*ParseWindowSpec("range:+18446744073709551000ns:+18446744073709551615ns"), c, extent,
                            ranges);
  EXPECT_FALSE(far.ok()) << "both ends saturate to 2^64-1: an empty range";

  auto rel = ResolveWindows(*ParseWindowSpec("range:+500:+1500"), c, extent, ranges);
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ((*rel)[0].start_ns, 1500u);
  EXPECT_EQ((*rel)[0].end_ns, 2500u);

  auto all = ResolveWindows(*ParseWindowSpec("all"), c, extent, ranges);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE((*all)[0].Contains(1000) && (*all)[0].Contains(3500));
}

// A step marked twice: the program pushes "train#N" and, under emit_nvtx,
// its record_function("train#N") is a range "train#N, op_id = K" inside it.
// One window per step, the outer range; a same-named range that is not
// inside it (a later step, another thread's) is a step of its own, and so is
// a differently named match inside it.
TEST(ResolveWindows, AStepMarkedTwiceIsOneWindow) {
  format::Capture c;
  auto event = [&](format::RangeKind kind, uint32_t tid, uint64_t ts, std::string name) {
    format::RangeEvent e;
    e.kind = kind;
    e.os_tid = tid;
    e.timestamp_ns = ts;
    e.name = std::move(name);
    c.ranges.push_back(e);
  };
  auto push = [&](uint32_t tid, uint64_t ts, std::string name) { event(format::RangeKind::kPush, tid, ts, name); };
  auto pop = [&](uint32_t tid, uint64_t ts) { event(format::RangeKind::kPop, tid, ts, ""); };
  push(1, 1000, "train#0");
  push(1, 1010, "train#0, op_id = 2");
  push(1, 1020, "aten::mm, seq = 3, op_id = 4");
  pop(1, 1030);
  pop(1, 1900);
  pop(1, 2000);
  push(1, 2000, "train#1");
  push(1, 2010, "train#1, op_id = 9");
  push(1, 2020, "train#2");  // another step's name inside: a window of its own
  pop(1, 2030);
  pop(1, 2900);
  pop(1, 3000);
  push(2, 2500, "train#1");  // the same name on another thread
  pop(2, 2600);
  CaptureExtent extent = ComputeExtent(c);
  RangeIndex ranges(c, extent.end_ns);
  auto w = ResolveWindows(*ParseWindowSpec(R"(nvtx:train#\d+)"), c, extent, ranges);
  ASSERT_TRUE(w.ok()) << w.status().message();
  std::vector<std::pair<std::string, uint64_t>> got;
  for (const Window& x : *w) got.emplace_back(x.label, x.start_ns);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, uint64_t>>{
                     {"train#0", 1000}, {"train#1", 2000}, {"train#2", 2020}, {"train#1", 2500}}));

  // The step rule agrees: the inner mark is no step, so a thread with no
  // step open (autograd's) belongs to the outer one.
  auto matcher = NameMatcher::Compile(R"(train#\d+)");
  ASSERT_TRUE(matcher.ok());
  StepRanges steps(ranges, c, *matcher);
  uint32_t outer = RangeIndex::kNone, inner = RangeIndex::kNone;
  for (uint32_t i = 0; i < ranges.ranges().size(); ++i) {
    if (ranges.ranges()[i].start_ns == 1000) outer = i;
    if (ranges.ranges()[i].start_ns == 1010) inner = i;
  }
  ASSERT_NE(outer, RangeIndex::kNone);
  ASSERT_NE(inner, RangeIndex::kNone);
  EXPECT_TRUE(steps.IsStep(outer));
  EXPECT_FALSE(steps.IsStep(inner));
  EXPECT_EQ(steps.OpenAt(1500, /*tid=*/3), outer);
  std::vector<uint32_t> scratch;
  EXPECT_TRUE(steps.Holds(outer, 3, 1500, &scratch));
  EXPECT_TRUE(steps.Holds(outer, 1, 1500, &scratch));
}

// every: windows tile [start, exclusive end) of the capture exactly: as many
// as it takes to cover the span and no more, so none starts at or past the
// exclusive end (one past the latest timestamp), the last one holding it.
TEST(ResolveWindows, EveryWindowsStopAtTheCapturesExclusiveEnd) {
  struct Case {
    uint64_t last_ts;   // the capture's latest timestamp (inclusive end)
    const char* spec;
    uint64_t period;
  };
  // The capture runs from 1000; its exclusive end is last_ts + 1.
  const Case cases[] = {
      {3999, "every:1000ns", 1000},  // exclusive end 4000: exactly 3 periods
      {4000, "every:1000ns", 1000},  // exclusive end 4001: a 4th window holds 4000
      {3998, "every:1000ns", 1000},  // 3999: 3 windows
      {3999, "every:3000ns", 3000},  // one window, ending at the exclusive end
      {1000, "every:1ns", 1},        // a capture of one nanosecond: one window
      {1001, "every:1ns", 1},        // two nanoseconds: two windows
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(k.spec) + " over [1000, " + std::to_string(k.last_ts) + "]");
    format::Capture c;
    for (uint64_t ts : {uint64_t{1000}, k.last_ts}) {
      format::RangeEvent e;
      e.kind = ts == 1000 ? format::RangeKind::kPush : format::RangeKind::kPop;
      e.os_tid = 1;
      e.timestamp_ns = ts;
      e.name = "r";
      c.ranges.push_back(e);
    }
    CaptureExtent extent = ComputeExtent(c);
    ASSERT_EQ(extent.start_ns, 1000u);
    ASSERT_EQ(extent.end_ns, k.last_ts);
    RangeIndex ranges(c, extent.end_ns);
    auto w = ResolveWindows(*ParseWindowSpec(k.spec), c, extent, ranges);
    ASSERT_TRUE(w.ok()) << w.status().message();
    const uint64_t exclusive_end = k.last_ts + 1, span = exclusive_end - 1000;
    const size_t want = static_cast<size_t>((span + k.period - 1) / k.period);  // ceil
    ASSERT_EQ(w->size(), want);
    for (size_t i = 0; i < w->size(); ++i) {
      EXPECT_EQ((*w)[i].start_ns, 1000 + i * k.period) << i;
      EXPECT_EQ((*w)[i].end_ns, 1000 + (i + 1) * k.period) << i;
      EXPECT_LT((*w)[i].start_ns, exclusive_end) << "window " << i << " starts past the capture";
    }
    EXPECT_TRUE(w->back().Contains(k.last_ts)) << "the last window holds the latest timestamp";
    EXPECT_GE(w->back().end_ns, exclusive_end);
  }
}

TEST(ResolveWindows, MarksPairByIdAndInstantsSplit) {
  format::Capture c;
  auto mark = [&](format::WindowMarkKind k, uint64_t ts, uint64_t id, std::string label) {
    c.windows.push_back({k, ts, 1, id, std::move(label)});
  };
  mark(format::WindowMarkKind::kOpen, 100, 1, "warmup");
  mark(format::WindowMarkKind::kOpen, 150, 2, "inner");
  mark(format::WindowMarkKind::kClose, 200, 1, "");
  mark(format::WindowMarkKind::kClose, 250, 2, "");
  mark(format::WindowMarkKind::kInstant, 300, 0, "a");
  mark(format::WindowMarkKind::kInstant, 400, 0, "b");
  CaptureExtent extent = ComputeExtent(c);
  RangeIndex ranges(c, extent.end_ns);
  auto w = ResolveWindows(*ParseWindowSpec("marks"), c, extent, ranges);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->size(), 3u);
  EXPECT_EQ((*w)[0], (Window{0, "warmup", 100, 200, true, Window::kNoRange, ""}));
  EXPECT_EQ((*w)[1], (Window{1, "inner", 150, 250, true, Window::kNoRange, ""}));
  EXPECT_EQ((*w)[2], (Window{2, "a", 300, 400, true, Window::kNoRange, ""}));
  format::Capture none;
  RangeIndex empty(none, 0);
  EXPECT_FALSE(ResolveWindows(*ParseWindowSpec("marks"), none, ComputeExtent(none), empty).ok());
}

// The recorder marks a step marked twice twice: `--window-nvtx 'train#\d+'`
// takes both the program's "train#N" and emit_nvtx's "train#N, op_id = K"
// inside it. `-w marks` gives one window per step, as nvtx:REGEX does
// (AStepMarkedTwiceIsOneWindow), labelled as the trace shows the step; the
// same name on another thread, or after the outer one closed, stays a window.
TEST(ResolveWindows, MarksOfAStepMarkedTwiceAreOneWindow) {
  format::Capture c;
  auto mark = [&](format::WindowMarkKind k, uint64_t ts, uint32_t tid, uint64_t id, std::string label) {
    c.windows.push_back({k, ts, tid, id, std::move(label)});
  };
  using K = format::WindowMarkKind;
  mark(K::kOpen, 1000, 1, 1, "train#0");
  mark(K::kOpen, 1010, 1, 2, "train#0, op_id = 2");
  mark(K::kClose, 1900, 1, 2, "");
  mark(K::kClose, 2000, 1, 1, "");
  mark(K::kOpen, 2000, 1, 3, "train#1, op_id = 9");  // only emit_nvtx's range: its name as shown
  mark(K::kClose, 2900, 1, 3, "");
  mark(K::kOpen, 2500, 2, 4, "train#1, op_id = 11");  // another thread
  mark(K::kClose, 2600, 2, 4, "");
  CaptureExtent extent = ComputeExtent(c);
  RangeIndex ranges(c, extent.end_ns);
  auto w = ResolveWindows(*ParseWindowSpec("marks"), c, extent, ranges);
  ASSERT_TRUE(w.ok()) << w.status().message();
  std::vector<std::tuple<std::string, uint64_t, uint64_t>> got;
  for (const Window& x : *w) got.emplace_back(x.label, x.start_ns, x.end_ns);
  EXPECT_EQ(got, (std::vector<std::tuple<std::string, uint64_t, uint64_t>>{
                     {"train#0", 1000, 2000}, {"train#1", 2000, 2900}, {"train#1", 2500, 2600}}));
}

}  // namespace
}  // namespace gpucap::builder
