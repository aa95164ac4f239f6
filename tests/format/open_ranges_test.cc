// What the flight recorder's writer carries from before a ring's span
// (open_ranges.h): the ranges open at the start of the oldest ranges frame
// the ring holds, paired as the builder pairs them, and nothing else.
#include "open_ranges.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "range_event.h"

namespace gpucap::format {
namespace {

SmallMessage Push(uint32_t tid, uint64_t ts, std::string name, uint64_t domain = 0) {
  return TestRangeEvent(RangeKind::kPush, tid, ts, std::move(name), domain);
}
SmallMessage Pop(uint32_t tid, uint64_t ts, uint64_t domain = 0) {
  return TestRangeEvent(RangeKind::kPop, tid, ts, "", domain);
}
SmallMessage Start(uint64_t id, uint32_t tid, uint64_t ts, std::string name) {
  return TestRangeEvent(RangeKind::kStart, tid, ts, std::move(name), 0, id);
}
SmallMessage End(uint64_t id, uint32_t tid, uint64_t ts) { return TestRangeEvent(RangeKind::kEnd, tid, ts, "", 0, id); }

// The names of what Carried returns, in its order.
std::vector<std::string> CarriedNames(const OpenRanges& open) {
  std::vector<std::string> names;
  for (const SmallMessage& m : open.Carried()) names.push_back(std::get<RangeEvent>(m).name);
  return names;
}

TEST(OpenRanges, APushWhoseFrameLeftIsCarriedAsRecordedUntilItsPopsFrameLeavesToo) {
  OpenRanges open;
  RangeEvent step = TestRangeEvent(RangeKind::kPush, 7, 1000, "ProfilerStep#3", 0x55);
  step.category = 4;
  step.color = 0xff00ff;
  step.payload = int64_t{-9};
  step.ext_payloads.push_back({12, "bytes", false});
  std::vector<SmallMessage> first = {SmallMessage(step)};
  open.AddFrame(10, first);
  EXPECT_FALSE(open.Advance(10)) << "frame 10 is still held";
  std::vector<SmallMessage> second = {Pop(7, 2000, 0x55)};
  open.AddFrame(12, second);
  EXPECT_TRUE(open.Advance(11)) << "frame 10 left";
  std::vector<SmallMessage> carried = open.Carried();
  ASSERT_EQ(carried.size(), 1u);
  EXPECT_EQ(std::get<RangeEvent>(carried[0]), step) << "the push as recorded: every field";
  EXPECT_FALSE(open.Advance(12)) << "no ranges frame left: the same set";
  EXPECT_EQ(CarriedNames(open), std::vector<std::string>{"ProfilerStep#3"});
  EXPECT_TRUE(open.Advance(13)) << "frame 12, its pop's, left";
  EXPECT_TRUE(open.Carried().empty());
  EXPECT_EQ(open.kept(), 0u);
}

TEST(OpenRanges, ARangePushedAndPoppedInOneFrameIsNeverKept) {
  OpenRanges open;
  std::vector<SmallMessage> frame = {Push(1, 1, "a"),
                                     Push(1, 2, "b"),
                                     Pop(1, 3),
                                     Pop(1, 4),
                                     TestRangeEvent(RangeKind::kMark, 1, 5, "mark"),
                                     TestRangeEvent(RangeKind::kNameThread, 1, 6, "t"),
                                     Start(9, 1, 7, "s"),
                                     End(9, 2, 8)};
  open.AddFrame(0, frame);
  EXPECT_EQ(open.kept(), 0u);
  EXPECT_TRUE(open.Advance(1));
  EXPECT_TRUE(open.Carried().empty()) << "marks and names are no ranges";
}

TEST(OpenRanges, ARangeOpenedAndClosedInFramesThatBothLeftIsNotCarried) {
  OpenRanges open;
  std::vector<SmallMessage> a = {Push(1, 1, "gone")}, b = {Pop(1, 2), Push(1, 3, "open")}, c = {Push(2, 4, "held")};
  open.AddFrame(0, a);
  open.AddFrame(1, b);
  open.AddFrame(2, c);
  EXPECT_TRUE(open.Advance(2));
  EXPECT_EQ(CarriedNames(open), std::vector<std::string>{"open"}) << "'held' was opened in a frame still held";
  EXPECT_EQ(open.kept(), 2u) << "'gone' is forgotten";
}

TEST(OpenRanges, PushesNestPerThreadAndDomain) {
  OpenRanges open;
  std::vector<SmallMessage> a = {Push(1, 1, "t1 outer"), Push(2, 2, "t2 outer"), Push(1, 3, "t1 nccl", 0x99),
                                 Push(1, 4, "t1 inner"), Push(2, 5, "t2 inner"), Pop(3, 6)};
  // Closes t1 inner (not t1 nccl: another domain) and t2 inner.
  std::vector<SmallMessage> b = {Pop(1, 7), Pop(2, 8)};
  open.AddFrame(0, a);
  open.AddFrame(1, b);
  EXPECT_TRUE(open.Advance(1));
  EXPECT_EQ(CarriedNames(open), (std::vector<std::string>{"t1 outer", "t2 outer", "t1 nccl", "t1 inner", "t2 inner"}))
      << "in the order made; a pop on a thread with nothing open closes nothing";
  EXPECT_TRUE(open.Advance(2));
  EXPECT_EQ(CarriedNames(open), (std::vector<std::string>{"t1 outer", "t2 outer", "t1 nccl"}));
}

TEST(OpenRanges, StartedRangesCloseByIdOnAnyThreadEvenWhenTheEndCameFirst) {
  OpenRanges open;
  // Thread 2's events came first: the end of 41 before its start.
  std::vector<SmallMessage> a = {Start(40, 1, 1, "forty"), End(41, 2, 5), Start(41, 1, 2, "forty-one"),
                                 Start(42, 1, 3, "forty-two")};
  std::vector<SmallMessage> b = {End(40, 3, 6)};
  open.AddFrame(0, a);
  open.AddFrame(1, b);
  EXPECT_TRUE(open.Advance(1));
  EXPECT_EQ(CarriedNames(open), (std::vector<std::string>{"forty", "forty-two"}));
  EXPECT_TRUE(open.Advance(2));
  EXPECT_EQ(CarriedNames(open), std::vector<std::string>{"forty-two"});
}

TEST(OpenRanges, NothingChangesUntilARangesFrameLeaves) {
  OpenRanges open;
  std::vector<SmallMessage> a = {Push(1, 1, "a")};
  open.AddFrame(5, a);
  // Frames 0-4 were others (chunks, definitions): none of ours left.
  EXPECT_FALSE(open.Advance(3));
  EXPECT_FALSE(open.Advance(5));
  EXPECT_TRUE(open.Carried().empty());
  EXPECT_TRUE(open.Advance(9));
  EXPECT_EQ(CarriedNames(open), std::vector<std::string>{"a"});
}

TEST(OpenRanges, PastItsBoundTheOldestOpenGoesAndPopsStillPairWithTheRest) {
  OpenRanges open;
  // Pops lost by the recorder: pushes that never close.
  std::vector<SmallMessage> leaks;
  for (size_t i = 0; i < OpenRanges::kMaxKept + 10; ++i) leaks.push_back(Push(1, 10 + i, "leak " + std::to_string(i)));
  open.AddFrame(0, leaks);
  EXPECT_EQ(open.kept(), OpenRanges::kMaxKept);
  EXPECT_EQ(open.forgotten(), 10u);
  std::vector<SmallMessage> b = {Push(1, 1'000'000, "last"), Pop(1, 1'000'001), Pop(1, 1'000'002)};
  open.AddFrame(1, b);
  EXPECT_TRUE(open.Advance(2));
  std::vector<std::string> names = CarriedNames(open);
  ASSERT_EQ(names.size(), OpenRanges::kMaxKept - 1);
  EXPECT_EQ(names.front(), "leak 10");
  EXPECT_EQ(names.back(), "leak " + std::to_string(OpenRanges::kMaxKept + 8)) << "the newest leak was popped";
}

}  // namespace
}  // namespace gpucap::format
