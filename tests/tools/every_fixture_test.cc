// Every subcommand, as a user runs it, on every fixture, and the numbers
// they print held against each other: what info counts, stats and the traces
// show; a capture diffed with itself passes; a trimmed capture and a fixture
// made from it read back.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/temp_dir.h"
#include "tool_test_util.h"

namespace gpucap::testing {
namespace {

TEST(EveryFixture, EverySubcommandWorksOnIt) {
  for (const std::string& name : FixtureNames()) {
    SCOPED_TRACE(name);
    TempDir dir;
    std::string capture = Fixture(name);

    CliRun info = Gpucap("info " + capture + " --json");
    ASSERT_EQ(info.code, 0) << info.output;
    Json facts = ParseOrFail(info.output);
    uint64_t kernels = facts["records"]["by_kind"]["CONCURRENT_KERNEL"].u();

    std::string stats_path = dir.File("stats.json");
    CliRun stats = Gpucap("stats " + capture + " --format json -q -o " + stats_path);
    ASSERT_EQ(stats.code, 0) << stats.output;
    Json s = ParseOrFail(ReadFile(stats_path));
    uint64_t counted = 0;
    for (const Json& k : s["tables"]["kernels"].items) counted += k["count"].u();
    EXPECT_EQ(counted, kernels) << "stats counts every kernel info counts";

    for (const char* out : {"t.json.gz", "t.pftrace.gz"}) {
      CliRun build = Gpucap("build " + capture + " -q -o " + dir.File(out));
      ASSERT_EQ(build.code, 0) << build.output;
      EXPECT_GT(std::filesystem::file_size(dir.File(out)), 0u) << out;
    }
    auto trace = ReadTrace(dir.File("t.json.gz"));
    ASSERT_TRUE(trace);
    EXPECT_EQ(trace->Events("X", "kernel").size(), kernels) << "the whole-capture trace draws every kernel";

    CliRun diff = Gpucap("diff " + capture + " " + capture + " -q");
    EXPECT_EQ(diff.code, 0) << "a capture is within any threshold of itself\n" << diff.output;

    std::string small = dir.File("small.gpucap");
    CliRun trim = Gpucap("trim " + capture + " -q -o " + small + " -w all");
    ASSERT_EQ(trim.code, 0) << trim.output;
    CliRun small_info = Gpucap("info " + small + " --json");
    ASSERT_EQ(small_info.code, 0) << small_info.output;
    EXPECT_EQ(ParseOrFail(small_info.output)["records"]["by_kind"]["CONCURRENT_KERNEL"].u(), kernels);

    CliRun fixture = Gpucap("fixture " + capture + " -q -o " + dir.File("fx") + " -w all --name f");
    ASSERT_EQ(fixture.code, 0) << fixture.output;
    EXPECT_TRUE(std::filesystem::exists(dir.File("fx/f.fixture.json")));
  }
}

}  // namespace
}  // namespace gpucap::testing
