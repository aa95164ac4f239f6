#include "gpucap/builder/ranges.h"

#include <gtest/gtest.h>

#include "../format/range_event.h"

namespace gpucap::builder {
namespace {

using format::RangeKind;

using format::TestRangeEvent;  // (kind, tid, ts, name, domain, id)

std::vector<std::string_view> Names(const RangeIndex& r, uint32_t tid, uint64_t t) {
  std::vector<std::string_view> out;
  for (uint32_t i : r.StackAt(tid, t)) out.push_back(r.ranges()[i].name);
  return out;
}

using V = std::vector<std::string_view>;

TEST(RangeIndex, NestedPushPopPerThreadEndsExclusive) {
  format::Capture c;
  c.ranges = {TestRangeEvent(RangeKind::kPush, 1, 10, "a"), TestRangeEvent(RangeKind::kPush, 1, 20, "b"),
              TestRangeEvent(RangeKind::kPop, 1, 30),       TestRangeEvent(RangeKind::kPop, 1, 40),
              TestRangeEvent(RangeKind::kPush, 2, 15, "x"), TestRangeEvent(RangeKind::kPop, 2, 35)};
  RangeIndex r(c, 1000);
  EXPECT_EQ(Names(r, 1, 5), V{});
  EXPECT_EQ(Names(r, 1, 10), (V{"a"}));
  EXPECT_EQ(Names(r, 1, 25), (V{"a", "b"}));
  EXPECT_EQ(Names(r, 1, 30), (V{"a"}));
  EXPECT_EQ(Names(r, 1, 40), V{});
  EXPECT_EQ(Names(r, 2, 25), (V{"x"})) << "another thread's ranges do not leak";
  EXPECT_EQ(r.StackIdAt(1, 12), r.StackIdAt(1, 19)) << "one stack between changes";
  EXPECT_EQ(r.ranges().size(), 3u);
}

TEST(RangeIndex, EventsOutOfFileOrderStillPair) {
  format::Capture c;
  c.ranges = {TestRangeEvent(RangeKind::kPop, 1, 40), TestRangeEvent(RangeKind::kPush, 1, 20, "b"),
              TestRangeEvent(RangeKind::kPop, 1, 30), TestRangeEvent(RangeKind::kPush, 1, 10, "a")};
  RangeIndex r(c, 1000);
  EXPECT_EQ(Names(r, 1, 25), (V{"a", "b"}));
  EXPECT_EQ(r.unmatched_ends(), 0u);
}

TEST(RangeIndex, DomainsKeepSeparateStacks) {
  format::Capture c;
  // Domain 1 and 2 interleave: pops match within their own domain.
  c.ranges = {TestRangeEvent(RangeKind::kPush, 1, 10, "d1", 1, 0), TestRangeEvent(RangeKind::kPush, 1, 20, "d2", 2, 0),
              TestRangeEvent(RangeKind::kPop, 1, 30, "", 1, 0), TestRangeEvent(RangeKind::kPop, 1, 40, "", 2, 0),
              TestRangeEvent(RangeKind::kNameDomain, 1, 5, "mydomain", 2, 0)};
  RangeIndex r(c, 1000);
  EXPECT_EQ(Names(r, 1, 35), (V{"d2"}));
  EXPECT_EQ(r.DomainName(2), "mydomain");
}

TEST(RangeIndex, StartEndAcrossThreadsUnmatchedAndUnclosed) {
  format::Capture c;
  c.ranges = {TestRangeEvent(RangeKind::kStart, 1, 10, "io", 0, 7), TestRangeEvent(RangeKind::kEnd, 2, 50, "", 0, 7),
              TestRangeEvent(RangeKind::kPop, 3, 60), TestRangeEvent(RangeKind::kPush, 4, 70, "open"),
              TestRangeEvent(RangeKind::kNameThread, 4, 1, "worker", 0, 4)};
  RangeIndex r(c, 1000);
  EXPECT_EQ(Names(r, 1, 30), (V{"io"})) << "open on the thread that started it";
  EXPECT_EQ(Names(r, 2, 30), V{});
  EXPECT_EQ(r.unmatched_ends(), 1u);
  EXPECT_EQ(r.unclosed(), 1u);
  EXPECT_EQ(Names(r, 4, 999), (V{"open"}));
  EXPECT_EQ(r.ThreadName(4), "worker");
}

}  // namespace
}  // namespace gpucap::builder
