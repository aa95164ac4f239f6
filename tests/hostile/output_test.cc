// Issue 23 item 5 and issue 41 item 4: no subcommand's output destroys
// data. An output equal to an input (by any path) is refused, a non-regular
// file (folder, FIFO, device node) is never replaced, a symlink (live or
// dangling) is written through and stays a link, the previous output
// survives a failed or interrupted write, no temporary file is left behind,
// and the error names the errno. Every writer: build, stats, merge, trim,
// export, report (fixture writes through the same calls: trim's and
// WriteOutputFile).
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "hostile_captures.h"
#include "hostile_test.h"
#include "skip.h"

namespace gpucap::testing::hostile {
namespace {

namespace fs = std::filesystem;

// Every subcommand that writes a file, with `out` as its output and the
// capture at `in` as its input.
std::vector<std::vector<std::string>> Writers(const std::string& in, const std::string& out) {
  return {{"build", in, "-q", "-o", out},
          {"stats", in, "-o", out},
          {"merge", in, "-o", out},
          {"trim", in, "-o", out},
          {"export", in, "-q", "-o", out},
          {"report", in, "-q", "-o", out}};
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

// Commands that read a job's captures a few at a time (report, stats,
// export) hold none of them open when they write: every one is an input
// from the start all the same.
TEST(OutputTest, OutputEqualToAnyOfSeveralInputsIsRefused) {
  TempDir dir;
  std::string a = dir.File("a.gpucap"), b = dir.File("b.gpucap");
  std::string bytes = Base(4).bytes();
  WriteFile(a, bytes);
  WriteFile(b, bytes);
  const std::vector<std::vector<std::string>> jobs = {{"stats", a, b, "-o", b},
                                                      {"report", a, b, "-q", "-o", b},
                                                      {"export", a, b, "-q", "-o", b},
                                                      {"merge", a, b, "-q", "--keep-apart", "-o", b}};
  for (const auto& args : jobs) {
    LimitedRun r = Gpucap(args);
    EXPECT_NE(r.code, 0) << args[0] << ": " << r.Describe();
    EXPECT_NE(r.output.find("input"), std::string::npos) << args[0] << ": " << r.Describe();
    EXPECT_EQ(ReadFile(b), bytes) << args[0] << " changed its input";
  }
  EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{"a.gpucap", "b.gpucap"}));
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

TEST(OutputTest, ASymlinkIsWrittenThroughAndStaysALink) {
  TempDir dir;
  std::string capture = dir.File("in.gpucap");
  WriteFile(capture, Base(4).bytes());
  fs::create_directory(dir.File("sub"));
  for (const auto& args : Writers(capture, "")) {
    const std::string& what = args[0];
    // Live: link -> sub/real (relative, from the link's folder), and a
    // chain link2 -> link -> sub/real.
    WriteFile(dir.File("sub/real"), "previous output");
    fs::create_symlink("sub/real", dir.File("link"));
    fs::create_symlink(dir.File("link"), dir.File("link2"));
    for (const std::string& out : {dir.File("link"), dir.File("link2")}) {
      std::vector<std::string> a = args;
      a.back() = out;
      LimitedRun r = Gpucap(a);
      EXPECT_EQ(r.code, 0) << what << " -o " << out << ": " << r.Describe();
      EXPECT_TRUE(fs::is_symlink(dir.File("link"))) << what << " replaced the link";
      EXPECT_TRUE(fs::is_symlink(dir.File("link2"))) << what << " replaced the link";
      EXPECT_EQ(fs::read_symlink(dir.File("link")), "sub/real") << what;
      EXPECT_TRUE(fs::is_regular_file(dir.File("sub/real"))) << what;
      EXPECT_NE(ReadFile(dir.File("sub/real")), "previous output") << what << " did not write through " << out;
      EXPECT_GT(fs::file_size(dir.File("sub/real")), 0u) << what;
      WriteFile(dir.File("sub/real"), "previous output");
    }
    // Dangling: the file it names is made.
    fs::create_symlink("sub/new", dir.File("dangling"));
    std::vector<std::string> a = args;
    a.back() = dir.File("dangling");
    LimitedRun r = Gpucap(a);
    EXPECT_EQ(r.code, 0) << what << " -o dangling: " << r.Describe();
    EXPECT_TRUE(fs::is_symlink(dir.File("dangling"))) << what << " replaced the dangling link";
    EXPECT_TRUE(fs::is_regular_file(dir.File("sub/new"))) << what << " did not make the file the link names";
    EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{"dangling", "in.gpucap", "link", "link2", "sub"}))
        << what << " left a temporary";
    EXPECT_EQ(Names(dir.File("sub")), (std::vector<std::string>{"new", "real"})) << what << " left a temporary";
    for (const char* name : {"link", "link2", "dangling", "sub/new", "sub/real"}) fs::remove(dir.File(name));
  }
}

// A device node: made in the temp dir when running as root (mknod), where a
// broken rule would replace only that; /dev/null itself otherwise, which a
// process that is not root cannot replace whatever it tries. Either way it
// must still be a character device afterwards.
TEST(OutputTest, DeviceNodesAreNeverReplaced) {
  TempDir dir;
  std::string capture = dir.File("in.gpucap");
  WriteFile(capture, Base(4).bytes());
  std::string node = "/dev/null";
  if (geteuid() == 0) {
    node = dir.File("null");
    ASSERT_EQ(mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0) << std::strerror(errno);
  }
  fs::create_symlink(node, dir.File("to_node"));
  for (const std::string& out : {node, dir.File("to_node")}) {
    for (const auto& args : Writers(capture, out)) {
      LimitedRun r = Gpucap(args);
      EXPECT_NE(r.code, 0) << args[0] << " -o " << out << ": " << r.Describe();
      EXPECT_NE(r.output.find("character device"), std::string::npos) << args[0] << ": " << r.Describe();
      struct stat st;
      ASSERT_EQ(lstat(node.c_str(), &st), 0);
      EXPECT_TRUE(S_ISCHR(st.st_mode)) << args[0] << " replaced " << node;
      EXPECT_TRUE(fs::is_symlink(dir.File("to_node")));
    }
  }
  struct stat st;
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(OutputTest, InterruptedExportLeavesNoTemporaryAndKeepsThePreviousOutput) {
  TempDir dir;
  std::string capture = dir.File("in.gpucap");
  WriteFile(capture, Base(200'000).bytes());
  std::string out = dir.File("out.sqlite");
  WriteFile(out, "previous output");
  Limits limits;
  limits.seconds = 120;
  for (int sig : {SIGINT, SIGTERM}) {
    bool saw_temporary = false;
    LimitedRun r = RunGpucapLimited({"export", capture, "-q", "-p", "1", "-o", out}, limits, [&](pid_t pid) {
      for (int i = 0; i < 200000 && !saw_temporary; ++i) {
        for (const std::string& name : Names(dir.path())) {
          if (name.find(".tmp") != std::string::npos) saw_temporary = true;
        }
        if (!saw_temporary) std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      kill(pid, sig);
    });
    EXPECT_EQ(r.signal, sig) << r.Describe();
    EXPECT_TRUE(saw_temporary) << "the export ended before it could be interrupted";
    EXPECT_EQ(ReadFile(out), "previous output");
    EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{"in.gpucap", "out.sqlite"}));
  }
}

// trim checks its result (the windows found again in the trimmed capture)
// before committing it: a failed check leaves no output.
TEST(OutputTest, AFailedTrimCheckLeavesNoOutput) {
  std::string fixture = std::string(GPUCAP_SOURCE_DIR) + "/fixtures/graphs_nvtx.gpucap";
  if (!fs::exists(fixture)) GPUCAP_SKIP(fixture << " is not in this tree");
  TempDir dir;
  std::string out = dir.File("small.gpucap");
  LimitedRun r = Gpucap({"trim", fixture, "-q", "--anonymize", "-w", "marks", "-o", out});
  if (r.code == 0) GPUCAP_SKIP("trim --anonymize -w marks passes its check now: " << r.Describe());
  EXPECT_EQ(r.code, 1) << r.Describe();
  EXPECT_TRUE(Names(dir.path()).empty()) << "left " << Names(dir.path()).front();
  WriteFile(out, "previous output");
  r = Gpucap({"trim", fixture, "-q", "--anonymize", "-w", "marks", "-o", out});
  EXPECT_EQ(r.code, 1) << r.Describe();
  EXPECT_EQ(ReadFile(out), "previous output");
  EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{"small.gpucap"}));
}

}  // namespace
}  // namespace gpucap::testing::hostile
