// gpucap build, run as a user runs it.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>

#include "../support/gpucap_cli.h"
#include "json.h"
#include "scene.h"

namespace gpucap::testing {
namespace {

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[65536];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, n);
  gzclose(f);
  return out;
}

TEST(Cli, BuildsOneGzippedTracePerStepNamedByIndexAndLabel) {
  Scene s;
  for (int step = 0; step < 3; ++step) {
    uint64_t t = kT0 + step * 100000;
    Scene::Ok(s.c().Push(1, t, "ProfilerStep#" + std::to_string(step)));
    s.Launch(step + 1, 1, t + 100, t + 5000, t + 6000);
    Scene::Ok(s.c().Pop(1, t + 90000));
  }
  std::string capture = s.Path();
  std::string out = s.File("trace.json.gz");
  CliRun r = Gpucap("build " + capture + " -o " + out + " --window 'nvtx:ProfilerStep#\\d+' --select 1-2");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(std::filesystem::exists(s.File("trace.0-ProfilerStep#0.json.gz")));
  for (int step : {1, 2}) {
    std::string path = s.File("trace." + std::to_string(step) + "-ProfilerStep#" + std::to_string(step) + ".json.gz");
    ASSERT_TRUE(std::filesystem::exists(path)) << r.output;
    Json j;
    std::string error;
    ASSERT_TRUE(ParseJson(Gunzip(path), &j, &error)) << error;
    EXPECT_EQ(j["gpucap"]["window"]["label"].text, "ProfilerStep#" + std::to_string(step));
    size_t kernels = 0;
    for (const Json& e : j["traceEvents"].items) kernels += e["cat"].text == "kernel";
    EXPECT_EQ(kernels, 1u);
  }
  // The listing shows the same windows.
  CliRun list = Gpucap("build " + capture + " --window 'nvtx:ProfilerStep#\\d+' --list-windows");
  ASSERT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("ProfilerStep#2"), std::string::npos);
}

TEST(Cli, BadInputGetsAClearErrorAndNoCrash) {
  Scene s;
  s.Launch(1, 1, kT0 + 100, kT0 + 5000, kT0 + 6000);
  std::string capture = s.Path();
  CliRun bad_window = Gpucap("build " + capture + " -o " + s.File("t.json") + " --window sometimes");
  EXPECT_NE(bad_window.code, 0);
  EXPECT_NE(bad_window.output.find("--window 'sometimes'"), std::string::npos) << bad_window.output;
  CliRun missing = Gpucap("build " + s.File("nope.gpucap") + " -o " + s.File("t.json"));
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.output.find("nope.gpucap"), std::string::npos) << missing.output;
  std::string junk = s.File("junk.gpucap");
  WriteFile(junk, "this is not a capture at all, just text");
  CliRun not_capture = Gpucap("build " + junk + " -o " + s.File("t.json"));
  EXPECT_NE(not_capture.code, 0);
  EXPECT_NE(not_capture.output.find("offset 0"), std::string::npos) << not_capture.output;
  CliRun select = Gpucap("build " + capture + " -o " + s.File("t.json") + " --select 4");
  EXPECT_NE(select.code, 0);
  EXPECT_NE(select.output.find("window 4 does not exist"), std::string::npos) << select.output;
  EXPECT_FALSE(std::filesystem::exists(s.File("t.json")));
}

// every:100 meant 100 ns and wrote millions of files; now it is a usage
// error, and a spec yielding more windows than --max-windows writes nothing.
TEST(Cli, TooManyWindowsOrADurationWithoutUnitWritesNothing) {
  Scene s;
  s.Launch(1, 1, kT0 + 100, kT0 + 5000, kT0 + 6000);
  std::string capture = s.Path();
  CliRun bare = Gpucap("build " + capture + " -o " + s.File("t.json") + " --window every:100");
  EXPECT_EQ(bare.code, 2) << bare.output;
  EXPECT_NE(bare.output.find("no unit"), std::string::npos) << bare.output;
  // The capture spans ~6 us: every:1us yields 6 windows.
  CliRun many = Gpucap("build " + capture + " -o " + s.File("t.json") + " --window every:1us --max-windows 3");
  EXPECT_EQ(many.code, 2) << many.output;
  EXPECT_NE(many.output.find("--max-windows"), std::string::npos) << many.output;
  EXPECT_FALSE(std::filesystem::exists(s.File("t.0.json")));
  CliRun enough = Gpucap("build " + capture + " -o " + s.File("t.json") + " --window every:1us --max-windows 100 -q");
  EXPECT_EQ(enough.code, 0) << enough.output;
  EXPECT_TRUE(std::filesystem::exists(s.File("t.0.json")));
}

}  // namespace
}  // namespace gpucap::testing
