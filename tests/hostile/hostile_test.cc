// Regression tests for issue 23 items 1-4, 6 and 7: captures whose checksums
// hold and whose contents lie. Each must be read within the memory budget,
// in bounded time, and its damage reported with an offset.
#include "hostile_test.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <cstring>

#include "gpucap/format/capture.h"
#include "gpucap/format/frame.h"
#include "hostile_captures.h"
#include "gpucap/tools/splice/kineto_splice.h"

namespace gpucap::testing::hostile {

std::vector<uint64_t> FrameOffsets(const std::string& bytes) {
  std::vector<uint64_t> out;
  uint64_t off = sizeof(format::FileHeader);
  while (off + sizeof(format::FrameHeader) <= bytes.size()) {
    format::FrameHeader h;
    std::memcpy(&h, bytes.data() + off, sizeof(h));
    if (h.magic != format::kFrameMagic) break;
    out.push_back(off);
    off += sizeof(h) + h.length;
  }
  return out;
}

namespace {

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

// --- Item 1: gigabytes from kilobytes -------------------------------------

TEST(HostileTest, KindCountsDoNotSizeTables) {
  TempDir dir;
  std::string bytes = HugeKindCounts();
  ASSERT_LT(bytes.size(), 64u << 10);
  LimitedRun r = RunOn(dir, bytes, {"build", "{}", "-q", "-o", dir.File("out.json")});
  EXPECT_TRUE(r.ok()) << r.Describe();
  EXPECT_EQ(Occurrences(ReadFile(dir.File("out.json")), "\"kernel_a\""), 1u);
}

TEST(HostileTest, RepeatedIndexEntryDecodesItsFrameOnce) {
  TempDir dir;
  std::string bytes = RepeatedIndex();
  ASSERT_LT(bytes.size(), 256u << 10);
  LimitedRun info = RunOn(dir, bytes, {"info", "{}"});
  EXPECT_TRUE(info.exited()) << info.Describe();
  auto capture = format::LoadCapture(dir.File("hostile.gpucap"));
  ASSERT_TRUE(capture.ok()) << capture.status().message();
  EXPECT_EQ(capture->strings.size(), 2001u) << "a frame named again by the index is read again";
  LimitedRun build = RunOn(dir, bytes, {"build", "{}", "-q", "-o", dir.File("out.json")});
  EXPECT_TRUE(build.ok()) << build.Describe();
}

TEST(HostileTest, ExplodingDemangledNameIsTruncated) {
  TempDir dir;
  std::string bytes = ExplodingMangledName();
  ASSERT_LT(bytes.size(), 4u << 10);
  LimitedRun build = RunOn(dir, bytes, {"build", "{}", "-q", "-o", dir.File("out.json")}, 30);
  EXPECT_TRUE(build.ok()) << build.Describe();
  std::string trace = ReadFile(dir.File("out.json"));
  EXPECT_NE(trace.find("f(A, B<A, A>, B<B<A, A>, B<A, A> >"), std::string::npos) << "the name's start survives";
  EXPECT_NE(trace.find("[truncated]"), std::string::npos);
  EXPECT_LT(trace.size(), 4u << 20);
  LimitedRun diff = RunOn(dir, bytes, {"diff", "{}", "{}"}, 30);
  EXPECT_TRUE(diff.exited()) << diff.Describe();
  LimitedRun trim = RunOn(dir, bytes, {"trim", "{}", "--anonymize", "-o", dir.File("anon.gpucap")}, 30);
  EXPECT_TRUE(trim.ok()) << trim.Describe();
}

// --- Item 2: window names that overflow the stack or run away --------------

TEST(HostileTest, LongNvtxNameMatchesWithoutOverflowingTheStack) {
  TempDir dir;
  std::string bytes = NamedRange("ProfilerStep#" + std::string(50'000, '7'));
  for (const char* spec : {"nvtx:ProfilerStep#\\d+", "nvtx:.*"}) {
    TempDir out;
    LimitedRun r = RunOn(dir, bytes, {"build", "{}", "-q", "-w", spec, "-o", out.File("w.json")}, 30);
    EXPECT_TRUE(r.ok()) << spec << ": " << r.Describe();
    // One window, in a file named after it.
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(out.path())) files.push_back(e.path().string());
    ASSERT_EQ(files.size(), 1u) << spec;
    std::string trace = ReadFile(files[0]);
    EXPECT_EQ(Occurrences(trace, "\"kernel_a\""), 3u) << spec;
    EXPECT_LT(trace.size(), 64u << 10) << "the range's name is cut to its budget";
  }
}

TEST(HostileTest, BacktrackingPatternEndsQuickly) {
  TempDir dir;
  std::string bytes = NamedRange(std::string(41, 'a') + "!");
  LimitedRun r = RunOn(dir, bytes, {"build", "{}", "-q", "-w", "nvtx:(a+)+$", "-o", dir.File("w.json")}, 20);
  EXPECT_FALSE(r.timed_out) << r.Describe();
  EXPECT_NE(r.output.find("matches nothing"), std::string::npos) << r.Describe();
}

// --- Item 3: range stacks shared, not copied -------------------------------

TEST(HostileTest, UnpoppedPushesUseMemoryLinearInPushes) {
  TempDir dir;
  std::string bytes = UnpoppedPushes(40'000);
  LimitedRun info = RunOn(dir, bytes, {"info", "{}"}, 60);
  EXPECT_TRUE(info.ok()) << info.Describe();
  LimitedRun build = RunOn(dir, bytes, {"build", "{}", "-q", "-o", dir.File("out.json")}, 120);
  EXPECT_TRUE(build.ok()) << build.Describe();
}

// --- Item 4: damage in captures without a trailer --------------------------

class TrailerlessDamageTest : public ::testing::TestWithParam<std::tuple<BadMessage, bool>> {};

TEST_P(TrailerlessDamageTest, InfoReportsTheFrameWithItsOffset) {
  auto [what, with_trailer] = GetParam();
  TempDir dir;
  std::string bytes = TrailerlessDamage(what, with_trailer);
  std::vector<uint64_t> frames = FrameOffsets(bytes);
  ASSERT_GE(frames.size(), 6u);
  uint64_t bad = frames[4];  // session, devices, strings, chunk, then the bad frame
  LimitedRun r = RunOn(dir, bytes, {"info", "{}"});
  EXPECT_EQ(r.output.find("damage none"), std::string::npos) << r.Describe();
  EXPECT_NE(r.output.find("offset " + std::to_string(bad)), std::string::npos) << r.Describe();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TrailerlessDamageTest,
    ::testing::Combine(::testing::Values(BadMessage::kHugeDeclaredSize, BadMessage::kUnknownCodec,
                                         BadMessage::kListOutOfBounds, BadMessage::kBadSegmentTable,
                                         BadMessage::kChunkRawSize),
                       ::testing::Bool()));

// --- Item 6: one timestamp must not empty the trace ------------------------

TEST(HostileTest, MaxTimestampKeepsTheOtherOpsAndWarns) {
  TempDir dir;
  LimitedRun r = RunOn(dir, MaxTimestamp(), {"build", "{}", "-o", dir.File("out.json")});
  EXPECT_TRUE(r.ok()) << r.Describe();
  EXPECT_GE(Occurrences(ReadFile(dir.File("out.json")), "\"kernel_a\""), 3u);
  EXPECT_NE(r.output.find("timestamp"), std::string::npos) << "a warning names what was ignored: " << r.Describe();
}

TEST(HostileTest, AbsurdClockPairsAreRejectedWithAWarning) {
  TempDir dir;
  LimitedRun r = RunOn(dir, AbsurdClocks(), {"build", "{}", "-o", dir.File("out.json")});
  EXPECT_TRUE(r.ok()) << r.Describe();
  EXPECT_NE(r.output.find("clock"), std::string::npos) << r.Describe();
  // Every event lies within the capture's few microseconds, not centuries apart.
  std::string trace = ReadFile(dir.File("out.json"));
  double lo = 1e300, hi = -1e300;
  for (size_t at = trace.find("\"ts\":"); at != std::string::npos; at = trace.find("\"ts\":", at + 1)) {
    double ts = std::strtod(trace.c_str() + at + 5, nullptr);
    lo = std::min(lo, ts);
    hi = std::max(hi, ts);
  }
  ASSERT_LE(lo, hi);
  EXPECT_LT(hi - lo, 1e6) << "microseconds between the first and last event";
}

// --- Item 7: smaller cases --------------------------------------------------

TEST(HostileTest, RepeatedSelectionIsBounded) {
  TempDir dir;
  std::string select = "0-10000000";
  while (select.size() < 650) select += ",0-10000000";
  LimitedRun r = RunOn(dir, Base(2).bytes(), {"build", "{}", "-q", "-s", select, "-o", dir.File("o.json")}, 30);
  EXPECT_TRUE(r.exited()) << r.Describe();
}

// Issue 41: the last uint32 window index and a period of 2^64-1 ns once
// looped (a 32-bit counter, an addition past 2^64) until memory ran out.
TEST(HostileTest, SelectingTheLastWindowIndexIsAnError) {
  TempDir dir;
  LimitedRun r = RunOn(dir, Base(2).bytes(), {"build", "{}", "-q", "-s", "4294967295", "-o", dir.File("o.json")}, 30);
  EXPECT_EQ(r.code, 2) << r.Describe();  // a usage error
  EXPECT_NE(r.output.find("window 4294967295 does not exist"), std::string::npos) << r.Describe();
}

TEST(HostileTest, APeriodNearTwoToTheSixtyFourIsOneWindow) {
  TempDir dir;
  LimitedRun r = RunOn(dir, Base(2).bytes(),
                       {"build", "{}", "-w", "every:18446744073709551615ns", "-o", dir.File("o.json")}, 30);
  EXPECT_TRUE(r.ok()) << r.Describe();
  EXPECT_EQ(Occurrences(ReadFile(dir.File("o.0.json")), "\"kernel_a\""), 2u) << "window 0 holds both kernels";
  EXPECT_FALSE(std::filesystem::exists(dir.File("o.1.json")));
  // Past 2^64 ns the period is refused as it is parsed.
  LimitedRun over = RunOn(dir, Base(2).bytes(), {"build", "{}", "-w", "every:18446744073709552ms", "-o",
                                                 dir.File("p.json")}, 30);
  EXPECT_EQ(over.code, 2) << over.Describe();
  EXPECT_NE(over.output.find("too large"), std::string::npos) << over.Describe();
}

// Issue 41 item 2: offsets from the capture are checked without adding
// first: an index entry at 2^64-8 once passed `offset + header > size` and
// read the 8 bytes before the file's mapping.
TEST(HostileTest, AnIndexEntryNearTwoToTheSixtyFourIsNotRead) {
  TempDir dir;
  for (uint64_t offset : {UINT64_MAX - 7, UINT64_MAX - 31}) {
    format::testing::FramedCapture f = Base(2);
    format::Trailer t;
    t.clean_shutdown = true;
    t.index = f.Index();
    t.index.push_back({offset, static_cast<uint16_t>(format::FrameType::kStrings), 8, 0, 0});
    f.TrailerAndFooter(t);
    LimitedRun r = RunOn(dir, f.bytes(), {"info", "{}"});
    EXPECT_TRUE(r.ok()) << offset << ": " << r.Describe();
    LimitedRun b = RunOn(dir, f.bytes(), {"build", "{}", "-q", "-o", dir.File("o.json")});
    EXPECT_TRUE(b.ok()) << offset << ": " << b.Describe();
    EXPECT_EQ(Occurrences(ReadFile(dir.File("o.json")), "\"kernel_a\""), 2u) << offset;
  }
}

TEST(HostileTest, TinyEveryPeriodIsRefusedOrQuick) {
  TempDir dir;
  std::string bytes = OneSecond();
  for (std::vector<std::string> args : {std::vector<std::string>{"stats", "{}", "-w", "every:1us"},
                                        std::vector<std::string>{"diff", "{}", "{}", "-w", "every:1us"},
                                        std::vector<std::string>{"trim", "{}", "-w", "every:1us", "-o",
                                                                 dir.File("t.gpucap")}}) {
    LimitedRun r = RunOn(dir, bytes, args, 20);
    EXPECT_FALSE(r.timed_out) << args[0] << ": " << r.Describe();
  }
}

TEST(HostileTest, JsonWithLongEscapeRunsScansInLinearTime) {
  // 3 MB of escapes: quadratic scanning took minutes, linear takes ms.
  std::string doc = "{\"traceEvents\":[{\"name\":\"";
  for (int i = 0; i < 1'500'000; ++i) doc += "\\n";
  doc += "\",\"ph\":\"X\"}]}";
  Limits limits;
  limits.seconds = 20;
  LimitedRun r = RunLimitedFn(
      [&] {
        auto v = tools::KinetoTrace::Parse(doc, "escapes.json");
        return v.ok() ? 0 : 1;
      },
      limits);
  EXPECT_TRUE(r.ok()) << r.Describe();
}

TEST(HostileTest, InfoOnAFifoDoesNotBlock) {
  TempDir dir;
  std::string fifo = dir.File("fifo.gpucap");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Limits limits;
  limits.seconds = 10;
  LimitedRun r = RunGpucapLimited({"info", fifo}, limits);
  EXPECT_FALSE(r.timed_out) << r.Describe();
  EXPECT_NE(r.code, 0) << r.Describe();
  EXPECT_NE(r.output.find("not a regular file"), std::string::npos) << r.Describe();
}

TEST(HostileTest, CpuPidEqualToGpuPidKeepsTracksApart) {
  TempDir dir;
  LimitedRun r = RunOn(dir, CpuPid(1), {"build", "{}", "-q", "-o", dir.File("out.json")});
  ASSERT_TRUE(r.ok()) << r.Describe();
  std::string trace = ReadFile(dir.File("out.json"));
  auto pid_of = [&](const std::string& name) -> std::string {
    size_t at = trace.find("\"name\":\"" + name + "\"");
    if (at == std::string::npos) return "missing";
    size_t begin = trace.rfind('{', at);
    size_t p = trace.find("\"pid\":", begin);
    return trace.substr(p + 6, trace.find_first_of(",}", p) - p - 6);
  };
  EXPECT_NE(pid_of("cudaLaunchKernel"), pid_of("kernel_a")) << "CPU pid 1 and GPU 1 share a process";
}

TEST(HostileTest, EmptyUuidDecodes) {
  TempDir dir;
  WriteFile(dir.File("u.gpucap"), EmptyUuid());
  auto capture = format::LoadCapture(dir.File("u.gpucap"));
  ASSERT_TRUE(capture.ok()) << capture.status().message();
  ASSERT_EQ(capture->devices.size(), 1u);
  for (uint8_t b : capture->devices[0].uuid) EXPECT_EQ(b, 0);
}

}  // namespace
}  // namespace gpucap::testing::hostile
