#include "gpucap/builder/ranges.h"

#include <gtest/gtest.h>

namespace gpucap::builder {
namespace {

using format::RangeEvent;
using format::RangeKind;

RangeEvent E(RangeKind k, uint32_t tid, uint64_t ts, std::string name = "", uint64_t id = 0, uint64_t domain = 0) {
  RangeEvent e;
  e.kind = k;
  e.os_tid = tid;
  e.timestamp_ns = ts;
  e.name = std::move(name);
  e.id = id;
  e.domain = domain;
  return e;
}

std::vector<std::string_view> Names(const RangeIndex& r, uint32_t tid, uint64_t t) {
  std::vector<std::string_view> out;
  for (uint32_t i : r.StackAt(tid, t)) out.push_back(r.ranges()[i].name);
  return out;
}

using V = std::vector<std::string_view>;

TEST(RangeIndex, NestedPushPopPerThreadEndsExclusive) {
  format::Capture c;
  c.ranges = {E(RangeKind::kPush, 1, 10, "a"), E(RangeKind::kPush, 1, 20, "b"), E(RangeKind::kPop, 1, 30),
              E(RangeKind::kPop, 1, 40), E(RangeKind::kPush, 2, 15, "x"), E(RangeKind::kPop, 2, 35)};
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
  c.ranges = {E(RangeKind::kPop, 1, 40), E(RangeKind::kPush, 1, 20, "b"), E(RangeKind::kPop, 1, 30),
              E(RangeKind::kPush, 1, 10, "a")};
  RangeIndex r(c, 1000);
  EXPECT_EQ(Names(r, 1, 25), (V{"a", "b"}));
  EXPECT_EQ(r.unmatched_ends(), 0u);
}

TEST(RangeIndex, DomainsKeepSeparateStacks) {
  format::Capture c;
  // Domain 1 and 2 interleave: pops match within their own domain.
  c.ranges = {E(RangeKind::kPush, 1, 10, "d1", 0, 1), E(RangeKind::kPush, 1, 20, "d2", 0, 2),
              E(RangeKind::kPop, 1, 30, "", 0, 1), E(RangeKind::kPop, 1, 40, "", 0, 2),
              E(RangeKind::kNameDomain, 1, 5, "mydomain", 0, 2)};
  RangeIndex r(c, 1000);
  EXPECT_EQ(Names(r, 1, 35), (V{"d2"}));
  EXPECT_EQ(r.DomainName(2), "mydomain");
}

TEST(RangeIndex, StartEndAcrossThreadsUnmatchedAndUnclosed) {
  format::Capture c;
  c.ranges = {E(RangeKind::kStart, 1, 10, "io", 7), E(RangeKind::kEnd, 2, 50, "", 7),
              E(RangeKind::kPop, 3, 60), E(RangeKind::kPush, 4, 70, "open"),
              E(RangeKind::kNameThread, 4, 1, "worker", 4)};
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
