// A test that cannot run here (a fixture not in the tree, a tool or codec not
// installed) skips and says why; in CI (CI=true, as .ci/run sets it) the
// same test fails, because CI installs everything the suite needs and a skip
// there would pass without testing anything.
#ifndef GPUCAP_TESTS_SUPPORT_SKIP_H_
#define GPUCAP_TESTS_SUPPORT_SKIP_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace gpucap::testing {

inline bool SkipIsFailure() {
  const char* ci = std::getenv("CI");
  if (ci == nullptr) return false;
  std::string_view v(ci);
  return v == "true" || v == "1" || v == "yes";
}

}  // namespace gpucap::testing

// GPUCAP_SKIP(path << " is not in this tree");
#define GPUCAP_SKIP(why)                                                                      \
  do {                                                                                        \
    if (::gpucap::testing::SkipIsFailure()) {                                                 \
      GTEST_FAIL() << "CI=true, where a test that cannot run is a failure: " << why;          \
    } else {                                                                                  \
      GTEST_SKIP() << why;                                                                    \
    }                                                                                         \
  } while (0)

#endif  // GPUCAP_TESTS_SUPPORT_SKIP_H_
