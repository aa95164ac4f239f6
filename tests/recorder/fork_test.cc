// A recorded process that forks: the child's NVTX events, gpucap API calls
// and exit never reach the parent's recorder or capture. Runs the real
// libgpucap_recorder.so as an NVTX tool, without a GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gpucap/format/capture.h"
#include "../support/temp_dir.h"

namespace gpucap::recorder {
namespace {

// Not under the sanitizers: the probe forks while the recorder's threads run,
// and ASan's runtime can deadlock in the child (seen: the probe's child hung
// in CI's ASan round). The plain suite runs it on every CI run.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST(Fork, TheChildReachesNeitherTheParentsRecorderNorItsCapture) {
  testing::TempDir dir;
  std::string capture = dir.File("fork.gpucap");
  pid_t probe = fork();
  ASSERT_GE(probe, 0);
  if (probe == 0) {
    if (*GPUCAP_ASAN_RUNTIME) setenv("LD_PRELOAD", GPUCAP_ASAN_RUNTIME, 1);
    setenv("NVTX_INJECTION64_PATH", GPUCAP_RECORDER_LIB, 1);
    setenv("GPUCAP_OUTPUT", capture.c_str(), 1);
    setenv("GPUCAP_QUIET", "1", 1);
    setenv("LD_LIBRARY_PATH", GPUCAP_DRIVER_STUB_DIR, 1);
    execl(GPUCAP_FORK_PROBE, GPUCAP_FORK_PROBE, nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(probe, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the probe died of signal " << WTERMSIG(status);
  ASSERT_EQ(WEXITSTATUS(status), 0) << "fork_probe's exit status says where (fork_probe.cc)";
  auto c = format::LoadCapture(capture);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->trailer.has_value());
  EXPECT_TRUE(c->trailer->clean_shutdown);
  EXPECT_EQ(c->trailer->stop_reason, "exit");
  ASSERT_TRUE(c->session.has_value());
  EXPECT_EQ(c->session->pid, static_cast<uint32_t>(probe));
  std::vector<std::string> names;
  for (const format::RangeEvent& r : c->ranges) {
    EXPECT_EQ(r.name.find("child"), std::string::npos) << "the child's '" << r.name << "' reached the capture";
    if (!r.name.empty()) names.push_back(r.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"parent before fork", "parent after fork"}));
}

#endif

}  // namespace
}  // namespace gpucap::recorder
