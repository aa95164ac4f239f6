// Regression fixtures made by `gpucap fixture` (fixtures/regress/): each
// manifest's goldens are rebuilt from its trimmed capture and must come out
// byte for byte as committed. To refresh one after a change that is meant
// to change the traces, run the command in fixtures/regress/README.md (or,
// for a renderer change that leaves the trimmed captures as they are,
// GPUCAP_UPDATE_GOLDENS=1 tools_test --gtest_filter='Fixtures/Regression.*')
// and read the diff before committing it.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "../support/temp_dir.h"
#include "gpucap/tools/trim/fixture.h"
#include "tool_test_util.h"

namespace gpucap::tools {
namespace {

namespace fs = std::filesystem;

const std::string kRegress = std::string(GPUCAP_SOURCE_DIR) + "/fixtures/regress";

// Rebuilds the fixture of `manifest` and compares every golden with the
// committed one.
void CheckFixture(const std::string& manifest) {
  auto m = ReadFixtureManifest(manifest);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_FALSE(m->goldens.empty());
  std::string dir = fs::path(manifest).parent_path().string();
  testing::TempDir out;
  auto built = WriteFixtureGoldens(dir, *m, out.path().string());
  ASSERT_TRUE(built.ok()) << built.status().message();
  EXPECT_EQ(*built, m->goldens) << "the build makes other files than the manifest lists";
  // GPUCAP_UPDATE_GOLDENS=1 rewrites the goldens from the committed trimmed
  // capture and manifest (a renderer change), for reading the diff.
  if (std::getenv("GPUCAP_UPDATE_GOLDENS") != nullptr) {
    for (const std::string& g : m->goldens) fs::copy_file(out.File(g), fs::path(dir) / g, fs::copy_options::overwrite_existing);
    return;
  }
  for (const std::string& g : m->goldens) {
    std::string want = testing::ReadFile((fs::path(dir) / g).string());
    std::string got = testing::ReadFile(out.File(g));
    ASSERT_FALSE(want.empty()) << g << " missing from " << dir;
    if (want == got) continue;
    size_t at = 0;
    while (at < want.size() && at < got.size() && want[at] == got[at]) ++at;
    size_t line = std::count(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
    size_t from = want.rfind('\n', at) == std::string::npos ? 0 : want.rfind('\n', at) + 1;
    ADD_FAILURE() << g << " differs from the build at line " << line << ":\n  golden: " << want.substr(from, 300)
                  << "\n  built:  " << got.substr(from, 300);
  }
}

std::vector<std::string> Manifests() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kRegress, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() > 13 && name.substr(name.size() - 13) == ".fixture.json") out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

class Regression : public ::testing::TestWithParam<std::string> {};

TEST_P(Regression, RebuildsTheCommittedGoldens) { CheckFixture(kRegress + "/" + GetParam()); }

INSTANTIATE_TEST_SUITE_P(Fixtures, Regression, ::testing::ValuesIn(Manifests()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param.substr(0, p.param.size() - 13);
                           std::replace_if(n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
                           return n;
                         });

TEST(Regression, FixturesAreCommitted) { EXPECT_GE(Manifests().size(), 3u) << kRegress; }

// The mechanism on a fresh fixture: it matches its own build, and a changed
// golden is caught and located.
TEST(Regression, AFreshFixtureMatchesAndAChangeIsCaught) {
  testing::TempDir dir;
  testing::CliRun r = testing::Gpucap("fixture " + testing::Fixture("allreduce-0") + " -o " + dir.path().string() +
                                      " -w 'nvtx:ProfilerStep#\\d+' -s 1 --name step -q");
  ASSERT_EQ(r.code, 0) << r.output;
  CheckFixture(dir.File("step.fixture.json"));
  std::string golden = dir.File("step.0-ProfilerStep#1.json");
  std::string text = testing::ReadFile(golden);
  size_t at = text.find("ncclDevKernel");
  ASSERT_NE(at, std::string::npos);
  text[at] = 'N';
  testing::WriteFile(golden, text);
  EXPECT_NONFATAL_FAILURE(CheckFixture(dir.File("step.fixture.json")), "differs from the build at line");
}

}  // namespace
}  // namespace gpucap::tools
