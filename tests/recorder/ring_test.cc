// The flight recorder in a process of its own, through the real
// libgpucap_recorder.so and libgpucap_api.a, without a GPU: gpucap_dump(),
// SIGUSR1 and the exit each write a dump, numbered, none over another, each
// naming its trigger; a dump asked for just before exit is not lost.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "gpucap/format/capture.h"
#include "../support/temp_dir.h"

namespace gpucap::recorder {
namespace {

TEST(Ring, ApiSignalAndExitEachWriteADumpWithItsTrigger) {
  testing::TempDir dir;
  std::string output = dir.File("job.gpucap");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (*GPUCAP_ASAN_RUNTIME) setenv("LD_PRELOAD", GPUCAP_ASAN_RUNTIME, 1);
    setenv("GPUCAP_OUTPUT", output.c_str(), 1);
    setenv("GPUCAP_QUIET", "1", 1);
    setenv("GPUCAP_RING_MB", "8", 1);
    setenv("GPUCAP_RING_DUMP_AT_EXIT", "1", 1);
    setenv("CUDA_INJECTION64_PATH", GPUCAP_RECORDER_LIB, 1);
    setenv("LD_LIBRARY_PATH", GPUCAP_DRIVER_STUB_DIR, 1);
    signal(SIGUSR1, SIG_DFL);
    execl(GPUCAP_RING_PROBE, GPUCAP_RING_PROBE, GPUCAP_RECORDER_LIB, nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
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
