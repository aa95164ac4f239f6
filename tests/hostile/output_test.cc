// Issue 23 item 5: no subcommand's output destroys data. An output equal to
// an input (by any path) is refused, a non-regular file is never replaced,
// the previous output survives a failed or interrupted write, no temporary
// file is left behind, and the error names the errno.
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <thread>

#include "hostile_captures.h"
#include "hostile_test.h"

namespace gpucap::testing::hostile {
namespace {

namespace fs = std::filesystem;

// Every subcommand that writes a file, with `out` as its output and the
// capture at `in` as its input.
std::vector<std::vector<std::string>> Writers(const std::string& in, const std::string& out) {
  return {{"build", in, "-q", "-o", out},
          {"stats", in, "-o", out},
          {"merge", in, "-o", out},
          {"trim", in, "-o", out}};
}

std::vector<std::string> Names(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

LimitedRun Gpucap(const std::vector<std::string>& args, uint64_t file_bytes = 0) {
  Limits limits;
  limits.seconds = 60;
  limits.file_bytes = file_bytes;
  return RunGpucapLimited(args, limits);
}

TEST(OutputTest, OutputEqualToTheInputIsRefusedByAnyPath) {
  TempDir dir;
  std::string capture = dir.File("in.gpucap");
  std::string bytes = Base(4).bytes();
  WriteFile(capture, bytes);
  fs::create_symlink(capture, dir.File("link.gpucap"));
  fs::create_hard_link(capture, dir.File("hard.gpucap"));
  fs::create_directory(dir.File("sub"));
  for (const std::string& out : {capture, dir.File("link.gpucap"), dir.File("hard.gpucap"),
                                 dir.File("sub/../in.gpucap")}) {
    for (const auto& args : Writers(capture, out)) {
      LimitedRun r = Gpucap(args);
      EXPECT_NE(r.code, 0) << args[0] << " -o " << out << ": " << r.Describe();
      EXPECT_NE(r.output.find("input"), std::string::npos) << args[0] << ": " << r.Describe();
      EXPECT_EQ(ReadFile(capture), bytes) << args[0] << " -o " << out << " changed its input";
    }
  }
  EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{"hard.gpucap", "in.gpucap", "link.gpucap", "sub"}));
}

TEST(OutputTest, IntoTraceIsAnInputToo) {
  TempDir dir;
  std::string capture = dir.File("in.gpucap");
  WriteFile(capture, Base(4).bytes());
  std::string kineto = dir.File("kineto.json");
  std::string doc = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"step\",\"pid\":4242,\"tid\":4242,\"ts\":1790857026000000,\"dur\":10}]}";
  WriteFile(kineto, doc);
  LimitedRun r = Gpucap({"build", capture, "-q", "--into", kineto, "-o", kineto});
  EXPECT_NE(r.code, 0) << r.Describe();
  EXPECT_EQ(ReadFile(kineto), doc);
}

TEST(OutputTest, NonRegularFilesAreNeverReplaced) {
  TempDir dir;
  std::string capture = dir.File("in.gpucap");
  WriteFile(capture, Base(4).bytes());
  std::string fifo = dir.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink(fifo, dir.File("to_fifo"));
  fs::create_directory(dir.File("d"));
  for (const std::string& out : {fifo, dir.File("to_fifo")}) {
    for (const auto& args : Writers(capture, out)) {
      LimitedRun r = Gpucap(args);
      EXPECT_NE(r.code, 0) << args[0] << " -o " << out << ": " << r.Describe();
      EXPECT_NE(r.output.find("regular file"), std::string::npos) << args[0] << ": " << r.Describe();
    }
  }
  // A folder is never replaced: build writes its trace inside it
  // (docs/cli.md, `-o DIR/`); every other writer refuses and says why.
  for (const auto& args : Writers(capture, dir.File("d"))) {
    LimitedRun r = Gpucap(args);
    EXPECT_TRUE(fs::is_directory(dir.File("d"))) << args[0] << " replaced the folder";
    if (args[0] == "build") {
      EXPECT_EQ(r.code, 0) << r.Describe();
      EXPECT_EQ(Names(dir.File("d")), (std::vector<std::string>{"in.pt.trace.json.gz"})) << r.Describe();
    } else {
      EXPECT_NE(r.code, 0) << args[0] << ": " << r.Describe();
      bool said = r.output.find("regular file") != std::string::npos || r.output.find("folder") != std::string::npos;
      EXPECT_TRUE(said) << args[0] << ": " << r.Describe();
    }
  }
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
  EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{"d", "fifo", "in.gpucap", "to_fifo"}));
}

TEST(OutputTest, FullDiskKeepsThePreviousOutputAndNamesTheErrno) {
  TempDir dir;
  std::string capture = dir.File("in.gpucap");
  WriteFile(capture, Base(64).bytes());
  std::string out = dir.File("out");
  for (const auto& args : Writers(capture, out)) {
    WriteFile(out, "previous output");
    // RLIMIT_FSIZE makes writes past 200 bytes fail with EFBIG, as a full disk does.
    LimitedRun r = Gpucap(args, 200);
    EXPECT_NE(r.code, 0) << args[0] << ": " << r.Describe();
    EXPECT_NE(r.output.find("File too large"), std::string::npos) << args[0] << " names no errno: " << r.Describe();
    EXPECT_EQ(ReadFile(out), "previous output") << args[0];
    EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{"in.gpucap", "out"})) << args[0] << " left a temporary";
  }
}

TEST(OutputTest, InterruptedBuildLeavesNoTemporaryAndKeepsThePreviousOutput) {
  TempDir dir;
  std::string capture = dir.File("in.gpucap");
  WriteFile(capture, Base(20'000).bytes());  // a trace that takes a while to gzip at level 9
  std::string out = dir.File("out.json.gz");
  WriteFile(out, "previous output");
  Limits limits;
  limits.seconds = 60;
  bool saw_temporary = false;
  LimitedRun r = RunGpucapLimited(
      {"build", capture, "-q", "-j", "1", "--gzip-level", "9", "-o", out}, limits, [&](pid_t pid) {
        for (int i = 0; i < 20000 && !saw_temporary; ++i) {
          for (const std::string& name : Names(dir.path())) {
            if (name.find(".tmp") != std::string::npos) saw_temporary = true;
          }
          if (!saw_temporary) std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        kill(pid, SIGTERM);
      });
  EXPECT_EQ(r.signal, SIGTERM) << r.Describe();
  EXPECT_TRUE(saw_temporary) << "the build ended before it could be interrupted";
  EXPECT_EQ(ReadFile(out), "previous output");
  EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{"in.gpucap", "out.json.gz"}));
}

}  // namespace
}  // namespace gpucap::testing::hostile
