// The flight recorder in a process of its own, through the real
// libgpucap_recorder.so and libgpucap_api.a, without a GPU: gpucap_dump(),
// SIGUSR1 and the exit each write a dump, numbered, none over another, each
// naming its trigger; a dump asked for just before exit is not lost.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "gpucap/format/capture.h"
#include "../support/temp_dir.h"
#include "recorder_child.h"

namespace gpucap::recorder {
namespace {

TEST(Ring, ApiSignalAndExitEachWriteADumpWithItsTrigger) {
  testing::TempDir dir;
  std::string output = dir.File("job.gpucap");
  testing_child::ChildSetup setup;
  setup.output = output;
  setup.env = {{"GPUCAP_RING_MB", "8"}, {"GPUCAP_RING_DUMP_AT_EXIT", "1"}};
  setup.before_exec = [] { signal(SIGUSR1, SIG_DFL); };
  int status = testing_child::RunUnderRecorder(GPUCAP_RING_PROBE, setup);
  ASSERT_TRUE(WIFEXITED(status)) << "the probe died (SIGUSR1 not taken?), status " << status;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the probe failed";
  EXPECT_FALSE(std::filesystem::exists(output)) << "a ring writes no capture file of its own";
  std::set<std::string> triggers;
  for (int n = 1; n <= 3; ++n) {
    std::string dump = dir.File("job.ring-" + std::to_string(n) + ".gpucap");
    auto c = format::LoadCapture(dump);
    ASSERT_TRUE(c.ok()) << dump << ": " << c.status().ToString();
    EXPECT_TRUE(c->report.clean());
    ASSERT_TRUE(c->trailer.has_value());
    ASSERT_TRUE(c->session.has_value());
    EXPECT_NE(c->session->command_line.at(0).find("ring_probe"), std::string::npos);
    ASSERT_EQ(c->ranges.size(), 2u) << dump;
    EXPECT_EQ(c->ranges[0].name, "before the dumps");
    triggers.insert(c->trailer->trigger);
  }
  EXPECT_EQ(triggers, (std::set<std::string>{"api: probe", "signal", "exit"}));
  EXPECT_FALSE(std::filesystem::exists(dir.File("job.ring-4.gpucap")));
}

}  // namespace
}  // namespace gpucap::recorder
