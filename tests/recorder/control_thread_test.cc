// The control thread's wake-ups: each reason to run a pass ends the wait.
#include "control_thread.h"

#include <gtest/gtest.h>

#include <chrono>

namespace gpucap::recorder {
namespace {

// Wait sleeps up to 50 ms unless a wake-up came. Twenty waits after a Wake
// each take a full timeout (a second) when the wake is lost; the bound is
// half that, far above what twenty wake-ups take on a loaded machine.
TEST(ControlThread, WakeEndsTheWait) {
  ControlThread control;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) {
    control.Wake();
    ASSERT_TRUE(control.Wait());
  }
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(took, std::chrono::milliseconds(500)) << "a Wake before Wait was lost";
}

TEST(ControlThread, AWaitWithNothingAskedSleepsItsTimeout) {
  ControlThread control;
  control.Wake();
  ASSERT_TRUE(control.Wait());
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(control.Wait());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(45)) << "a wake-up counts once";
}

}  // namespace
}  // namespace gpucap::recorder
