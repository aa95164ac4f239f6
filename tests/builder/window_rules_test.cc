// The window rules the docs state, each pinned by a case that breaks when the
// rule does: windows are [start, end), and windows starting together sort
// longer first.
#include <gtest/gtest.h>

#include <set>

#include "gpucap/builder/window.h"
#include "scene.h"
#include "trace_util.h"

namespace gpucap::builder {
namespace {

TEST(WindowRules, ContainsIsHalfOpen) {
  Window w{0, "", 1000, 2000};
  EXPECT_FALSE(w.Contains(999));
  EXPECT_TRUE(w.Contains(1000));
  EXPECT_TRUE(w.Contains(1999));
  EXPECT_FALSE(w.Contains(2000)) << "a window does not hold its end";
  Window empty{0, "", 1000, 1000};
  EXPECT_FALSE(empty.Contains(1000));
}

format::RangeEvent Range(format::RangeKind kind, uint32_t tid, uint64_t ts, std::string name = "") {
  format::RangeEvent e;
  e.kind = kind;
  e.os_tid = tid;
  e.timestamp_ns = ts;
  e.name = std::move(name);
  return e;
}

TEST(WindowRules, WindowsStartingTogetherSortLongerFirst) {
  // Two steps pushed at the same instant on two threads, the shorter one
  // first in the file, so a sort by start alone (stable) keeps it first.
  format::Capture c;
  using K = format::RangeKind;
  c.ranges.push_back(Range(K::kPush, 1, 1000, "Step#short"));
  c.ranges.push_back(Range(K::kPush, 2, 1000, "Step#long"));
  c.ranges.push_back(Range(K::kPop, 1, 1500));
  c.ranges.push_back(Range(K::kPop, 2, 3000));
  c.ranges.push_back(Range(K::kPush, 1, 500, "Step#early"));
  c.ranges.push_back(Range(K::kPop, 1, 600));
  CaptureExtent extent = ComputeExtent(c);
  RangeIndex ranges(c, extent.end_ns);
  auto w = ResolveWindows(*ParseWindowSpec(R"(nvtx:Step#.*)"), c, extent, ranges);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->size(), 3u);
  EXPECT_EQ((*w)[0].label, "Step#early");
  EXPECT_EQ((*w)[1].label, "Step#long");
  EXPECT_EQ((*w)[1].end_ns, 3000u);
  EXPECT_EQ((*w)[2].label, "Step#short");
  for (uint32_t i = 0; i < w->size(); ++i) EXPECT_EQ((*w)[i].index, i);

  // The same with marks (the other source of windows that may tie).
  format::Capture m;
  m.windows.push_back({format::WindowMarkKind::kOpen, 100, 1, 1, "short"});
  m.windows.push_back({format::WindowMarkKind::kOpen, 100, 1, 2, "long"});
  m.windows.push_back({format::WindowMarkKind::kClose, 200, 1, 1, ""});
  m.windows.push_back({format::WindowMarkKind::kClose, 900, 1, 2, ""});
  CaptureExtent me = ComputeExtent(m);
  RangeIndex mr(m, me.end_ns);
  auto mw = ResolveWindows(*ParseWindowSpec("marks"), m, me, mr);
  ASSERT_TRUE(mw.ok()) << mw.status().message();
  ASSERT_EQ(mw->size(), 2u);
  EXPECT_EQ((*mw)[0].label, "long");
  EXPECT_EQ((*mw)[1].label, "short");
}

// nvtx:REGEX matches a range's whole name: a name that merely contains a
// match (a prefix, a suffix) is not a window.
TEST(WindowRules, NvtxPatternMatchesTheWholeName) {
  format::Capture c;
  using K = format::RangeKind;
  c.ranges.push_back(Range(K::kPush, 1, 1000, "ProfilerStep#1"));
  c.ranges.push_back(Range(K::kPop, 1, 2000));
  c.ranges.push_back(Range(K::kPush, 1, 3000, "ProfilerStep#2.backward"));
  c.ranges.push_back(Range(K::kPop, 1, 4000));
  c.ranges.push_back(Range(K::kPush, 1, 5000, "warmup ProfilerStep#3"));
  c.ranges.push_back(Range(K::kPop, 1, 6000));
  CaptureExtent extent = ComputeExtent(c);
  RangeIndex ranges(c, extent.end_ns);
  auto w = ResolveWindows(*ParseWindowSpec(R"(nvtx:ProfilerStep#\d+)"), c, extent, ranges);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->size(), 1u);
  EXPECT_EQ((*w)[0].label, "ProfilerStep#1");
}

// End to end: a kernel starting exactly where one `every` window ends and the
// next begins is drawn in the second window only.
TEST(WindowRules, AnOpAtAWindowBoundaryBelongsToTheLaterWindow) {
  using gpucap::testing::kT0;
  gpucap::testing::Scene s;
  gpucap::testing::Scene::Ok(s.c().String(0x1000, "_Z1kv"));
  s.Launch(1, 4242, kT0 + 100, kT0 + 200, kT0 + 300);
  // Window 0 is [kT0, kT0 + 1000): the second kernel starts at its end.
  s.Launch(2, 4242, kT0 + 400, kT0 + 1000, kT0 + 1100);
  s.Launch(3, 4242, kT0 + 1200, kT0 + 1300, kT0 + 1999);
  BuildOptions o;
  o.window = "every:1000ns";
  auto traces = gpucap::testing::BuildTraces(s.Path(), o);
  // The last launch call ends at kT0 + 3200: four windows of 1000 ns.
  ASSERT_EQ(traces.size(), 4u);
  std::vector<std::set<uint64_t>> corr(4);
  for (size_t i = 0; i < 4; ++i) {
    for (const gpucap::testing::Json* k : traces[i].Events("X", "kernel")) corr[i].insert((*k)["args"]["correlation"].u());
  }
  EXPECT_EQ(corr[0], (std::set<uint64_t>{1}));
  EXPECT_EQ(corr[1], (std::set<uint64_t>{2, 3}));
  EXPECT_TRUE(corr[2].empty() && corr[3].empty());
}

}  // namespace
}  // namespace gpucap::builder
