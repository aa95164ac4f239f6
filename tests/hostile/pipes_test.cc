// Issue 43 item 3: scripts and CI can rely on gpucap. `-o -` and
// `-o /dev/stdout` write the trace into standard output (gzipped with
// --gzip), `-` reads a capture from standard input, a --format that
// contradicts the output's name is a usage error, -q silences every command
// and --strict makes a damaged capture exit 4 before anything is written.
// Expected bytes come from the same command writing a named file, the path
// the other tests check.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "hostile_captures.h"
#include "hostile_test.h"

namespace gpucap::testing::hostile {
namespace {

namespace fs = std::filesystem;

struct ShRun {
  int code = -1;
  std::string out, err;  // the script's stdout and stderr
  std::string Describe() const { return "exit " + std::to_string(code) + "; stdout:\n" + out + "\nstderr:\n" + err; }
};

// `script` through sh, with $G the build tree's gpucap; its stdout and
// stderr kept apart (in a folder of their own, away from the test's files).
ShRun Sh(const std::string& script) {
  TempDir logs;
  std::string command = "G='" + std::string(GPUCAP_BINARY_DIR) + "/tools/gpucap'; export G; (" + script + ") >'" +
                        logs.File("out") + "' 2>'" + logs.File("err") + "'";
  int status = std::system(command.c_str());
  ShRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(logs.File("out"));
  r.err = ReadFile(logs.File("err"));
  return r;
}

// A capture with a clean end: nothing --strict objects to.
std::string Intact(int kernels = 4) {
  format::testing::FramedCapture f = Base(kernels);
  format::Trailer t;
  t.clean_shutdown = true;
  t.index = f.Index();
  f.TrailerAndFooter(t);
  return f.bytes();
}

// A trace names itself after its file: a file named "-" (in a folder, so
// not standard output) has the name a trace written to standard output has.
// (/dev/stdout's trace is named "stdout").
std::string Expected(const TempDir& dir, const std::string& command, const std::string& in, const std::string& flags,
                     const std::string& name = "-") {
  fs::create_directories(dir.File("expected"));
  std::string path = dir.File("expected/" + name);
  ShRun r = Sh("$G " + command + " " + in + " " + flags + " -o " + path);
  EXPECT_EQ(r.code, 0) << r.Describe();
  std::string bytes = ReadFile(path);
  fs::remove(path);
  return bytes;
}

TEST(PipesTest, BuildToStandardOutputIsTheFilesBytes) {
  TempDir dir;
  std::string in = dir.File("in.gpucap");
  WriteFile(in, Intact());
  std::string json = Expected(dir, "build", in, "-q");
  ASSERT_FALSE(json.empty());
  // Into a pipe, through `-` and through /dev/stdout.
  std::string json_stdout = Expected(dir, "build", in, "-q", "stdout");
  for (const char* out : {"-", "/dev/stdout"}) {
    ShRun r = Sh("$G build " + in + " -o " + out + " | cat > " + dir.File("piped.json"));
    ASSERT_EQ(r.code, 0) << out << ": " << r.Describe();
    EXPECT_EQ(ReadFile(dir.File("piped.json")), out == std::string("-") ? json : json_stdout) << out;
    // The line about the output goes to stderr, not into the trace.
    EXPECT_NE(r.err.find("GPU ops"), std::string::npos) << r.Describe();
  }
  // Into a file the shell opened: written into, not replaced.
  ShRun r = Sh("$G build " + in + " -q -o /dev/stdout > " + dir.File("redirected.json"));
  EXPECT_EQ(r.out, "");
  ASSERT_EQ(r.code, 0) << r.Describe();
  EXPECT_EQ(ReadFile(dir.File("redirected.json")), json_stdout);
  struct stat st;
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(PipesTest, PftraceToStandardOutputGzippedWhenAsked) {
  TempDir dir;
  std::string in = dir.File("in.gpucap");
  WriteFile(in, Intact());
  std::string pftrace = Expected(dir, "build", in, "-q -f pftrace");
  ASSERT_FALSE(pftrace.empty());
  ShRun plain = Sh("$G build " + in + " -q -f pftrace -o - | cat > " + dir.File("plain.pftrace"));
  ASSERT_EQ(plain.code, 0) << plain.Describe();
  EXPECT_EQ(ReadFile(dir.File("plain.pftrace")), pftrace);
  ShRun gz = Sh("$G build " + in + " -q -f pftrace --gzip -o - > " + dir.File("gz"));
  ASSERT_EQ(gz.code, 0) << gz.Describe();
  std::string gzipped = ReadFile(dir.File("gz"));
  ASSERT_GE(gzipped.size(), 2u);
  EXPECT_EQ(gzipped.substr(0, 2), "\x1f\x8b") << "not gzip";
  ASSERT_EQ(Sh("gzip -dc < " + dir.File("gz") + " > " + dir.File("gunzipped")).code, 0);
  EXPECT_EQ(ReadFile(dir.File("gunzipped")), pftrace);
  // Merge streams the same way.
  std::string merge = Expected(dir, "merge", in, "-q -f pftrace");
  ShRun merged = Sh("$G merge " + in + " -q -f pftrace -o - | cat > " + dir.File("merged.pftrace"));
  ASSERT_EQ(merged.code, 0) << merged.Describe();
  EXPECT_EQ(ReadFile(dir.File("merged.pftrace")), merge);
  EXPECT_FALSE(merge.empty());
}

TEST(PipesTest, SeveralWindowsIntoStandardOutputIsAUsageError) {
  TempDir dir;
  std::string in = dir.File("in.gpucap");
  WriteFile(in, Intact(8));
  for (const char* command : {"build", "merge"}) {
    ShRun r = Sh(std::string("$G ") + command + " " + in + " -q -w every:2us -o -");
    EXPECT_EQ(r.code, 2) << command << ": " << r.Describe();
    EXPECT_TRUE(r.out.empty()) << command << ": wrote " << r.out.size() << " bytes";
    EXPECT_NE(r.err.find("one window"), std::string::npos) << r.Describe();
  }
  // One of them, selected, is fine.
  ShRun one = Sh("$G build " + in + " -q -w every:2us -s 0 -o -");
  EXPECT_EQ(one.code, 0) << one.Describe();
  EXPECT_EQ(one.out.front(), '{');
}

TEST(PipesTest, SeekableOutputsReachStandardOutputWhenComplete) {
  TempDir dir;
  std::string in = dir.File("in.gpucap");
  WriteFile(in, Intact());
  for (const char* command : {"trim", "export", "stats", "report"}) {
    std::string named = Expected(dir, command, in, "-q");
    std::string piped = dir.File(std::string("piped.") + command);
    ShRun r = Sh(std::string("$G ") + command + " " + in + " -q -o - | cat > " + piped);
    ASSERT_EQ(r.code, 0) << command << ": " << r.Describe();
    EXPECT_EQ(ReadFile(piped), named) << command;
    EXPECT_FALSE(named.empty()) << command;
  }
  // No spool left in $TMPDIR.
  fs::create_directory(dir.File("tmp"));
  ShRun r = Sh("TMPDIR=" + dir.File("tmp") + " $G export " + in + " -q -o - | cat > /dev/null");
  ASSERT_EQ(r.code, 0) << r.Describe();
  EXPECT_TRUE(fs::is_empty(dir.File("tmp")));
}

TEST(PipesTest, StandardInputIsACapture) {
  TempDir dir;
  std::string in = dir.File("in.gpucap");
  WriteFile(in, Intact());
  fs::create_directory(dir.File("a"));
  fs::create_directory(dir.File("b"));
  ASSERT_EQ(Sh("$G build " + in + " -q -o " + dir.File("t.json")).code, 0);
  // The same trace but for the capture's name, "-".
  std::string json = ReadFile(dir.File("t.json"));
  std::string named = "\"capture\":\"" + in + "\"";
  ASSERT_NE(json.find(named), std::string::npos);
  json.replace(json.find(named), named.size(), "\"capture\":\"-\"");
  // A file redirected in, and a pipe.
  ShRun redirected = Sh("$G build - -q -o " + dir.File("a/t.json") + " < " + in);
  ASSERT_EQ(redirected.code, 0) << redirected.Describe();
  EXPECT_EQ(ReadFile(dir.File("a/t.json")), json);
  fs::create_directory(dir.File("tmp"));
  ShRun piped = Sh("cat " + in + " | TMPDIR=" + dir.File("tmp") + " $G build - -q -o " + dir.File("b/t.json"));
  ASSERT_EQ(piped.code, 0) << piped.Describe();
  EXPECT_EQ(ReadFile(dir.File("b/t.json")), json);
  EXPECT_TRUE(fs::is_empty(dir.File("tmp"))) << "the copy of standard input was left behind";
  // Every reader takes it, the export (which opens its captures twice
  // with --strict) too.
  ShRun info = Sh("cat " + in + " | $G info -");
  EXPECT_EQ(info.code, 0) << info.Describe();
  EXPECT_NE(info.out.find("devices"), std::string::npos) << info.Describe();
  ShRun exported = Sh("cat " + in + " | $G export - --strict -q -o " + dir.File("db.sqlite"));
  EXPECT_EQ(exported.code, 0) << exported.Describe();
  // Past the bound: a clear error, not a partial read.
  ShRun over = Sh("cat " + in + " | GPUCAP_STDIN_LIMIT=100 $G info -");
  EXPECT_EQ(over.code, 1) << over.Describe();
  EXPECT_NE(over.err.find("GPUCAP_STDIN_LIMIT"), std::string::npos) << over.Describe();
  // The input redirected in is an input: not an output.
  ShRun self = Sh("$G trim - -q -o " + in + " < " + in);
  EXPECT_NE(self.code, 0) << self.Describe();
  EXPECT_EQ(ReadFile(in), Intact());
}

TEST(PipesTest, AFormatThatContradictsTheNameIsAUsageError) {
  TempDir dir;
  std::string in = dir.File("in.gpucap");
  WriteFile(in, Intact());
  for (const std::string& args : {"-f perfetto -o " + dir.File("x.json"), "-f pftrace -o " + dir.File("x.json.gz"),
                                  "-f chrome -o " + dir.File("x.pftrace"), "--gzip -o " + dir.File("x.json")}) {
    for (const char* command : {"build", "merge"}) {
      ShRun r = Sh(std::string("$G ") + command + " " + in + " " + args);
      EXPECT_EQ(r.code, 2) << command << " " << args << ": " << r.Describe();
    }
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), {}), 1) << "a refused command wrote a file";
  // Agreeing, or a name that says nothing, is fine.
  EXPECT_EQ(Sh("$G build " + in + " -q -f pftrace -o " + dir.File("y.pftrace")).code, 0);
  EXPECT_EQ(Sh("$G build " + in + " -q -f pftrace -o " + dir.File("y.bin")).code, 0);
  EXPECT_EQ(Sh("$G build " + in + " -q --gzip -o " + dir.File("y.json.gz")).code, 0);
}

TEST(PipesTest, QuietSilencesEveryCommand) {
  TempDir dir;
  std::string in = dir.File("in.gpucap");
  WriteFile(in, Intact());
  fs::create_directory(dir.File("fx"));
  const std::vector<std::string> commands = {
      "build " + in + " -q -o " + dir.File("t.json"),
      "merge " + in + " -q -o " + dir.File("m.json"),
      "stats " + in + " -q -o " + dir.File("s.txt"),
      "export " + in + " -q -o " + dir.File("e.sqlite"),
      "report " + in + " -q -o " + dir.File("r.html"),
      "trim " + in + " -q -o " + dir.File("t.gpucap"),
      "fixture " + in + " -q --no-verify -o " + dir.File("fx"),
      "info " + in + " -q",
  };
  for (const std::string& c : commands) {
    ShRun r = Sh("$G " + c);
    EXPECT_EQ(r.code, 0) << c << ": " << r.Describe();
    EXPECT_EQ(r.out, "") << c;
    EXPECT_EQ(r.err, "") << c;
  }
}

TEST(PipesTest, StrictRefusesADamagedCaptureBeforeWriting) {
  TempDir dir;
  std::string good = dir.File("good.gpucap");
  WriteFile(good, Intact());
  // Cut before its trailer: what a killed process leaves.
  std::string cut = dir.File("cut.gpucap");
  WriteFile(cut, Base(4).bytes());
  fs::create_directory(dir.File("out"));
  auto commands = [&](const std::string& in, const std::string& tag) {
    std::string o = dir.File("out/" + tag);
    return std::vector<std::string>{
        "build " + in + " -q --strict -o " + o + ".json", "merge " + in + " -q --strict -o " + o + ".m.json",
        "stats " + in + " -q --strict -o " + o + ".txt",  "export " + in + " -q --strict -o " + o + ".sqlite",
        "report " + in + " -q --strict -o " + o + ".html", "trim " + in + " -q --strict -o " + o + ".gpucap",
        "info " + in + " --strict"};
  };
  for (const std::string& c : commands(good, "good")) {
    ShRun r = Sh("$G " + c);
    EXPECT_EQ(r.code, 0) << c << ": " << r.Describe();
  }
  size_t written = static_cast<size_t>(std::distance(fs::directory_iterator(dir.File("out")), {}));
  EXPECT_EQ(written, 6u);
  for (const std::string& c : commands(cut, "cut")) {
    ShRun r = Sh("$G " + c);
    EXPECT_EQ(r.code, 4) << c << ": " << r.Describe();
    EXPECT_NE(r.err.find("--strict"), std::string::npos) << c << ": " << r.Describe();
    EXPECT_NE(r.err.find("cut.gpucap"), std::string::npos) << c << ": names no file: " << r.Describe();
  }
  EXPECT_EQ(static_cast<size_t>(std::distance(fs::directory_iterator(dir.File("out")), {})), written)
      << "a --strict refusal wrote its output";
  // Without --strict the cut capture still builds (exit 0, a warning).
  ShRun lenient = Sh("$G build " + cut + " -o " + dir.File("lenient.json"));
  EXPECT_EQ(lenient.code, 0) << lenient.Describe();
}

}  // namespace
}  // namespace gpucap::testing::hostile
