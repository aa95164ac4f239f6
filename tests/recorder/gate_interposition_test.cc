// libgpucap_gate.so in a process of its own: every driver function the
// process obtains the way libcudart does (gate_probe.cc, against the fake
// driver of fake_driver.cc) comes back wrapped in the entry gate.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>

namespace {

// The probe's output and exit status, with `env` (NAME=value ...) set.
std::pair<int, std::string> RunProbe(const std::string& env, const char* probe = GPUCAP_GATE_PROBE) {
  // The probe, the fake driver and the gate are built without sanitizers
  // in every build (tests/recorder/CMakeLists.txt): no sanitizer runtime.
  std::string preload = GPUCAP_GATE_LIB;
  std::string cmd = env + " LD_PRELOAD='" + preload + "' LD_LIBRARY_PATH='" GPUCAP_FAKE_DRIVER_DIR "' '" +
                    std::string(probe) + "' 2>&1";
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
  // 21 checks of the lookups and calls, 5 of the runtime's stubs, 10 of the
  // export tables.
  EXPECT_NE(out.find("checked 36, failed 0"), std::string::npos) << out;
}

TEST(GateInterposition, TheHooksTableHandedOutAsItIsIsCounted) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the stubs are x86-64 only";
#endif
  auto [status, out] = RunProbe("GPUCAP_GATE_HOOKS=0");
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("checked 30, failed 0"), std::string::npos) << out;
}

TEST(GateInterposition, AProgramLinkedToTheRuntimeCallsItThroughTheGate) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the stubs are x86-64 only";
#endif
  auto [status, out] = RunProbe("", GPUCAP_RUNTIME_LINK_PROBE);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("runtime call 0, depth inside 1"), std::string::npos) << out;
  // Without the gate the same call runs outside any.
  FILE* p = popen("LD_LIBRARY_PATH='" GPUCAP_FAKE_DRIVER_DIR "' '" GPUCAP_RUNTIME_LINK_PROBE "' 2>&1", "r");
  ASSERT_NE(p, nullptr);
  std::string plain;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) plain += buf;
  pclose(p);
  EXPECT_NE(plain.find("depth inside -1"), std::string::npos) << plain;
}

}  // namespace
