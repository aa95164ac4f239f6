// The flight recorder's step triggers in the recorder's pipeline with no
// GPU: ranges with made-up timestamps, long past (or a minute ahead, for a
// dump not yet due), stand in for the steps,
// so a slow step's dump is due at the control thread's next pass and a
// hang is one at once; each close the test makes is followed by the dumps
// it causes and nothing else, whatever the machine's speed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "gpucap/format/capture.h"
#include "recorder.h"
#include "../support/temp_dir.h"

namespace gpucap::recorder {
namespace {

constexpr uint64_t kMs = 1'000'000;

Config RingConfig(const std::string& path) {
  Config c;
  c.output = path;
  c.quiet = true;
  c.toggle_signal = false;
  c.buffer_bytes = 64 << 10;
  c.pool_buffers = 4;
  c.ring_bytes = 1 << 20;
  return c;
}

format::RangeEvent Range(format::RangeKind kind, uint64_t t_ms, const std::string& name = "") {
  format::RangeEvent e;
  e.kind = kind;
  e.source = format::RangeSource::kApi;
  e.timestamp_ns = t_ms * kMs;
  e.os_tid = 5;
  e.name = name;
  return e;
}

void Step(Recorder* r, const std::string& name, uint64_t start_ms, uint64_t end_ms) {
  r->AddRange(Range(format::RangeKind::kPush, start_ms, name));
  r->AddRange(Range(format::RangeKind::kPop, end_ms));
}

// Waits for what the control thread does on its own (a minute at most).
void WaitForDumps(Recorder* r, uint64_t n) {
  for (int i = 0; i < 6000 && r->dumps_written() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_GE(r->dumps_written(), n) << r->last_dump();
}

TEST(RingStepsPipeline, ASlowWindowStepIsDumpedWithItsRangeAndMarks) {
  testing::TempDir dir;
  Config config = RingConfig(dir.File("job.gpucap"));
  config.window_nvtx = "train#\\d+";
  config.ring_slow_step = 3;
  config.ring_slow_window = 3;
  config.ring_dump_interval_s = 0;
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  for (uint64_t i = 0; i < 4; ++i) Step(r, "train#" + std::to_string(i), 100 * i + 1, 100 * i + 11);  // 10 ms
  r->AddRange(Range(format::RangeKind::kPush, 450, "not a step"));
  r->AddRange(Range(format::RangeKind::kPop, 460));
  Step(r, "train#4", 500, 540);  // 40 ms: above 3 x 10 ms
  WaitForDumps(r, 1);
  r->Stop("test");
  EXPECT_EQ(r->dumps_written(), 1u);
  auto c = format::LoadCapture(dir.File("job.ring-1.gpucap"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->trailer.has_value());
  EXPECT_EQ(c->trailer->trigger, "slow step: train#4 took 40.0 ms, 4.0x the median 10.0 ms of the last 3 on thread 5");
  // The step itself, and the window marks --window-nvtx makes of the steps:
  // one open and one close each, the slow step's at its range's times.
  ASSERT_GE(c->ranges.size(), 2u);
  EXPECT_EQ(c->ranges[c->ranges.size() - 2].name, "train#4");
  EXPECT_EQ(c->ranges.back().timestamp_ns, 540 * kMs);
  std::map<uint64_t, int> marks;  // id -> opens - closes
  uint64_t step4 = 0;
  for (const auto& m : c->windows) {
    marks[m.id] += m.kind == format::WindowMarkKind::kOpen ? 1 : -1;
    if (m.label == "train#4") step4 = m.id;
  }
  EXPECT_EQ(marks.size(), 5u);
  for (const auto& [id, balance] : marks) EXPECT_EQ(balance, 0) << "window " << id;
  ASSERT_NE(step4, 0u);
  for (const auto& m : c->windows) {
    if (m.id != step4) continue;
    EXPECT_EQ(m.timestamp_ns, (m.kind == format::WindowMarkKind::kOpen ? 500 : 540) * kMs);
  }
  delete r;
}

TEST(RingStepsPipeline, AHangDumpsOnceAndTheNextStepRearmsIt) {
  testing::TempDir dir;
  Config config = RingConfig(dir.File("job.gpucap"));  // no --window-nvtx: ProfilerStep#N are the steps
  config.ring_hang_s = 1;
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  Step(r, "train#0", 1, 2);  // not a step under the default pattern
  Step(r, "ProfilerStep#0", 10, 20);
  WaitForDumps(r, 1);
  Step(r, "ProfilerStep#1", 30, 40);
  WaitForDumps(r, 2);
  r->Stop("test");
  EXPECT_EQ(r->dumps_written(), 2u) << "one dump per hang";
  for (int n : {1, 2}) {
    auto c = format::LoadCapture(dir.File("job.ring-" + std::to_string(n) + ".gpucap"));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ASSERT_TRUE(c->trailer.has_value());
    EXPECT_EQ(c->trailer->trigger,
              "hang: no step closed for 1 s (the last, ProfilerStep#" + std::to_string(n - 1) + ", on thread 5)");
  }
  delete r;
}

// A slow step whose dump is not due yet when the recording ends (its
// timestamps lie a minute ahead of the clock, so no pass finds it due) is
// dumped by the stop, not lost.
TEST(RingStepsPipeline, ASlowStepsDumpNotYetDueIsWrittenAtTheStop) {
  testing::TempDir dir;
  Config config = RingConfig(dir.File("job.gpucap"));
  config.ring_slow_step = 2;
  config.ring_slow_window = 1;
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  uint64_t ahead_ms = r->RangeNow() / kMs + 60'000;
  Step(r, "ProfilerStep#0", ahead_ms, ahead_ms + 10);
  Step(r, "ProfilerStep#1", ahead_ms + 20, ahead_ms + 50);  // 30 ms > 2 x 10 ms
  r->Stop("test");
  EXPECT_EQ(r->dumps_written(), 1u) << r->last_dump();
  auto c = format::LoadCapture(dir.File("job.ring-1.gpucap"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->trailer.has_value());
  EXPECT_EQ(c->trailer->trigger,
            "slow step: ProfilerStep#1 took 30.0 ms, 3.0x the median 10.0 ms of the last 1 on thread 5");
  delete r;
}

}  // namespace
}  // namespace gpucap::recorder
