// libgpucap_gate.so in a process of its own: every driver function the
// process obtains the way libcudart does (gate_probe.cc, against the fake
// driver of fake_driver.cc) comes back wrapped in the entry gate.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace {

TEST(GateInterposition, EveryDriverFunctionObtainedIsWrapped) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the stubs are x86-64 only";
#endif
  // The probe, the fake driver and the gate are built without sanitizers
  // in every build (tests/recorder/CMakeLists.txt): no sanitizer runtime.
  std::string preload = GPUCAP_GATE_LIB;
  std::string cmd = "LD_PRELOAD='" + preload + "' LD_LIBRARY_PATH='" GPUCAP_FAKE_DRIVER_DIR "' '" GPUCAP_GATE_PROBE
                    "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  int status = pclose(p);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("checked 21, failed 0"), std::string::npos) << out;
}

}  // namespace
