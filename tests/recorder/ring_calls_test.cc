// The flight recorder's blocked-call trigger end to end (call_probe), in a
// process of its own: the real libgpucap_recorder.so, libgpucap_gate.so
// preloaded, a stand-in runtime whose synchronize stays until released.
// One call that stays past the bound writes one dump naming the thread;
// the many short calls before and after it write none.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <string>

#include "gpucap/format/capture.h"
#include "../support/temp_dir.h"
#include "recorder_child.h"

namespace gpucap::recorder {
namespace {

TEST(RingCalls, ACallThatStaysPastTheBoundWritesOneDumpNamingItsThread) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the gate's stubs are x86-64 only";
#endif
  testing::TempDir dir;
  std::string output = dir.File("job.gpucap");
  testing_child::ChildSetup setup;
  setup.output = output;
  std::string preload = std::string(GPUCAP_ASAN_RUNTIME) + (*GPUCAP_ASAN_RUNTIME ? ":" : "") + GPUCAP_GATE_LIB;
  setup.env = {{"GPUCAP_RING_MB", "8"}, {"GPUCAP_RING_HANG_CALL_S", "1"}, {"LD_PRELOAD", preload}};
  setup.unset = {"GPUCAP_RING_HANG_S", "GPUCAP_RING_SLOW_STEP"};
  int status = testing_child::RunUnderRecorder(GPUCAP_CALL_PROBE, setup);
  ASSERT_TRUE(WIFEXITED(status)) << "the probe died, status " << status;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the probe failed (6: a call outside the gate, 7: no dump)";

  std::string dump = dir.File("job.ring-1.gpucap");
  auto c = format::LoadCapture(dump);
  ASSERT_TRUE(c.ok()) << dump << ": " << c.status().ToString();
  EXPECT_TRUE(c->report.clean());
  ASSERT_TRUE(c->trailer.has_value());
  const std::string& trigger = c->trailer->trigger;
  EXPECT_EQ(trigger.rfind("hang: a CUDA call in flight for ", 0), 0u) << trigger;
  EXPECT_NE(trigger.find(" on thread "), std::string::npos) << trigger;
  EXPECT_TRUE(trigger.ends_with(" (call_probe)")) << "the main thread, by name: " << trigger;
  EXPECT_FALSE(std::filesystem::exists(dir.File("job.ring-2.gpucap")))
      << "one dump: 1.5 s of short calls back to back before the long one, and after it, write none";
}

}  // namespace
}  // namespace gpucap::recorder
