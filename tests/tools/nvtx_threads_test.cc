// Start/end ranges ended on another thread, end to end (synthetic capture ->
// export -> reports): nsys's projections take "only ranges that start and
// end on the same thread" (Analysis Guide, nvtx_gpu_proj_sum; its scripts
// keep the NVTX_EVENTS rows with no endGlobalTid, for nvtx_kern_sum too),
// while nvtx_sum lists every range.
//
// The scene, on thread 4242 (times from T):
//   push/pop  "outer"   [0, 100000]
//   start/end "crossed" [500, 60000], ended by thread 4343
//   start/end "same"    [1000, 50000], ended by thread 4242
//   launches  [10000, 12000] -> kernel [20000, 25000]
//             [30000, 32000] -> kernel [40000, 47000]
// Worked out by hand: "outer" and "same" each hold both launches and
// project onto [20000, 47000] = 27000 ns with 2 GPU ops; "crossed" (which
// would hold them too, and would be "same"'s tightest parent) is left out,
// so "same" sits at level 1 under "outer", whose one child it is. Kernel
// time under each: 5000 + 7000 = 12000 ns.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "../support/gpucap_cli.h"
#include "../support/temp_dir.h"
#include "export_test_util.h"
#include "json.h"
#include "synthetic_capture.h"

namespace gpucap::testing {
namespace {

constexpr uint64_t kT = 1'790'857'026'000'000'000ull;
constexpr uint32_t kMain = 4242, kOther = 4343;

void WriteScene(const std::string& path) {
  auto made = builder::testing::SyntheticCapture::Create(path, builder::testing::DefaultSession(),
                                                          {builder::testing::H200(0)});
  ASSERT_TRUE(made.ok()) << made.status().message();
  builder::testing::SyntheticCapture& c = **made;
  auto ok = [](const Status& s) { ASSERT_TRUE(s.ok()) << s.message(); };
  format::ClockSample clock;
  clock.kind = format::ClockKind::kStart;
  clock.cupti_ns = kT;
  clock.realtime_ns = static_cast<int64_t>(kT);
  clock.monotonic_ns = 1000;
  ok(c.Message(clock));
  ok(c.Message(format::ThreadInfo{4242, 1, kMain, "main"}));
  ok(c.Message(format::ThreadInfo{4242, 2, kOther, "other"}));
  ok(c.String(0x1000, "void k(int)"));
  ok(c.Push(kMain, kT, "outer"));
  ok(c.StartRange(2, kMain, kT + 500, "crossed"));
  ok(c.StartRange(1, kMain, kT + 1000, "same"));
  uint32_t correlation = 1;
  for (auto [call, kernel_start, kernel_end] : {std::tuple<uint64_t, uint64_t, uint64_t>{10000, 20000, 25000},
                                                 std::tuple<uint64_t, uint64_t, uint64_t>{30000, 40000, 47000}}) {
    builder::testing::ApiRecord a;
    a.start = kT + call;
    a.end = kT + call + 2000;
    a.tid = kMain;
    a.correlation = correlation;
    c.Api(a);
    builder::testing::KernelRecord k;
    k.start = kT + kernel_start;
    k.end = kT + kernel_end;
    k.correlation = correlation++;
    k.name_pointer = 0x1000;
    c.Kernel(k);
  }
  ok(c.EndRange(1, kMain, kT + 50000));
  ok(c.EndRange(2, kOther, kT + 60000));
  ok(c.Pop(kMain, kT + 100000));
  ok(c.Close());
}

// The report's rows by "Style/Range" (or `key`'s columns), through the CLI's JSON form.
std::map<std::string, Json> Rows(const std::string& capture, const std::string& report, const std::string& range_key) {
  TempDir dir;
  std::string out = dir.File("r.json");
  CliRun run = Gpucap("stats " + capture + " -q --report " + report + " --format json -o " + out);
  EXPECT_EQ(run.code, 0) << run.output;
  Json root = ParseOrFail(ReadFile(out));
  std::map<std::string, Json> rows;
  for (const Json& r : root["reports"][report].items) rows[r["Style"].text + "/" + r[range_key.c_str()].text] = r;
  return rows;
}

TEST(NvtxThreads, StartEndRangesEndedOnAnotherThreadProjectNothing) {
  TempDir dir;
  std::string capture = dir.File("threads.gpucap");
  WriteScene(capture);

  // The export keeps both threads of a start/end range.
  ExportDb db({capture});
  auto ranges = db.Rows("SELECT s.value, r.kind, r.tid, r.end_tid FROM nvtx_ranges r JOIN strings s ON s.id = r.name "
                        "ORDER BY r.start_ns");
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0], (std::vector<std::string>{"outer", "push_pop", "4242", "NULL"}));
  EXPECT_EQ(ranges[1], (std::vector<std::string>{"crossed", "start_end", "4242", "4343"}));
  EXPECT_EQ(ranges[2], (std::vector<std::string>{"same", "start_end", "4242", "4242"}));

  auto proj = Rows(capture, "nvtx_gpu_proj_sum", "Range");
  ASSERT_EQ(proj.size(), 2u);
  ASSERT_TRUE(proj.count("PushPop/:outer"));
  ASSERT_TRUE(proj.count("StartEnd/:same"));
  const Json& outer = proj["PushPop/:outer"];
  EXPECT_EQ(outer["Total Proj Time (ns)"].i(), 27000);
  EXPECT_EQ(outer["Total Range Time (ns)"].i(), 100000);
  EXPECT_EQ(outer["Total GPU Ops"].i(), 2);
  EXPECT_DOUBLE_EQ(outer["Avg Range Lvl"].number, 0.0);
  EXPECT_DOUBLE_EQ(outer["Avg Num Child"].number, 1.0);
  const Json& same = proj["StartEnd/:same"];
  EXPECT_EQ(same["Total Proj Time (ns)"].i(), 27000);
  EXPECT_EQ(same["Total Range Time (ns)"].i(), 49000);
  EXPECT_EQ(same["Total GPU Ops"].i(), 2);
  EXPECT_DOUBLE_EQ(same["Avg Range Lvl"].number, 1.0);
  EXPECT_DOUBLE_EQ(same["Avg Num Child"].number, 0.0);

  auto kern = Rows(capture, "nvtx_kern_sum", "NVTX Range");
  ASSERT_EQ(kern.size(), 2u);
  for (const char* key : {"PushPop/:outer", "StartEnd/:same"}) {
    ASSERT_TRUE(kern.count(key)) << key;
    EXPECT_EQ(kern[key]["NVTX Inst"].i(), 1) << key;
    EXPECT_EQ(kern[key]["Kern Inst"].i(), 2) << key;
    EXPECT_EQ(kern[key]["Total Time (ns)"].i(), 12000) << key;
    EXPECT_EQ(kern[key]["TID"].i(), kMain) << key;
  }

  // nvtx_sum is no projection: every range, "crossed" among them.
  auto sum = Rows(capture, "nvtx_sum", "Range");
  ASSERT_EQ(sum.size(), 3u);
  ASSERT_TRUE(sum.count("StartEnd/crossed"));
  EXPECT_EQ(sum["StartEnd/crossed"]["Total Time (ns)"].i(), 59500);
}

}  // namespace
}  // namespace gpucap::testing
