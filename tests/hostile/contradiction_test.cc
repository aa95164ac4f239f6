// Issue 41 item 5: damage and contradictions in well-framed captures (valid
// checksums, valid messages) are each named by a warning, `info` and `build`
// agree on them, and `merge` refuses captures that cannot be one process.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "hostile_captures.h"
#include "hostile_test.h"

namespace gpucap::testing::hostile {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

struct Seen {
  LimitedRun info, build;
  std::string trace;
};

// `info` and `build` of one capture; both must name `finding`, and info must
// not call the capture undamaged.
Seen BothName(const std::string& bytes, const std::string& finding) {
  TempDir dir;
  Seen s;
  s.info = RunOn(dir, bytes, {"info", "{}"});
  EXPECT_TRUE(s.info.ok()) << s.info.Describe();
  EXPECT_EQ(s.info.output.find("damage    none"), std::string::npos) << s.info.output;
  EXPECT_NE(s.info.output.find(finding), std::string::npos) << "info does not say '" << finding << "'\n"
                                                             << s.info.output;
  s.build = RunOn(dir, bytes, {"build", "{}", "-o", dir.File("out.json")});
  EXPECT_TRUE(s.build.ok()) << s.build.Describe();
  EXPECT_NE(s.build.output.find(finding), std::string::npos) << "build does not say '" << finding << "'\n"
                                                              << s.build.output;
  s.trace = ReadFile(dir.File("out.json"));
  LimitedRun strict = RunOn(dir, bytes, {"info", "{}", "--strict", "-q"});
  EXPECT_EQ(strict.code, 4) << "info --strict passes a capture with: " << finding << "\n" << strict.Describe();
  return s;
}

TEST(ContradictionTest, ATrailerIndexThatOmitsFramesIsNamedAndTheFramesStayVisible) {
  Seen s = BothName(IndexOmitsFrames(), "index cannot be trusted");
  EXPECT_EQ(Count(s.trace, "\"kernel_a\""), 4u) << "the unindexed chunk's kernels are drawn";
}

TEST(ContradictionTest, InfoFindsTheRawChecksumMismatchBuildFinds) {
  Seen s = BothName(RawChecksumMismatch(), "checksum");
  EXPECT_EQ(Count(s.trace, "\"kernel_a\""), 0u);
}

TEST(ContradictionTest, MoreRecordsThanBytesIsNamed) {
  Seen s = BothName(ImpossibleRecordCount(), "4294967295 records in");
  EXPECT_EQ(Count(s.trace, "\"kernel_a\""), 1u) << "the record that is there is drawn";
}

TEST(ContradictionTest, ADeviceWithoutPropertiesIsNamed) { BothName(DeviceWithoutProperties(), "device 0 has no properties"); }

TEST(ContradictionTest, NanCountersAreNamed) { BothName(NanCounter(), "NaN"); }

TEST(ContradictionTest, CyclicGraphDependenciesAreNamed) { BothName(GraphCycle(), "form a cycle"); }

TEST(ContradictionTest, CopiesEndingBeforeTheyStartAreNamedAndTheirBytesDoNotWrap) {
  TempDir dir;
  std::string bytes = CopiesEndingBeforeTheyStart();
  LimitedRun build = RunOn(dir, bytes, {"build", "{}", "-o", dir.File("out.json")});
  EXPECT_TRUE(build.ok()) << build.Describe();
  EXPECT_NE(build.output.find("4 kernel, copy or memset records end before they start"), std::string::npos)
      << build.output;
  LimitedRun stats = RunOn(dir, bytes, {"stats", "{}", "--format", "json", "-q"});
  EXPECT_TRUE(stats.ok()) << stats.Describe();
  // 4 x 2^62 bytes is 2^64: past uint64, so the total saturates instead of
  // wrapping to 0, and shows as the largest signed count, 2^63-1.
  EXPECT_NE(stats.output.find("\"bytes\": 9223372036854775807,"), std::string::npos) << stats.output.substr(0, 3000);
  EXPECT_EQ(stats.output.find("\"bytes\": -"), std::string::npos);
}

TEST(ContradictionTest, DuplicateCorrelationIdsAreNamed) {
  TempDir dir;
  LimitedRun build = RunOn(dir, DuplicateCorrelation(), {"build", "{}", "-q", "-o", dir.File("out.json")});
  EXPECT_TRUE(build.ok()) << build.Describe();
  std::string trace = ReadFile(dir.File("out.json"));
  EXPECT_NE(trace.find("1 API records repeat the correlation id of an earlier one"), std::string::npos)
      << trace.substr(0, 2000);
}

TEST(ContradictionTest, MergeRefusesCapturesThatCannotBeOneProcess) {
  TempDir dir;
  WriteFile(dir.File("a.gpucap"), Base(4).bytes() /* no trailer: still readable */);
  WriteFile(dir.File("b.gpucap"), SameProcessOtherMachine(31));
  LimitedRun r = RunGpucapLimited({"merge", dir.File("a.gpucap"), dir.File("b.gpucap"), "-q", "-o", dir.File("m.json")},
                                  Limits{});
  EXPECT_TRUE(r.exited() && r.code != 0) << r.Describe();
  EXPECT_NE(r.output.find("cannot be one process"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("NVIDIA A100-SXM4-80GB"), std::string::npos) << "names the device models\n" << r.output;
  EXPECT_NE(r.output.find("31 year(s) apart"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--keep-apart"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.File("m.json")));
  LimitedRun kept = RunGpucapLimited(
      {"merge", dir.File("a.gpucap"), dir.File("b.gpucap"), "--keep-apart", "-o", dir.File("m.json")}, Limits{});
  EXPECT_TRUE(kept.ok()) << kept.Describe();
  EXPECT_NE(kept.output.find("merged as separate processes"), std::string::npos) << kept.output;
  EXPECT_EQ(Count(ReadFile(dir.File("m.json")), "\"kernel_a\""), 8u) << "both captures' kernels, none dropped";
  // The same capture twice is one process, not a contradiction.
  LimitedRun same = RunGpucapLimited(
      {"merge", dir.File("b.gpucap"), dir.File("b.gpucap"), "-q", "-o", dir.File("s.json")}, Limits{});
  EXPECT_TRUE(same.ok()) << same.Describe();
}

}  // namespace
}  // namespace gpucap::testing::hostile
