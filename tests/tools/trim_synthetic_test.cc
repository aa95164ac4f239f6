// The trim planner's paths that no recorded fixture reaches: synchronization
// records and the CUDA events they wait on, CUPTI's NVTX markers (a start in
// the window keeps the end that closes it), external correlations, and the
// ranges around a launch made before a time window. One synthetic chunk, so
// each record's keep flag is checked by its position.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "cli.h"
#include "gpucap/tools/trim/fixture.h"
#include "gpucap/tools/trim/trim_plan.h"
#include "scene.h"
#include "trace_util.h"

namespace gpucap::tools {
namespace {

using gpucap::testing::kT0;
using gpucap::testing::Scene;
namespace bt = builder::testing;

constexpr uint32_t kInstant = 1, kStart = 2, kEnd = 4;

// The window is [kT0 + 10us, kT0 + 20us); records are numbered in call order.
struct Synthetic {
  Scene s;
  std::set<size_t> expect_kept, expect_dropped;
  size_t n = 0;
  void Kept() { expect_kept.insert(n++); }
  void Dropped() { expect_dropped.insert(n++); }

  Synthetic() {
    Scene::Ok(s.c().String(0x1000, "_Z1kv"));
    Scene::Ok(s.c().String(0x2000, "marker"));
    bt::ApiRecord a;
    a.start = kT0 + 100, a.end = kT0 + 150, a.correlation = 1;
    s.c().Api(a), Dropped();  // 0: a launch long before the window
    bt::KernelRecord k;
    k.start = kT0 + 200, k.end = kT0 + 300, k.correlation = 1, k.context = 2, k.name_pointer = 0x1000;
    s.c().Kernel(k), Dropped();  // 1: its kernel
    bt::CudaEventRecord e;
    e.correlation = 2, e.event_id = 9, e.device_timestamp = kT0 + 300, e.event_sync_id = 55;
    s.c().CudaEvent(e), Kept();  // 2: recorded before the window, waited on in it
    e.correlation = 3, e.event_id = 10, e.device_timestamp = kT0 + 400, e.event_sync_id = 66;
    s.c().CudaEvent(e), Dropped();  // 3: nothing in the window waits on it
    a.start = kT0 + 11000, a.end = kT0 + 11500, a.correlation = 10;
    s.c().Api(a), Kept();  // 4: a launch in the window
    k.start = kT0 + 12000, k.end = kT0 + 13000, k.correlation = 10, k.context = 1;
    s.c().Kernel(k), Kept();  // 5: its kernel
    s.c().ExternalCorrelation(10, 777), Kept();  // 6: the kept launch's external id
    s.c().ExternalCorrelation(1, 666), Dropped();  // 7: the dropped one's
    bt::SyncRecord y;
    y.type = 1;  // cudaEventSynchronize
    y.start = kT0 + 14000, y.end = kT0 + 15000, y.correlation = 11, y.cuda_event_id = 9, y.event_sync_id = 55;
    s.c().Sync(y), Kept();  // 8
    s.c().Marker(kStart, kT0 + 15000, 5, 4242, 0x2000), Kept();  // 9: starts in the window
    s.c().Marker(kEnd, kT0 + 25000, 5, 4242, 0), Kept();         // 10: closes 9 after it
    s.c().Marker(kStart, kT0 + 1000, 6, 4242, 0x2000), Dropped();  // 11: before the window
    s.c().Marker(kEnd, kT0 + 2000, 6, 4242, 0), Dropped();         // 12
    s.c().Marker(kInstant, kT0 + 16000, 7, 4242, 0x2000), Kept();  // 13
    a.start = kT0 + 30000, a.end = kT0 + 30500, a.correlation = 20;
    s.c().Api(a), Dropped();  // 14: after the window
  }
  std::string Window() const {
    return "range:" + std::to_string(kT0 + 10000) + ":" + std::to_string(kT0 + 20000);
  }
};

TEST(TrimSynthetic, PlanKeepsWaitedOnEventsClosingMarkersAndExternalIds) {
  Synthetic x;
  auto index = OpenCapture(x.s.Path());
  ASSERT_TRUE(index.ok()) << index.status().message();
  ASSERT_EQ((*index)->capture().chunks.size(), 1u);
  builder::BuildOptions o;
  o.window = x.Window();
  o.threads = 1;
  auto plan = PlanTrim(**index, o, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->records.size(), 1u);
  const std::vector<uint8_t>& flags = plan->records.begin()->second;
  ASSERT_EQ(flags.size(), x.n);
  for (size_t i : x.expect_kept) EXPECT_TRUE(flags[i]) << "record " << i << " must be kept";
  for (size_t i : x.expect_dropped) EXPECT_FALSE(flags[i]) << "record " << i << " must be dropped";
  EXPECT_EQ(plan->records_kept, x.expect_kept.size());
}

// The trimmed capture builds the window as the whole one does: the sync's
// event, the marker range closed after the window and the kernel's
// External id all still there.
TEST(TrimSynthetic, TrimmedCaptureBuildsTheSameWindow) {
  Synthetic x;
  gpucap::testing::TempDir dir;
  auto source = OpenCapture(x.s.Path());
  ASSERT_TRUE(source.ok());
  FixtureRequest r;
  r.source = x.s.Path();
  r.build.window = x.Window();
  r.build.threads = 1;
  std::string small = dir.File("small.gpucap");
  auto trimmed = Trim(**source, r, small, nullptr);
  ASSERT_TRUE(trimmed.ok()) << trimmed.status().message();
  EXPECT_EQ(trimmed->result.records, x.expect_kept.size());

  builder::BuildOptions o;
  o.window = x.Window();
  o.threads = 1;
  auto whole = gpucap::testing::BuildTraces(x.s.Path(), o);
  o.window = trimmed->window;
  o.select = trimmed->select;
  auto cut = gpucap::testing::BuildTraces(small, o);
  ASSERT_EQ(whole.size(), 1u);
  ASSERT_EQ(cut.size(), 1u);
  auto events = [](const gpucap::testing::Trace& t) {
    std::multiset<std::string> out;
    for (const gpucap::testing::Json* e : t.events) {
      const gpucap::testing::Json& j = *e;
      if (j["ph"].text == "M") continue;
      std::string args;
      for (const auto& [k, v] : j["args"].members) args += k + "=" + v.text + ";";
      out.insert(j["ph"].text + "|" + j["cat"].text + "|" + j["name"].text + "|" + j["ts"].text + "|" + j["dur"].text + "|" + args);
    }
    return out;
  };
  EXPECT_EQ(events(whole[0]), events(cut[0]));
  // What the window must show, written from the records above.
  const auto& t = cut[0];
  auto kernels = t.Events("X", "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ((*kernels[0])["args"]["External id"].u(), 777u);
  ASSERT_EQ(t.Events("X", "cuda_sync").size(), 1u);
  EXPECT_EQ(t.Named("marker").size(), 1u) << "the marker range 9..10";
}

// A sync names only its context; the build finds the context's device from
// the first kernel or copy on it. A kept sync keeps that op too, even when
// the op itself lies outside the window, or the trimmed build would put the
// sync on another device.
TEST(TrimSynthetic, ASyncKeepsTheOpThatNamesItsContextsDevice) {
  Scene s;
  Scene::Ok(s.c().String(0x1000, "_Z1kv"));
  bt::KernelRecord k;
  k.start = kT0 + 200, k.end = kT0 + 300, k.correlation = 1, k.context = 3, k.device = 0, k.name_pointer = 0x1000;
  s.c().Kernel(k);  // 0: the first op on context 3, before the window
  bt::SyncRecord y;
  y.type = 4;  // context sync
  y.context = 3;
  y.start = kT0 + 14000, y.end = kT0 + 15000, y.correlation = 2;
  s.c().Sync(y);  // 1: in the window
  bt::ApiRecord a;
  a.start = kT0 + 30000, a.end = kT0 + 30500, a.correlation = 3;
  s.c().Api(a);  // 2: after it
  auto index = OpenCapture(s.Path());
  ASSERT_TRUE(index.ok()) << index.status().message();
  builder::BuildOptions o;
  o.window = "range:" + std::to_string(kT0 + 10000) + ":" + std::to_string(kT0 + 20000);
  o.threads = 1;
  auto plan = PlanTrim(**index, o, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const std::vector<uint8_t>& flags = plan->records.begin()->second;
  ASSERT_EQ(flags.size(), 3u);
  EXPECT_TRUE(flags[0]) << "the op naming the sync's device";
  EXPECT_TRUE(flags[1]);
  EXPECT_FALSE(flags[2]);
}

// A time window holds a kernel by its start; launched before the window,
// inside a range that closed before it too, the kernel still carries that
// range in its annotation stack. The trimmed capture keeps the range, or
// the kernel would come back without it (the launch call's own stack is
// reported only for calls in the window).
TEST(TrimSynthetic, AKernelLaunchedBeforeTheWindowKeepsTheRangesOpenAtItsLaunch) {
  Scene s;
  Scene::Ok(s.c().String(0x1000, "_Z1kv"));
  Scene::Ok(s.c().Push(4242, kT0 + 100, "step"));
  s.Launch(1, 4242, kT0 + 200, kT0 + 11000, kT0 + 12000);  // launched at 200, runs in the window
  Scene::Ok(s.c().Pop(4242, kT0 + 500));
  s.Launch(2, 4242, kT0 + 30000, kT0 + 31000, kT0 + 32000);  // after the window
  const std::string path = s.Path();
  const std::string window = "range:" + std::to_string(kT0 + 10000) + ":" + std::to_string(kT0 + 20000);

  gpucap::testing::TempDir dir;
  auto source = OpenCapture(path);
  ASSERT_TRUE(source.ok());
  FixtureRequest r;
  r.source = path;
  r.build.window = window;
  r.build.threads = 1;
  std::string small = dir.File("small.gpucap");
  auto trimmed = Trim(**source, r, small, nullptr);
  ASSERT_TRUE(trimmed.ok()) << trimmed.status().message();

  builder::BuildOptions o;
  o.window = window;
  o.threads = 1;
  auto whole = gpucap::testing::BuildTraces(path, o);
  o.window = trimmed->window;
  o.select = trimmed->select;
  auto cut = gpucap::testing::BuildTraces(small, o);
  ASSERT_EQ(whole.size(), 1u);
  ASSERT_EQ(cut.size(), 1u);
  for (const auto* t : {&whole[0], &cut[0]}) {
    auto kernels = t->Events("X", "kernel");
    ASSERT_EQ(kernels.size(), 1u) << (t == &whole[0] ? "whole" : "trimmed");
    EXPECT_EQ((*kernels[0])["args"]["correlation"].u(), 1u);
    const gpucap::testing::Json& stack = (*kernels[0])["args"]["annotation stack"];
    std::string names;
    for (const gpucap::testing::Json& n : stack.items) names += n.text + "/";
    if (stack.is(gpucap::testing::Json::Type::kString)) names = stack.text + "/";
    EXPECT_EQ(names, "step/") << (t == &whole[0] ? "whole" : "trimmed") << ": the range open at the launch";
  }
}

}  // namespace
}  // namespace gpucap::tools
