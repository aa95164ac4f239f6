// The flight recorder's step triggers end to end, in a process of its own
// through the real libgpucap_recorder.so (step_probe): a slow step's dump
// and two hangs' dumps, each naming its trigger, the slow step's dump
// holding the step itself, open and closed. The probe waits for each dump
// by its content, so the test does not depend on how fast the machine is;
// a machine stalled long enough may add dumps of its own (a hang, a slow
// step), which are let be.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gpucap/format/capture.h"
#include "../support/temp_dir.h"
#include "recorder_child.h"

namespace gpucap::recorder {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(RingSteps, SlowStepAndHangsEachWriteADumpWithItsTrigger) {
  testing::TempDir dir;
  std::string output = dir.File("job.gpucap");
  testing_child::ChildSetup setup;
  setup.output = output;
  setup.env = {{"GPUCAP_RING_MB", "8"},          {"GPUCAP_RING_HANG_S", "1"},
               {"GPUCAP_RING_SLOW_STEP", "5"},   {"GPUCAP_RING_SLOW_WINDOW", "5"},
               {"GPUCAP_RING_DUMP_INTERVAL_S", "0"}};
  setup.unset = {"GPUCAP_WINDOW_NVTX"};  // the default step pattern
  int status = testing_child::RunUnderRecorder(GPUCAP_STEP_PROBE, setup);
  ASSERT_TRUE(WIFEXITED(status)) << "the probe died, status " << status;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the probe failed (6: no slow-step dump, 7, 8: no hang dump)";

  std::vector<std::string> hangs;
  int slow_dumps = 0;
  for (int n = 1; std::filesystem::exists(dir.File("job.ring-" + std::to_string(n) + ".gpucap")); ++n) {
    std::string dump = dir.File("job.ring-" + std::to_string(n) + ".gpucap");
    auto c = format::LoadCapture(dump);
    ASSERT_TRUE(c.ok()) << dump << ": " << c.status().ToString();
    EXPECT_TRUE(c->report.clean()) << dump;
    ASSERT_TRUE(c->trailer.has_value()) << dump;
    const std::string& trigger = c->trailer->trigger;
    if (StartsWith(trigger, "hang: no step closed for 1 s (the last, ")) hangs.push_back(trigger);
    if (!StartsWith(trigger, "slow step: ProfilerStep#10 took ")) continue;
    ++slow_dumps;
    EXPECT_NE(trigger.find(" the median "), std::string::npos) << trigger;
    EXPECT_NE(trigger.find(" of the last 5 on thread "), std::string::npos) << trigger;
    // The slow step is in its dump, opened and closed, 300 ms or more apart.
    uint64_t opened = 0, closed = 0;
    for (size_t i = 0; i < c->ranges.size(); ++i) {
      if (c->ranges[i].name != "ProfilerStep#10") continue;
      ASSERT_EQ(c->ranges[i].kind, format::RangeKind::kPush);
      opened = c->ranges[i].timestamp_ns;
      ASSERT_LT(i + 1, c->ranges.size());
      EXPECT_EQ(c->ranges[i + 1].kind, format::RangeKind::kPop);
      closed = c->ranges[i + 1].timestamp_ns;
    }
    ASSERT_NE(opened, 0u) << dump << " lacks ProfilerStep#10";
    EXPECT_GE(closed - opened, 300'000'000u);
  }
  EXPECT_EQ(slow_dumps, 1);
  auto names = [&](const std::string& step) {
    int n = 0;
    for (const std::string& h : hangs) n += h.find("(the last, " + step + ", on thread ") != std::string::npos;
    return n;
  };
  EXPECT_GE(names("ProfilerStep#13"), 1);
  EXPECT_GE(names("ProfilerStep#14"), 1);
}

}  // namespace
}  // namespace gpucap::recorder
