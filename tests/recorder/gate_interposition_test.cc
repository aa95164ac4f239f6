// libgpucap_gate.so in a process of its own: every driver function the
// process obtains the way libcudart does (gate_probe.cc, against the fake
// driver of fake_driver.cc) comes back wrapped in the entry gate.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>

namespace {

// The probe's output and exit status, with `env` (NAME=value ...) set.
std::pair<int, std::string> RunProbe(const std::string& env) {
  // The probe, the fake driver and the gate are built without sanitizers
  // in every build (tests/recorder/CMakeLists.txt): no sanitizer runtime.
  std::string preload = GPUCAP_GATE_LIB;
  std::string cmd = env + " LD_PRELOAD='" + preload + "' LD_LIBRARY_PATH='" GPUCAP_FAKE_DRIVER_DIR
                    "' '" GPUCAP_GATE_PROBE "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  return {pclose(p), out};
}

TEST(GateInterposition, EveryDriverFunctionObtainedIsWrapped) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the stubs are x86-64 only";
#endif
  auto [status, out] = RunProbe("");
  EXPECT_EQ(status, 0) << out;
  // 21 checks of the lookups and calls, 10 of the export tables.
  EXPECT_NE(out.find("checked 31, failed 0"), std::string::npos) << out;
}

TEST(GateInterposition, TheHooksTableHandedOutAsItIsIsCounted) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the stubs are x86-64 only";
#endif
  auto [status, out] = RunProbe("GPUCAP_GATE_HOOKS=0");
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("checked 25, failed 0"), std::string::npos) << out;
}

}  // namespace
