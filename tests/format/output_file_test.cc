// The output rule (format/output_file.h) at the library level: what the
// hostile CLI tests check per command, here on the one place that decides.
#include "gpucap/format/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace gpucap::format {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

TEST(OutputFile, StandardOutputNames) {
  for (const char* p : {"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"}) EXPECT_TRUE(IsStandardOutput(p)) << p;
  for (const char* p : {"./-", "--", "/dev/stderr", "stdout", ""}) EXPECT_FALSE(IsStandardOutput(p)) << p;
}

TEST(OutputFile, ResolvesLinksFromTheirOwnFolder) {
  TempDir dir;
  fs::create_directory(dir.File("a"));
  fs::create_directory(dir.File("b"));
  fs::create_symlink("../b/target", dir.File("a/link"));  // relative to a/
  fs::create_symlink(dir.File("a/link"), dir.File("chain"));
  auto r = ResolveOutputPath(dir.File("chain"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(fs::weakly_canonical(*r), fs::weakly_canonical(dir.File("b/target")));
  auto plain = ResolveOutputPath(dir.File("plain"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, dir.File("plain"));
  fs::create_symlink("loop", dir.File("loop"));
  EXPECT_FALSE(ResolveOutputPath(dir.File("loop")).ok());
}

TEST(OutputFile, CommitWritesThroughTheLinkAndKeepsIt) {
  TempDir dir;
  WriteFile(dir.File("real"), "old");
  fs::create_symlink("real", dir.File("link"));
  ASSERT_TRUE(WriteOutputFile(dir.File("link"), "new").ok());
  EXPECT_TRUE(fs::is_symlink(dir.File("link")));
  EXPECT_EQ(ReadFile(dir.File("real")), "new");
  fs::create_symlink("made", dir.File("dangling"));
  ASSERT_TRUE(WriteOutputFile(dir.File("dangling"), "x").ok());
  EXPECT_TRUE(fs::is_symlink(dir.File("dangling")));
  EXPECT_EQ(ReadFile(dir.File("made")), "x");
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) n += e.path().filename().string().find(".tmp") != std::string::npos;
  EXPECT_EQ(n, 0u) << "a temporary was left";
}

TEST(OutputFile, RefusesWhatIsNotARegularFileAndInputs) {
  TempDir dir;
  ASSERT_EQ(mkfifo(dir.File("fifo").c_str(), 0600), 0);
  fs::create_directory(dir.File("folder"));
  fs::create_symlink("fifo", dir.File("to_fifo"));
  for (const char* name : {"fifo", "folder", "to_fifo"}) {
    Status s = CheckOutputPath(dir.File(name));
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << name;
    EXPECT_NE(s.message().find("not a regular file"), std::string::npos) << s.message();
  }
  WriteFile(dir.File("in"), "input");
  int fd = open(dir.File("in").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  RegisterInput(fd);
  fs::create_symlink("in", dir.File("to_in"));
  fs::create_hard_link(dir.File("in"), dir.File("hard"));
  for (const char* name : {"in", "to_in", "hard"}) {
    Status s = CheckOutputPath(dir.File(name));
    EXPECT_NE(s.message().find("is an input"), std::string::npos) << name << ": " << s.message();
  }
  UnregisterInput(fd);
  close(fd);
  EXPECT_TRUE(CheckOutputPath(dir.File("in")).ok());
}

TEST(OutputFile, AnUncommittedFileLeavesNothing) {
  TempDir dir;
  {
    auto f = OutputFile::Create(dir.File("out"), OutputFile::Access::kSeekable);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Write("partial").ok());
    EXPECT_TRUE(fs::exists((*f)->temp_path()));
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace gpucap::format
