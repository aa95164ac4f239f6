// Every subcommand as a user runs it: help, the happy path on a fixture,
// damaged input, and errors that name the file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "../support/temp_dir.h"
#include "progress.h"
#include "tool_test_util.h"

namespace gpucap::testing {
namespace {

TEST(Cli, EverySubcommandHasHelpAndRefusesUnknownFlags) {
  CliRun top = Gpucap("--help");
  EXPECT_EQ(top.code, 0);
  for (const char* cmd : {"record", "info", "build", "stats", "diff", "trim", "fixture", "merge"}) {
    SCOPED_TRACE(cmd);
    EXPECT_NE(top.output.find(std::string("  ") + cmd + " "), std::string::npos) << top.output;
    CliRun help = Gpucap(std::string(cmd) + " --help");
    EXPECT_EQ(help.code, 0) << help.output;
    EXPECT_NE(help.output.find(std::string("usage: gpucap ") + cmd), std::string::npos) << help.output;
    if (std::string(cmd) != "record") {
      CliRun bad = Gpucap(std::string(cmd) + " " + Fixture("basics") + " --no-such-flag");
      EXPECT_EQ(bad.code, 2) << bad.output;
    }
  }
  // The shared window flags act the same everywhere: a selection past the
  // last window and a spec that is not one are refused, naming the flag.
  TempDir dir;
  std::string c = Fixture("torch_train");
  for (std::string cmd : {"stats " + c, "diff " + c + " " + c, "trim " + c + " -o " + dir.File("t.gpucap"),
                          "fixture " + c + " -o " + dir.File("fx"), "merge " + c + " -o " + dir.File("m.json")}) {
    SCOPED_TRACE(cmd);
    CliRun past = Gpucap(cmd + " -q -j 1 -w 'nvtx:ProfilerStep#\\d+' -s 99");
    EXPECT_EQ(past.code, 1) << past.output;
    EXPECT_NE(past.output.find("--select: window 99 does not exist (8 windows, 0 to 7)"), std::string::npos)
        << past.output;
    CliRun bad = Gpucap(cmd + " -q -w bogus");
    EXPECT_EQ(bad.code, 2) << bad.output;
    EXPECT_NE(bad.output.find("--window 'bogus'"), std::string::npos) << bad.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.File("t.gpucap"))) << "nothing written after a refused flag";
}

TEST(Cli, InfoTextJsonAndDamage) {
  TempDir dir;
  CliRun text = Gpucap("info " + Fixture("graphs_nvtx"));
  ASSERT_EQ(text.code, 0) << text.output;
  EXPECT_NE(text.output.find("graphs    6 graphs"), std::string::npos) << text.output;
  CliRun json = Gpucap("info --json " + Fixture("allreduce-1"));
  ASSERT_EQ(json.code, 0);
  Json j = ParseOrFail(json.output);
  EXPECT_EQ(j["session"]["rank"].i(), 1);

  std::string cut = dir.File("cut.gpucap");
  WriteCutCopy(Fixture("basics"), cut, 0.8);
  CliRun damaged = Gpucap("info " + cut);
  EXPECT_EQ(damaged.code, 0) << "a damaged capture is described, not refused";
  EXPECT_NE(damaged.output.find("finding(s)"), std::string::npos) << damaged.output;
  EXPECT_NE(damaged.output.find(cut + ": offset"), std::string::npos) << damaged.output;

  CliRun missing = Gpucap("info " + dir.File("nope.gpucap"));
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("nope.gpucap"), std::string::npos);
  std::string junk = dir.File("junk.gpucap");
  WriteFile(junk, "not a capture");
  CliRun not_capture = Gpucap("info " + junk);
  EXPECT_EQ(not_capture.code, 1);
  EXPECT_NE(not_capture.output.find("junk.gpucap"), std::string::npos) << not_capture.output;
}

TEST(Cli, StatsFormatsAndDamagedInput) {
  TempDir dir;
  CliRun csv = Gpucap("stats " + Fixture("counters") + " -f csv -t kernels -q");
  ASSERT_EQ(csv.code, 0) << csv.output;
  EXPECT_EQ(csv.output.rfind("# kernels\ntime_pct,total_ns,count,", 0), 0u) << csv.output;
  EXPECT_NE(csv.output.find(",80,"), std::string::npos) << "80 burn kernels: " << csv.output;
  CliRun json = Gpucap("stats " + Fixture("torch_train") + " -f json --top 3 -w 'nvtx:ProfilerStep#\\d+' -s 1-3");
  ASSERT_EQ(json.code, 0);
  Json j = ParseOrFail(json.output);
  EXPECT_EQ(j["windows"].u(), 3u);
  EXPECT_EQ(j["tables"]["kernels"].items.size(), 3u);
  std::string out = dir.File("stats.txt");
  ASSERT_EQ(Gpucap("stats " + Fixture("basics") + " -o " + out).code, 0);
  EXPECT_NE(ReadFile(out).find("GPU kernels"), std::string::npos);
  EXPECT_EQ(Gpucap("stats " + Fixture("basics") + " -f xml").code, 2);
  EXPECT_EQ(Gpucap("stats " + Fixture("basics") + " -t nothing").code, 2);

  std::string flipped = dir.File("flipped.gpucap");
  WriteFlippedCopy(Fixture("basics"), flipped, 0.5);
  CliRun damaged = Gpucap("stats " + flipped + " -f csv");
  EXPECT_EQ(damaged.code, 0) << damaged.output;
  EXPECT_NE(damaged.output.find("warning: " + flipped), std::string::npos) << damaged.output;
  CliRun quiet = Gpucap("stats " + flipped + " -f csv -q");
  EXPECT_EQ(quiet.output.find("warning"), std::string::npos);
}

TEST(Cli, TrimThenBuildTheWindowItPrints) {
  TempDir dir;
  std::string small = dir.File("step.gpucap");
  CliRun trim = Gpucap("trim " + Fixture("torch_train") + " -o " + small + " -w 'nvtx:ProfilerStep#\\d+' -s 2");
  ASSERT_EQ(trim.code, 0) << trim.output;
  size_t at = trim.output.find("gpucap build ");
  ASSERT_NE(at, std::string::npos) << trim.output;
  std::string again = trim.output.substr(at + 13, trim.output.find('\n', at) - at - 13);
  CliRun build = Gpucap("build " + again + " -o " + dir.File("t.json"));
  ASSERT_EQ(build.code, 0) << again << "\n" << build.output;
  EXPECT_NE(build.output.find("ProfilerStep#2"), std::string::npos) << build.output;
  EXPECT_LT(std::filesystem::file_size(small), std::filesystem::file_size(Fixture("torch_train")));
  CliRun info = Gpucap("info --json " + small);
  Json j = ParseOrFail(info.output);
  EXPECT_TRUE(j["damage"]["intact"].boolean);
  CliRun over = Gpucap("trim " + small + " -o " + small);
  EXPECT_EQ(over.code, 1);
  EXPECT_NE(over.output.find("overwrite"), std::string::npos) << over.output;
  EXPECT_EQ(Gpucap("trim " + Fixture("basics") + " -o " + dir.File("x.gpucap") + " -w nvtx:nothing").code, 1);
}

TEST(Cli, FixtureWritesCaptureGoldensAndManifest) {
  TempDir dir;
  CliRun r = Gpucap("fixture " + Fixture("graphs_nvtx") + " -o " + dir.File("fx") + " -w marks --name replays");
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* f : {"fx/replays.gpucap", "fx/replays.0-captured_replays.json",
                        "fx/replays.0-captured_replays.pftrace", "fx/replays.stats.json",
                        "fx/replays.fixture.json"}) {
    EXPECT_TRUE(std::filesystem::exists(dir.File(f))) << f << "\n" << r.output;
  }
  Json m = ParseOrFail(ReadFile(dir.File("fx/replays.fixture.json")));
  EXPECT_EQ(m["capture"].text, "replays.gpucap");
  EXPECT_EQ(m["window"].text, "marks");
  EXPECT_EQ(m["goldens"].items.size(), 3u) << "a Chrome JSON and a pftrace golden per window, and stats";
  auto trace = ReadTrace(dir.File("fx/replays.0-captured_replays.json"));
  EXPECT_EQ((*trace).root["gpucap"]["capture"].text, "replays.gpucap") << "no machine's path in a golden";
}

TEST(Cli, MergeTheRanksOfAJob) {
  TempDir dir;
  std::string out = dir.File("job.json.gz");
  CliRun r = Gpucap("merge " + Fixture("allreduce-0") + " " + Fixture("allreduce-1") + " -o " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("from 2 of 2 captures"), std::string::npos) << r.output;
  auto t = ReadTrace(out);
  ExpectImporterRules(*t);
  EXPECT_EQ(Gpucap("merge " + Fixture("allreduce-0") + " -o " + out + " " + dir.File("missing.gpucap")).code, 1);
}

}  // namespace
}  // namespace gpucap::testing

namespace gpucap::tools {
namespace {

TEST(Progress, DrawsOneLineInPlaceOnlyWhenAsked) {
  // Only a terminal gets it (not ctest's pipe), and never with --quiet.
  EXPECT_EQ(Progress::ShouldShow(false), isatty(STDERR_FILENO) == 1);
  EXPECT_FALSE(Progress::ShouldShow(true));
  ::testing::internal::CaptureStderr();
  {
    Progress shown("stats", true);
    shown.Step("window ProfilerStep#1", 1, 3);
    shown.Step("window ProfilerStep#2", 2, 3);  // within 100 ms: skipped
    shown.Step("window ProfilerStep#3", 3, 3);  // the last: always drawn
    Progress hidden("stats", false);
    hidden.Step("window", 1, 1);
  }
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "\rgpucap stats: window ProfilerStep#1 1/3\x1b[K\rgpucap stats: window ProfilerStep#3 3/3\x1b[K\r\x1b[K");
}

}  // namespace
}  // namespace gpucap::tools
