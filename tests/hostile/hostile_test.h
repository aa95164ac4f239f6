// Shared by the hostile-input tests: a case written to a temp dir and gpucap
// run on it under the memory budget (10x the capture plus 256 MB).
#ifndef GPUCAP_TESTS_HOSTILE_HOSTILE_TEST_H_
#define GPUCAP_TESTS_HOSTILE_HOSTILE_TEST_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "limited_run.h"
#include "temp_dir.h"

namespace gpucap::testing::hostile {

inline uint64_t Budget(uint64_t capture_bytes) { return 10 * capture_bytes + (256ull << 20); }

// gpucap ARGS ({} in an argument is the capture's path) on `bytes`, with
// the address space capped well above the budget (so a runaway ends as a
// failed allocation, not a dead machine) and peak RSS checked against it.
inline LimitedRun RunOn(const TempDir& dir, const std::string& bytes, std::vector<std::string> args,
                        int seconds = 60) {
  std::string path = dir.File("hostile.gpucap");
  WriteFile(path, bytes);
  for (std::string& a : args) {
    if (a == "{}") a = path;
  }
  Limits limits;
  limits.memory_bytes = Budget(bytes.size()) + (1ull << 30);
  limits.seconds = seconds;
  LimitedRun r = RunGpucapLimited(args, limits);
  EXPECT_TRUE(r.exited()) << r.Describe();
  // Under sanitizers the RSS is theirs (shadow memory, quarantine).
  if (kCanLimitAddressSpace) EXPECT_LE(r.peak_rss_bytes, Budget(bytes.size())) << r.Describe();
  return r;
}

// Offsets of the frames of a capture, walking lengths from the file header.
std::vector<uint64_t> FrameOffsets(const std::string& bytes);

}  // namespace gpucap::testing::hostile

#endif  // GPUCAP_TESTS_HOSTILE_HOSTILE_TEST_H_
