// Golden traces: a capture, a window spec, and the traces they must build,
// checked in. Adding a fixture is one line in kGoldens; the goldens are made
// once with GPUCAP_UPDATE_GOLDENS=1, read through by hand, and committed.
//
//   GPUCAP_UPDATE_GOLDENS=1 ./build/tests/builder/builder_test --gtest_filter='Golden*'
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <cstdlib>
#include <filesystem>

#include "../support/skip.h"
#include "../support/temp_dir.h"
#include "scene.h"
#include "trace_util.h"

namespace gpucap::testing {
namespace {

struct Golden {
  const char* capture;  // relative to the source tree
  const char* window;
  const char* golden;   // prefix: <golden>.<window index>.json
};

// Real captures recorded on the H200 (fixtures/, from tests/gpu/).
const std::vector<Golden> kGoldens = {
    {"fixtures/basics.gpucap", "all", "fixtures/golden/basics"},
    {"fixtures/graphs_nvtx.gpucap", "all", "fixtures/golden/graphs_nvtx"},
    {"fixtures/torch_train.gpucap", "nvtx:ProfilerStep#\\d+", "fixtures/golden/torch_train.steps"},
};

// The trace text with what depends on where the build ran taken out.
std::string Normalized(std::string text, const std::string& capture_path, const std::string& shown_as) {
  for (size_t at; (at = text.find(capture_path)) != std::string::npos;) text.replace(at, capture_path.size(), shown_as);
  return text;
}

// Builds `capture` with `window` and compares each window's trace with
// <golden>.<index>.json, or writes them when `update`.
void CheckGoldens(const std::string& capture, const std::string& shown_as, const std::string& window,
                  const std::string& golden, bool update) {
  builder::BuildOptions o;
  o.window = window;
  o.join.trace_name = std::filesystem::path(golden).filename().string();
  std::vector<Trace> traces = BuildTraces(capture, o);
  ASSERT_FALSE(traces.empty());
  for (size_t i = 0; i < traces.size(); ++i) {
    ExpectImporterRules(traces[i]);
    std::string text = Normalized(traces[i].text, capture, shown_as);
    std::string path = golden + "." + std::to_string(i) + ".json";
    if (update) {
      std::filesystem::create_directories(std::filesystem::path(path).parent_path());
      WriteFile(path, text);
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(path)) << path << " missing: make it with GPUCAP_UPDATE_GOLDENS=1";
    std::string want = ReadFile(path);
    if (text != want) {
      size_t at = 0;
      while (at < text.size() && at < want.size() && text[at] == want[at]) ++at;
      size_t line = std::count(want.begin(), want.begin() + at, '\n') + 1;
      ADD_FAILURE() << path << " differs from the build at line " << line << ":\n  golden: "
                    << want.substr(want.rfind('\n', at) + 1, 300) << "\n  built:  "
                    << text.substr(text.rfind('\n', at) + 1, 300);
    }
  }
  EXPECT_FALSE(std::filesystem::exists(golden + "." + std::to_string(traces.size()) + ".json"))
      << "the golden has more windows than the build";
}

bool Updating() { return std::getenv("GPUCAP_UPDATE_GOLDENS") != nullptr; }

class GoldenFixtures : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenFixtures, BuildsWhatWasReadThroughByHand) {
  const Golden& g = GetParam();
  std::string root = GPUCAP_SOURCE_DIR;
  std::string capture = root + "/" + g.capture;
  if (!std::filesystem::exists(capture)) GPUCAP_SKIP(g.capture << " is not in this tree");
  CheckGoldens(capture, g.capture, g.window, root + "/" + g.golden, Updating());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenFixtures, ::testing::ValuesIn(kGoldens));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenFixtures);

// The mechanism itself, on a synthetic capture: a golden made from a build
// matches the next build, and a changed trace is caught and located.
TEST(Golden, MatchesItsOwnBuildAndCatchesAChange) {
  Scene s;
  Scene::Ok(s.c().Push(1, kT0 + 10, "ProfilerStep#0"));
  s.Launch(1, 1, kT0 + 100, kT0 + 5000, kT0 + 6000);
  Scene::Ok(s.c().Pop(1, kT0 + 9000));
  std::string capture = s.Path();
  std::string golden = s.File("golden/scene");
  CheckGoldens(capture, "scene.gpucap", R"(nvtx:ProfilerStep#\d+)", golden, /*update=*/true);
  CheckGoldens(capture, "scene.gpucap", R"(nvtx:ProfilerStep#\d+)", golden, /*update=*/false);
  std::string text = ReadFile(golden + ".0.json");
  ASSERT_NE(text.find("cudaLaunchKernel"), std::string::npos);
  text.replace(text.find("cudaLaunchKernel"), 16, "cudaLaunchKernXl");
  WriteFile(golden + ".0.json", text);
  EXPECT_NONFATAL_FAILURE(
      CheckGoldens(capture, "scene.gpucap", R"(nvtx:ProfilerStep#\d+)", golden, false), "differs from the build");
}

}  // namespace
}  // namespace gpucap::testing
