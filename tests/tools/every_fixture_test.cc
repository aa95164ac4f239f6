// Every subcommand, as a user runs it, on every fixture, and the numbers
// they print held against each other: what info counts, stats and the traces
// show; a capture diffed with itself passes; a trimmed capture and a fixture
// made from it read back.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>

#include "../support/temp_dir.h"
#include "tool_test_util.h"

namespace gpucap::testing {
namespace {

std::string Gunzipped(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  if (f == nullptr) return out;
  char buf[65536];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

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
    }
    // The pftrace: gzip of a Trace (field 1, packets, first) whose interned
    // names include every kernel's name.
    std::string pf = Gunzipped(dir.File("t.pftrace.gz"));
    ASSERT_FALSE(pf.empty());
    EXPECT_EQ(pf[0], '\x0a');
    auto trace = ReadTrace(dir.File("t.json.gz"));
    ASSERT_TRUE(trace);
    EXPECT_EQ(trace->Events("X", "kernel").size(), kernels) << "the whole-capture trace draws every kernel";
    for (const Json* k : trace->Events("X", "kernel")) {
      if (pf.find((*k)["name"].text) == std::string::npos) {
        ADD_FAILURE() << (*k)["name"].text << " is not in the pftrace";
        break;
      }
    }

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
    // The manifest lists the goldens it wrote; the Chrome golden of the whole
    // capture draws every kernel, and the fixture's capture holds them all.
    Json manifest = ParseOrFail(ReadFile(dir.File("fx/f.fixture.json")));
    EXPECT_EQ(manifest["capture"].text, "f.gpucap");
    EXPECT_EQ(manifest["window"].text, "all");
    ASSERT_FALSE(manifest["goldens"].items.empty());
    for (const Json& g : manifest["goldens"].items) {
      EXPECT_TRUE(std::filesystem::exists(dir.File("fx/" + g.text))) << g.text;
    }
    auto golden = ReadTrace(dir.File("fx/f.json"));
    ASSERT_TRUE(golden);
    EXPECT_EQ(golden->Events("X", "kernel").size(), kernels);
    CliRun fx_info = Gpucap("info " + dir.File("fx/f.gpucap") + " --json");
    ASSERT_EQ(fx_info.code, 0) << fx_info.output;
    EXPECT_EQ(ParseOrFail(fx_info.output)["records"]["by_kind"]["CONCURRENT_KERNEL"].u(), kernels);
  }
}

}  // namespace
}  // namespace gpucap::testing
