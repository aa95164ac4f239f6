// What the flight recorder's writer carries of the window marks from before
// a ring's span (open_marks.h): the open marks whose window is open at the
// start of the oldest windows frame the ring holds, and the latest instant
// mark before it, as the builder makes windows of marks, and nothing else.
#include "open_marks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "range_event.h"

namespace gpucap::format {
namespace {

WindowMark Mark(WindowMarkKind kind, uint64_t id, uint32_t tid, uint64_t ts, std::string label) {
  WindowMark m;
  m.kind = kind;
  m.id = id;
  m.os_tid = tid;
  m.timestamp_ns = ts;
  m.label = std::move(label);
  return m;
}
SmallMessage Open(uint64_t id, uint64_t ts, std::string label, uint32_t tid = 1) {
  return Mark(WindowMarkKind::kOpen, id, tid, ts, std::move(label));
}
SmallMessage Close(uint64_t id, uint64_t ts, uint32_t tid = 1) { return Mark(WindowMarkKind::kClose, id, tid, ts, ""); }
SmallMessage Instant(uint64_t ts, std::string label, uint32_t tid = 1) {
  return Mark(WindowMarkKind::kInstant, 0, tid, ts, std::move(label));
}

// The labels of what Carried returns, in its order, an instant mark's
// marked with a leading '!'.
std::vector<std::string> CarriedLabels(const OpenMarks& open) {
  std::vector<std::string> labels;
  for (const SmallMessage& m : open.Carried()) {
    const WindowMark& w = std::get<WindowMark>(m);
    labels.push_back((w.kind == WindowMarkKind::kInstant ? "!" : "") + w.label);
  }
  return labels;
}

TEST(OpenMarks, AnOpenMarkWhoseFrameLeftIsCarriedAsRecordedUntilItsClosesFrameLeavesToo) {
  OpenMarks open;
  WindowMark step = Mark(WindowMarkKind::kOpen, 5, 7, 1000, "ProfilerStep#3");
  std::vector<SmallMessage> first = {SmallMessage(step)};
  open.AddFrame(10, first);
  EXPECT_FALSE(open.Advance(10)) << "frame 10 is still held";
  EXPECT_TRUE(open.Carried().empty());
  std::vector<SmallMessage> second = {TestRangeEvent(RangeKind::kPush, 7, 1500, "not a mark")};
  open.AddFrame(11, second);
  EXPECT_TRUE(open.Advance(11)) << "frame 10 left";
  std::vector<SmallMessage> carried = open.Carried();
  ASSERT_EQ(carried.size(), 1u) << "its close has not come: its window is open";
  EXPECT_EQ(std::get<WindowMark>(carried[0]), step) << "the mark as recorded: every field";
  std::vector<SmallMessage> third = {Close(5, 2000, 7)};
  open.AddFrame(12, third);
  EXPECT_TRUE(open.Advance(12));
  EXPECT_EQ(CarriedLabels(open), std::vector<std::string>{"ProfilerStep#3"}) << "closed in a frame held";
  EXPECT_TRUE(open.Advance(13)) << "frame 12, its close's, left";
  EXPECT_TRUE(open.Carried().empty()) << "its window closed before the ring's start";
  EXPECT_EQ(open.kept(), 0u);
}

TEST(OpenMarks, AMarkOpenedAndClosedInOneFrameIsNeverKeptNorOneClosedBeforeItsOpenCame) {
  OpenMarks open;
  // A window of a started range ended on thread 2, whose marks came first.
  std::vector<SmallMessage> frame = {Open(1, 1, "a"), Close(1, 2), Close(9, 8, 2), Open(9, 3, "s")};
  open.AddFrame(0, frame);
  EXPECT_EQ(open.kept(), 0u);
  std::vector<SmallMessage> later = {Open(2, 10, "b")};
  open.AddFrame(1, later);
  EXPECT_TRUE(open.Advance(2));
  EXPECT_EQ(CarriedLabels(open), std::vector<std::string>{"b"});
}

// The builder ends an open mark whose close is not in the capture at the
// next open of its label less its digits: once that open left the ring,
// the window ended before the span, unless its close comes after all.
TEST(OpenMarks, AnUnclosedMarkIsNotCarriedOnceTheNextOpenOfItsFamilyLeft) {
  OpenMarks open;
  std::vector<SmallMessage> a = {Open(1, 100, "ProfilerStep#0"), Open(2, 110, "epoch 7")};
  // An open of the family made before step 0 (another thread's, whose
  // marks came later) ends nothing, and is ended by step 0's.
  std::vector<SmallMessage> b = {Open(3, 200, "ProfilerStep#1"), Open(4, 90, "ProfilerStep#9", 2)};
  std::vector<SmallMessage> c = {Open(5, 300, "other")};
  open.AddFrame(0, a);
  open.AddFrame(1, b);
  open.AddFrame(2, c);
  EXPECT_TRUE(open.Advance(1));
  EXPECT_EQ(CarriedLabels(open), (std::vector<std::string>{"ProfilerStep#0", "epoch 7"}))
      << "step 1's open is held: step 0's window ends there, inside the span";
  EXPECT_TRUE(open.Advance(2));
  EXPECT_EQ(CarriedLabels(open), (std::vector<std::string>{"epoch 7", "ProfilerStep#1"}))
      << "step 0's window ended where step 1 opened, before the span; #9 (thread 2's, opened at 90) where step 0 did";
  std::vector<SmallMessage> d = {Close(1, 400)};
  open.AddFrame(3, d);
  EXPECT_TRUE(open.Advance(2)) << "no frame left, but what is carried changed";
  EXPECT_EQ(CarriedLabels(open), (std::vector<std::string>{"ProfilerStep#0", "epoch 7", "ProfilerStep#1"}))
      << "step 0's close came, in a frame held: its window is open to it";
}

// Instant marks make back-to-back windows, from one to the next in time
// whatever the thread or label: the latest in time of those that left the
// ring begins the window the span begins in.
TEST(OpenMarks, TheLatestInstantMarkThatLeftTheRingIsCarried) {
  OpenMarks open;
  std::vector<SmallMessage> a = {Instant(10, "i10"), Instant(30, "i30", 2)};
  std::vector<SmallMessage> b = {Instant(20, "i20")};  // thread 1's, after thread 2's
  std::vector<SmallMessage> c = {Instant(40, "i40")};
  open.AddFrame(0, a);
  open.AddFrame(1, b);
  open.AddFrame(2, c);
  EXPECT_TRUE(open.Advance(1));
  EXPECT_EQ(CarriedLabels(open), std::vector<std::string>{"!i30"});
  EXPECT_TRUE(open.Advance(2));
  EXPECT_EQ(CarriedLabels(open), std::vector<std::string>{"!i30"}) << "i20 is earlier than i30";
  std::vector<SmallMessage> d = {Open(1, 45, "w")};
  open.AddFrame(3, d);
  EXPECT_TRUE(open.Advance(4));
  EXPECT_EQ(CarriedLabels(open), (std::vector<std::string>{"w", "!i40"})) << "the open marks, then the instant";
  EXPECT_EQ(open.kept(), 1u) << "instant marks are not kept as open ones";
}

// A label of no digits for `n`, so that each is a family of its own.
std::string Letters(size_t n) {
  std::string s = "leak ";
  do {
    s.push_back(static_cast<char>('a' + n % 26));
    n /= 26;
  } while (n);
  return s;
}

TEST(OpenMarks, PastItsBoundTheOldestOpenGoesAndClosesStillPairWithTheRest) {
  OpenMarks open;
  // Closes lost by the recorder: opens that never close.
  std::vector<SmallMessage> leaks;
  for (size_t i = 0; i < OpenMarks::kMaxKept + 10; ++i) leaks.push_back(Open(i, 10 + i, Letters(i)));
  open.AddFrame(0, leaks);
  EXPECT_EQ(open.kept(), OpenMarks::kMaxKept);
  EXPECT_EQ(open.forgotten(), 10u);
  // The close of one forgotten and of the newest.
  std::vector<SmallMessage> b = {Close(0, 1'000'000), Close(OpenMarks::kMaxKept + 9, 1'000'001)};
  open.AddFrame(1, b);
  EXPECT_TRUE(open.Advance(2));
  std::vector<std::string> labels = CarriedLabels(open);
  ASSERT_EQ(labels.size(), OpenMarks::kMaxKept - 1);
  EXPECT_EQ(labels.front(), Letters(10));
  EXPECT_EQ(labels.back(), Letters(OpenMarks::kMaxKept + 8)) << "the newest was closed";
  EXPECT_EQ(open.kept(), OpenMarks::kMaxKept - 1);
}

}  // namespace
}  // namespace gpucap::format
