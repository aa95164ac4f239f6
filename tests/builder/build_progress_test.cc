// BuildTraces' progress: events counted as the renderers take them, over
// windows built on several workers, and an estimate of the total that ends
// at the truth.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "gpucap/builder/build_progress.h"
#include "scene.h"

namespace gpucap::testing {
namespace {

// 30 steps of 3,000 launches: windows of ~12k events each, past the
// counting sink's step of 65k events only in the `all` window.
void Workload(Scene& s) {
  Scene::Ok(s.c().String(0x1000, "_Z6kernelv"));
  uint32_t correlation = 1;
  for (int step = 0; step < 30; ++step) {
    uint64_t t0 = kT0 + 10'000 + step * 10'000'000ull;
    for (int k = 0; k < 3000; ++k) {
      uint64_t t = t0 + 100 + k * 3'000;
      s.Launch(correlation++, 100, t, t + 50'000, t + 51'000);
      if (s.c().pending_records() >= 4000) Scene::Ok(s.c().EndChunk());
    }
  }
}

std::vector<builder::BuildProgress> Build(Scene& s, const std::string& window, int threads, uint64_t* events) {
  builder::BuildOptions o;
  o.window = window;
  o.threads = threads;
  o.output_options.threads = threads;
  o.output = s.File(window == "all" ? "all.json.gz" : "t.json.gz");
  std::vector<builder::BuildProgress> seen;
  std::mutex mu;
  bool overlapped = false;
  auto index = builder::CaptureIndex::Open(s.Path());
  EXPECT_TRUE(index.ok());
  auto report = builder::BuildTraces(**index, o, [&](const builder::BuildProgress& p) {
    std::unique_lock<std::mutex> lock(mu, std::try_to_lock);
    if (!lock.owns_lock()) overlapped = true;
    seen.push_back(p);
  });
  EXPECT_TRUE(report.ok()) << report.status().message();
  EXPECT_FALSE(overlapped) << "progress called from two threads at once";
  *events = 0;
  if (report.ok()) {
    for (const auto& w : report->windows) *events += w.join.slices + 2 * w.join.flows + w.join.counters;
  }
  return seen;
}

TEST(BuildProgress, CountsEveryEventOverWorkersAndEndsAtTheTotal) {
  Scene s;
  Workload(s);
  for (int threads : {1, 3}) {
    uint64_t events = 0;
    std::vector<builder::BuildProgress> seen = Build(s, "every:10ms", threads, &events);
    ASSERT_GE(seen.size(), 30u);  // at least once per window
    EXPECT_GT(events, 30u * 3000 * 3);
    const builder::BuildProgress& last = seen.back();
    EXPECT_EQ(last.windows, seen.front().windows);
    EXPECT_EQ(last.windows_done, last.windows);
    EXPECT_EQ(last.events, events);
    EXPECT_EQ(last.events_expected, events);  // nothing left to estimate
    for (size_t i = 1; i < seen.size(); ++i) {
      EXPECT_GE(seen[i].events, seen[i - 1].events);
      EXPECT_GE(seen[i].windows_done, seen[i - 1].windows_done);
      EXPECT_GE(seen[i].events_expected, seen[i].events);
    }
    // The first estimate (2 events per record, before any window is done)
    // is within a factor of two of the truth.
    EXPECT_GT(seen.front().events_expected * 2, events);
    EXPECT_LT(seen.front().events_expected, events * 2);
  }
}

// One window: the line moves while it is built, not only at its end.
TEST(BuildProgress, OneLargeWindowReportsAsItGoes) {
  Scene s;
  Workload(s);
  uint64_t events = 0;
  std::vector<builder::BuildProgress> seen = Build(s, "all", 2, &events);
  ASSERT_GE(seen.size(), 3u);
  EXPECT_EQ(seen.front().windows, 1u);
  EXPECT_EQ(seen.front().windows_done, 0u);
  EXPECT_GT(seen.front().events, 0u);
  EXPECT_LT(seen.front().events, events);
  EXPECT_EQ(seen.back().events, events);
}

}  // namespace
}  // namespace gpucap::testing
