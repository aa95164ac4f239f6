// The flight recorder's crash trigger end to end (crash_dump.h): a process
// of its own in ring mode, through the real libgpucap_recorder.so, crashes;
// it dies of the same signal as without gpucap, and leaves one dump whose
// trigger names the signal, a clean capture with its session and ranges.
// The program's own SIGSEGV handler runs too, whichever was installed
// first; no dump goes over an earlier file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gpucap/format/capture.h"
#include "../support/temp_dir.h"
#include "recorder_child.h"

namespace gpucap::recorder {
namespace {

struct ProbeRun {
  int status = 0;
  std::map<std::string, std::string> triggers;  // dump file name -> trigger
};

// Runs the probe in `mode`; `args` after the barrier dump's path.
ProbeRun RunProbe(const testing::TempDir& dir, const std::string& mode, const std::string& barrier,
                  const std::vector<std::string>& args = {}, const char* ring_crash = "1") {
  std::string output = dir.File("job.gpucap");
  testing_child::ChildSetup setup;
  setup.output = output;
  // ASan's own handlers would report and exit instead of dying of the signal.
  setup.env = {{"ASAN_OPTIONS", "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0"},
               {"GPUCAP_RING_MB", "8"},
               {"GPUCAP_RING_CRASH", ring_crash}};
  setup.args = {mode, barrier};
  setup.args.insert(setup.args.end(), args.begin(), args.end());
  setup.before_exec = [] {
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, SIG_DFL);
  };
  ProbeRun run;
  run.status = testing_child::RunUnderRecorder(GPUCAP_CRASH_PROBE, setup);
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    std::string name = e.path().filename().string();
    if (name.find(".ring-") == std::string::npos) continue;
    auto c = format::LoadCapture(e.path().string());
    run.triggers[name] = c.ok() && c->trailer ? c->trailer->trigger : "(not a capture)";
  }
  return run;
}

std::string Describe(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by ") + strsignal(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

// The one crash dump: clean, its session the probe's, its range there.
void ExpectCrashDump(const std::string& path, const std::string& trigger) {
  auto c = format::LoadCapture(path, {.read = {}, .verify_chunks = true});
  ASSERT_TRUE(c.ok()) << path << ": " << c.status().ToString();
  EXPECT_TRUE(c->report.clean());
  ASSERT_TRUE(c->trailer.has_value());
  EXPECT_EQ(c->trailer->trigger, trigger);
  EXPECT_TRUE(c->trailer->clean_shutdown);
  ASSERT_TRUE(c->session.has_value());
  EXPECT_EQ(c->session->command_line.at(0), GPUCAP_CRASH_PROBE);
  ASSERT_EQ(c->ranges.size(), 2u);
  EXPECT_EQ(c->ranges[0].name, "before the crash");
  EXPECT_EQ(c->trailer->frames, c->report.frames - 1) << "every frame but the trailer in its index";
}

struct Case {
  const char* mode;
  int signal;
  const char* trigger;
};

class CrashTest : public ::testing::TestWithParam<Case> {};

TEST_P(CrashTest, DiesOfTheSameSignalAndLeavesOneDumpNamingIt) {
  const Case& k = GetParam();
  testing::TempDir dir;
  ProbeRun run = RunProbe(dir, k.mode, dir.File("job.ring-1.gpucap"));
  ASSERT_TRUE(WIFSIGNALED(run.status)) << Describe(run.status);
  EXPECT_EQ(WTERMSIG(run.status), k.signal) << Describe(run.status);
  EXPECT_EQ(run.triggers, (std::map<std::string, std::string>{{"job.ring-1.gpucap", "api: barrier"},
                                                                {"job.ring-2.gpucap", k.trigger}}));
  ExpectCrashDump(dir.File("job.ring-2.gpucap"), k.trigger);
}

INSTANTIATE_TEST_SUITE_P(Signals, CrashTest,
                         ::testing::Values(Case{"segv", SIGSEGV, "crash: SIGSEGV"},
                                           Case{"abort", SIGABRT, "crash: SIGABRT"},
                                           Case{"bus", SIGBUS, "crash: SIGBUS"},
                                           Case{"fpe", SIGFPE, "crash: SIGFPE"},
                                           Case{"ill", SIGILL, "crash: SIGILL"}),
                         [](const auto& info) { return std::string(info.param.mode); });

TEST(Crash, TheProgramsHandlerInstalledBeforeRunsAfterTheDump) {
  testing::TempDir dir;
  std::string marker = dir.File("marker"), dump = dir.File("job.ring-2.gpucap");
  ProbeRun run = RunProbe(dir, "handler-before", dir.File("job.ring-1.gpucap"), {marker, dump});
  ASSERT_TRUE(WIFSIGNALED(run.status)) << Describe(run.status);
  EXPECT_EQ(WTERMSIG(run.status), SIGSEGV);
  EXPECT_EQ(testing::ReadFile(marker), "dump present");
  ExpectCrashDump(dump, "crash: SIGSEGV");
}

TEST(Crash, AHandlerInstalledAfterThatHandsOnRunsFirstThenTheDump) {
  testing::TempDir dir;
  std::string marker = dir.File("marker"), dump = dir.File("job.ring-2.gpucap");
  ProbeRun run = RunProbe(dir, "handler-after", dir.File("job.ring-1.gpucap"), {marker, dump});
  ASSERT_TRUE(WIFSIGNALED(run.status)) << Describe(run.status);
  EXPECT_EQ(WTERMSIG(run.status), SIGSEGV);
  EXPECT_EQ(testing::ReadFile(marker), "no dump");
  ExpectCrashDump(dump, "crash: SIGSEGV");
}

TEST(Crash, NoDumpGoesOverAnEarlierFile) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("job.ring-1.gpucap"), "not ours");
  testing::WriteFile(dir.File("job.ring-3.gpucap"), "not ours either");
  ProbeRun run = RunProbe(dir, "segv", dir.File("job.ring-2.gpucap"));
  ASSERT_TRUE(WIFSIGNALED(run.status)) << Describe(run.status);
  EXPECT_EQ(WTERMSIG(run.status), SIGSEGV);
  EXPECT_EQ(testing::ReadFile(dir.File("job.ring-1.gpucap")), "not ours");
  EXPECT_EQ(testing::ReadFile(dir.File("job.ring-3.gpucap")), "not ours either");
  EXPECT_EQ(run.triggers.at("job.ring-2.gpucap"), "api: barrier");
  EXPECT_EQ(run.triggers.size(), 4u);
  ExpectCrashDump(dir.File("job.ring-4.gpucap"), "crash: SIGSEGV");
}

TEST(Crash, GpucapRingCrashZeroLeavesTheSignalsAlone) {
  testing::TempDir dir;
  ProbeRun run = RunProbe(dir, "segv", dir.File("job.ring-1.gpucap"), {}, "0");
  ASSERT_TRUE(WIFSIGNALED(run.status)) << Describe(run.status);
  EXPECT_EQ(WTERMSIG(run.status), SIGSEGV);
  EXPECT_EQ(run.triggers, (std::map<std::string, std::string>{{"job.ring-1.gpucap", "api: barrier"}}));
}

}  // namespace
}  // namespace gpucap::recorder
