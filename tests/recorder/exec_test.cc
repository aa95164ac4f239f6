// A recorded process that execs closes its capture first: the preloaded exec
// shim calls into the recorder, which flushes and writes the trailer. Runs the
// real libgpucap_recorder.so and libgpucap_exec.so, without a GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gpucap/format/capture.h"
#include "../support/temp_dir.h"

namespace gpucap::recorder {
namespace {

TEST(Exec, TheShimClosesTheCaptureBeforeTheProgramIsReplaced) {
  testing::TempDir dir;
  std::string capture = dir.File("exec.gpucap");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string preload = GPUCAP_EXEC_SHIM;
    if (*GPUCAP_ASAN_RUNTIME) preload = std::string(GPUCAP_ASAN_RUNTIME) + ":" + preload;
    setenv("LD_PRELOAD", preload.c_str(), 1);
    setenv("GPUCAP_OUTPUT", capture.c_str(), 1);
    setenv("GPUCAP_QUIET", "1", 1);
    setenv("LD_LIBRARY_PATH", GPUCAP_DRIVER_STUB_DIR, 1);
    execl(GPUCAP_EXEC_PROBE, GPUCAP_EXEC_PROBE, GPUCAP_RECORDER_LIB, nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the probe failed before exec, or /bin/true failed";
  auto c = format::LoadCapture(capture);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->trailer.has_value()) << "exec came before the capture was closed";
  EXPECT_TRUE(c->trailer->clean_shutdown);
  EXPECT_EQ(c->trailer->stop_reason, "exec");
  ASSERT_EQ(c->ranges.size(), 2u);
  EXPECT_EQ(c->ranges[0].name, "before exec");
  EXPECT_EQ(c->ranges[0].source, format::RangeSource::kApi);
  ASSERT_TRUE(c->session.has_value());
  EXPECT_NE(c->session->command_line.at(0).find("exec_probe"), std::string::npos);
}

}  // namespace
}  // namespace gpucap::recorder
