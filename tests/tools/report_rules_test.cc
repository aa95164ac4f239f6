// nsys's report rules on a database written here by hand, in the export's
// schema (docs/sqlite.md), with the edge cases fixtures rarely show: a
// kernel starting exactly at its launch call's end (queue time 0, counted)
// and one starting before it (no queue time), a graph launch whose kernels
// share one correlation id, a call on a range's edge, nested ranges, a
// start/end range, a range in a named domain, a kernel launched inside no
// range and one whose launch is not known. Every expected figure is worked
// out by hand in the comments beside it.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "gpucap/tools/export/schema.h"
#include "gpucap/tools/stats/stats_reports.h"

namespace gpucap::testing {
namespace {

using tools::KernelNameForm;
using tools::Report;
using tools::ReportCell;

class Db {
 public:
  Db() {
    EXPECT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK);
    for (const auto& t : tools::sqlite::Tables()) {
      std::string sql = "CREATE TABLE " + std::string(t.name) + " (";
      std::string sep;
      if (t.has_id) {
        sql += "id INTEGER PRIMARY KEY";
        sep = ", ";
      }
      for (const auto& c : t.columns) {
        sql += sep + std::string(c.name) + " " + std::string(c.type);
        sep = ", ";
      }
      for (std::string_view g : t.generated) sql += sep + std::string(g);
      Exec(sql + ")");
    }
  }
  ~Db() { sqlite3_close(db_); }
  void Exec(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << sql << ": " << error;
    sqlite3_free(error);
  }
  sqlite3* db() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

// The scene: process 1 (pid 4242), thread 7, device 0.
//   api calls  a1 [100,200] a2 [300,400] a3 [500,600] (cudaLaunchKernel_v7000)
//              a4 [700,800] (cudaGraphLaunch), a5 [610,640] (cudaMemcpyAsync),
//              a6 [1100,1150] (cudaLaunchKernel_v7000)
//   kernels    k1 [250,350] by a1, grid 2x1x1; k2 [400,450] by a2, grid 2x1x1;
//              k3 [550,900] by a3, grid 4x1x1; k4 [850,900], k5 [900,1000] by a4
//              (both correlation 4, "node_k"); k6 [1200,1320] by a6, grid 2x1x1;
//              k7 [1400,1410], launch unknown, grid 2x1x1. All but k4, k5 "gemm".
//   memcpy     m1 [660,700] by a5, 1000 bytes HtoD
//   ranges     r1 "outer" push/pop [50,650]; r2 "inner" in domain "dom" push/pop
//              [90,210]; r3 "inner" push/pop [290,350]; r4 "outer" start/end
//              [650,1000]; a mark at 120.
void Scene(Db* d) {
  d->Exec("INSERT INTO strings VALUES (10, 'void gemm<float>(float*)'), (11, '_Z4gemmIfEvPf'), (12, 'gemm<float>'), "
          "(13, 'node_k'), (20, 'cudaLaunchKernel_v7000'), (21, 'cudaGraphLaunch'), (22, 'cudaMemcpyAsync'), "
          "(30, 'outer'), (31, 'inner'), (32, 'dom'), (33, 'tick')");
  d->Exec("INSERT INTO processes (id, pid) VALUES (1, 4242)");
  d->Exec("INSERT INTO devices (process, device, name) VALUES (1, 0, 'NVIDIA H200')");
  d->Exec("INSERT INTO api_calls (id, process, tid, start_ns, end_ns, name, correlation) VALUES "
          "(1, 1, 7, 100, 200, 20, 1), (2, 1, 7, 300, 400, 20, 2), (3, 1, 7, 500, 600, 20, 3), "
          "(4, 1, 7, 700, 800, 21, 4), (5, 1, 7, 610, 640, 22, 5), (6, 1, 7, 1100, 1150, 20, 6)");
  std::string k = "INSERT INTO kernels (id, process, device, context, stream, start_ns, end_ns, name, mangled_name, "
                  "short_name, grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, correlation, "
                  "launch_id, launch_tid, launch_start_ns, launch_end_ns) VALUES ";
  d->Exec(k + "(1, 1, 0, 1, 7, 250, 350, 10, 11, 12, 2, 1, 1, 128, 1, 1, 32, 1, 1, 7, 100, 200)");
  d->Exec(k + "(2, 1, 0, 1, 7, 400, 450, 10, 11, 12, 2, 1, 1, 128, 1, 1, 32, 2, 2, 7, 300, 400)");
  d->Exec(k + "(3, 1, 0, 1, 7, 550, 900, 10, 11, 12, 4, 1, 1, 128, 1, 1, 32, 3, 3, 7, 500, 600)");
  d->Exec(k + "(4, 1, 0, 1, 9, 850, 900, 13, 13, 13, 1, 1, 1, 32, 1, 1, 16, 4, 4, 7, 700, 800)");
  d->Exec(k + "(5, 1, 0, 1, 9, 900, 1000, 13, 13, 13, 1, 1, 1, 32, 1, 1, 16, 4, 4, 7, 700, 800)");
  d->Exec(k + "(6, 1, 0, 1, 7, 1200, 1320, 10, 11, 12, 2, 1, 1, 128, 1, 1, 32, 6, 6, 7, 1100, 1150)");
  d->Exec(k + "(7, 1, 0, 1, 7, 1400, 1410, 10, 11, 12, 2, 1, 1, 128, 1, 1, 32, 9, NULL, NULL, NULL, NULL)");
  d->Exec("INSERT INTO memcpys (id, process, device, context, stream, start_ns, end_ns, copy_kind, src_kind, dst_kind, "
          "bytes, correlation, launch_id, launch_tid, launch_start_ns, launch_end_ns) VALUES "
          "(1, 1, 0, 1, 7, 660, 700, 'HtoD', 'Pageable', 'Device', 1000, 5, 5, 7, 610, 640)");
  d->Exec("INSERT INTO nvtx_ranges (id, process, kind, tid, domain, start_ns, end_ns, name) VALUES "
          "(1, 1, 'push_pop', 7, NULL, 50, 650, 30), (2, 1, 'push_pop', 7, 32, 90, 210, 31), "
          "(3, 1, 'push_pop', 7, NULL, 290, 350, 31), (4, 1, 'start_end', 7, NULL, 650, 1000, 30), "
          "(5, 1, 'mark', 7, NULL, 120, 120, 33)");
}

Report RunOn(const Db& d, const char* name, KernelNameForm names = KernelNameForm::kDemangled) {
  auto r = tools::RunReport(d.db(), name, names);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : Report{};
}

// Row `row` as cells by header.
const ReportCell& At(const Report& r, size_t row, const std::string& header) {
  for (size_t c = 0; c < r.columns.size(); ++c) {
    if (r.columns[c].header == header) return r.rows.at(row).at(c);
  }
  ADD_FAILURE() << r.name << " has no column " << header;
  static ReportCell none;
  return none;
}
int64_t I(const ReportCell& c) { return std::get<int64_t>(c); }
double D(const ReportCell& c) { return std::get<double>(c); }
std::string S(const ReportCell& c) { return std::holds_alternative<std::string>(c) ? std::get<std::string>(c) : "<null>"; }
bool Null(const ReportCell& c) { return std::holds_alternative<std::monostate>(c); }

std::vector<std::string> Headers(const Report& r) {
  std::vector<std::string> h;
  for (const auto& c : r.columns) h.push_back(c.header);
  return h;
}

TEST(ReportRules, KernExecSumCountsZeroQueueAndLeavesOutNegative) {
  Db d;
  Scene(&d);
  Report r = RunOn(d, "cuda_kern_exec_sum");
  EXPECT_EQ(r.title, "CUDA Kernel Launch & Exec Time Summary");
  std::vector<std::string> want = {"PID", "TID", "DevId", "Count", "QCount"};
  for (const char* m : {"T", "A", "Q", "K"}) {
    for (const char* s : {"Avg", "Med", "Min", "Max", "StdDev"}) want.push_back(std::string(m) + s);
  }
  want.push_back("API Name");
  want.push_back("Kernel Name");
  EXPECT_EQ(Headers(r), want);
  ASSERT_EQ(r.rows.size(), 2u);
  // Row 0, gemm by cudaLaunchKernel (the _v7000 suffix cut): k1, k2, k3, k6.
  //   T = max(call end, kernel end) - call start: 250, 150, 400, 220 -> avg 255.0, med 235.0
  //   A: 100, 100, 100, 50 -> avg 87.5, med 100.0
  //   Q = kernel start - call end where >= 0: 50, 0, (-50 left out), 50 -> 3 samples,
  //     avg 33.3, med 50.0, min 0, max 50, stddev sqrt((16.67^2 + 33.33^2 + 16.67^2) / 2) = 28.9
  //   K: 100, 50, 350, 120 -> avg 155.0, med 110.0
  EXPECT_EQ(I(At(r, 0, "PID")), 4242);
  EXPECT_EQ(I(At(r, 0, "TID")), 7);
  EXPECT_EQ(I(At(r, 0, "DevId")), 0);
  EXPECT_EQ(S(At(r, 0, "API Name")), "cudaLaunchKernel");
  EXPECT_EQ(S(At(r, 0, "Kernel Name")), "void gemm<float>(float*)");
  EXPECT_EQ(I(At(r, 0, "Count")), 4);
  EXPECT_EQ(I(At(r, 0, "QCount")), 3);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "TAvg")), 255.0);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "TMed")), 235.0);
  EXPECT_EQ(I(At(r, 0, "TMin")), 150);
  EXPECT_EQ(I(At(r, 0, "TMax")), 400);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "AAvg")), 87.5);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "AMed")), 100.0);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "QAvg")), 33.3);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "QMed")), 50.0);
  EXPECT_EQ(I(At(r, 0, "QMin")), 0);
  EXPECT_EQ(I(At(r, 0, "QMax")), 50);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "QStdDev")), 28.9);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "KAvg")), 155.0);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "KMed")), 110.0);
  // Row 1, node_k by cudaGraphLaunch: k4, k5. T 200, 300 -> avg 250.0 (less than 255.0:
  // rows go by TAvg); Q 50, 100.
  EXPECT_EQ(S(At(r, 1, "API Name")), "cudaGraphLaunch");
  EXPECT_EQ(I(At(r, 1, "Count")), 2);
  EXPECT_EQ(I(At(r, 1, "QCount")), 2);
  EXPECT_DOUBLE_EQ(D(At(r, 1, "TAvg")), 250.0);
  EXPECT_DOUBLE_EQ(D(At(r, 1, "QAvg")), 75.0);
}

TEST(ReportRules, KernExecSumQueueStatisticsAreNullWithoutQueueTimes) {
  Db d;
  Scene(&d);
  d.Exec("DELETE FROM kernels WHERE id != 3");  // k3 alone: it started before its call returned
  Report r = RunOn(d, "cuda_kern_exec_sum");
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(I(At(r, 0, "QCount")), 0);
  for (const char* h : {"QAvg", "QMed", "QMin", "QMax", "QStdDev"}) EXPECT_TRUE(Null(At(r, 0, h))) << h;
  EXPECT_DOUBLE_EQ(D(At(r, 0, "TStdDev")), 0.0);  // one sample
}

TEST(ReportRules, GpuProjectionHasNsysFourteenColumnsAndRules) {
  Db d;
  Scene(&d);
  Report r = RunOn(d, "nvtx_gpu_proj_sum");
  EXPECT_EQ(r.title, "NVTX GPU Projection Summary");
  EXPECT_EQ(Headers(r), (std::vector<std::string>{"Range", "Style", "Total Proj Time", "Total Range Time",
                                                  "Range Instances", "Proj Avg", "Proj Med", "Proj Min", "Proj Max",
                                                  "Proj StdDev", "Total GPU Ops", "Avg GPU Ops", "Avg Range Lvl",
                                                  "Avg Num Child"}));
  ASSERT_EQ(r.rows.size(), 3u);
  // r1 ":outer" PushPop [50,650] holds the calls a1, a2, a3 and a5 (all within it; a4
  // starts after it ends): k1, k2, k3, m1 -> from 250 to 900 = 650; 4 correlations; level
  // 0; children r2 (projects) and r3 (holds no whole call: a2 ends at 400 > 350) -> 1.
  EXPECT_EQ(S(At(r, 0, "Range")), ":outer");
  EXPECT_EQ(S(At(r, 0, "Style")), "PushPop");
  EXPECT_EQ(I(At(r, 0, "Total Proj Time")), 650);
  EXPECT_EQ(I(At(r, 0, "Total Range Time")), 600);
  EXPECT_EQ(I(At(r, 0, "Range Instances")), 1);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "Proj Avg")), 650.0);
  EXPECT_EQ(I(At(r, 0, "Total GPU Ops")), 4);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "Avg GPU Ops")), 4.0);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "Avg Range Lvl")), 0.0);
  EXPECT_DOUBLE_EQ(D(At(r, 0, "Avg Num Child")), 1.0);
  // r4 ":outer" StartEnd [650,1000] holds a4: k4, k5, one correlation -> 1 GPU op;
  // 850 to 1000 = 150. Not inside r1 (it starts where r1 ends but ends later).
  EXPECT_EQ(S(At(r, 1, "Range")), ":outer");
  EXPECT_EQ(S(At(r, 1, "Style")), "StartEnd");
  EXPECT_EQ(I(At(r, 1, "Total Proj Time")), 150);
  EXPECT_EQ(I(At(r, 1, "Total Range Time")), 350);
  EXPECT_EQ(I(At(r, 1, "Total GPU Ops")), 1);
  EXPECT_DOUBLE_EQ(D(At(r, 1, "Avg Range Lvl")), 0.0);
  // r2 "dom:inner" [90,210] holds a1: k1, 250 to 350 = 100; level 1 under r1.
  EXPECT_EQ(S(At(r, 2, "Range")), "dom:inner");
  EXPECT_EQ(I(At(r, 2, "Total Proj Time")), 100);
  EXPECT_EQ(I(At(r, 2, "Total Range Time")), 120);
  EXPECT_EQ(I(At(r, 2, "Total GPU Ops")), 1);
  EXPECT_DOUBLE_EQ(D(At(r, 2, "Avg Range Lvl")), 1.0);
  EXPECT_DOUBLE_EQ(D(At(r, 2, "Avg Num Child")), 0.0);
}

TEST(ReportRules, GpuProjectionCountsACallOnTheRangesEdges) {
  Db d;
  Scene(&d);
  // r3 widened to [300,400]: exactly a2's span, which it now holds (start <= start, end <= end).
  d.Exec("UPDATE nvtx_ranges SET start_ns = 300, end_ns = 400 WHERE id = 3");
  Report r = RunOn(d, "nvtx_gpu_proj_sum");
  bool found = false;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (S(At(r, i, "Range")) != ":inner") continue;
    found = true;
    EXPECT_EQ(I(At(r, i, "Total Proj Time")), 50);  // k2, 400 to 450
    EXPECT_DOUBLE_EQ(D(At(r, i, "Avg Range Lvl")), 1.0);
  }
  EXPECT_TRUE(found);
  // And r1 now has two children that project.
  EXPECT_DOUBLE_EQ(D(At(r, 0, "Avg Num Child")), 2.0);
}

TEST(ReportRules, NvtxSumsNameRangesAsNsysDoes) {
  Db d;
  Scene(&d);
  Report sum = RunOn(d, "nvtx_sum");
  EXPECT_EQ(sum.title, "NVTX Range Summary");
  EXPECT_EQ(Headers(sum), (std::vector<std::string>{"Time", "Total Time", "Instances", "Avg", "Med", "Min", "Max",
                                                    "StdDev", "Style", "Range"}));
  // 600 + 350 + 120 + 60 = 1130 ns; the mark is no range.
  ASSERT_EQ(sum.rows.size(), 4u);
  EXPECT_EQ(S(At(sum, 0, "Range")), "outer");
  EXPECT_EQ(S(At(sum, 0, "Style")), "PushPop");
  EXPECT_DOUBLE_EQ(D(At(sum, 0, "Time")), 53.1);  // 600 / 1130
  EXPECT_EQ(S(At(sum, 1, "Style")), "StartEnd");
  EXPECT_DOUBLE_EQ(D(At(sum, 1, "Time")), 31.0);  // 350 / 1130
  EXPECT_EQ(S(At(sum, 2, "Range")), "dom:inner");
  EXPECT_DOUBLE_EQ(D(At(sum, 2, "Time")), 10.6);  // 120 / 1130
  EXPECT_EQ(S(At(sum, 3, "Range")), "inner");
  EXPECT_DOUBLE_EQ(D(At(sum, 3, "Time")), 5.3);   // 60 / 1130

  Report pushpop = RunOn(d, "nvtx_pushpop_sum");
  EXPECT_EQ(pushpop.title, "NVTX Push/Pop Range Summary");
  EXPECT_EQ(Headers(pushpop), (std::vector<std::string>{"Time", "Total Time", "Instances", "Avg", "Med", "Min", "Max",
                                                        "StdDev", "Range"}));
  ASSERT_EQ(pushpop.rows.size(), 3u);  // 600 + 120 + 60 = 780
  EXPECT_EQ(S(At(pushpop, 0, "Range")), "outer");
  EXPECT_DOUBLE_EQ(D(At(pushpop, 0, "Time")), 76.9);
  EXPECT_EQ(S(At(pushpop, 1, "Range")), "dom:inner");
  EXPECT_DOUBLE_EQ(D(At(pushpop, 1, "Time")), 15.4);
  EXPECT_DOUBLE_EQ(D(At(pushpop, 2, "Time")), 7.7);
}

TEST(ReportRules, NvtxKernSumPairsKernelsWithEveryRangeHoldingTheirLaunch) {
  Db d;
  Scene(&d);
  Report r = RunOn(d, "nvtx_kern_sum", KernelNameForm::kBase);
  EXPECT_EQ(r.title, "NVTX Range Kernel Summary");
  EXPECT_EQ(Headers(r), (std::vector<std::string>{"NVTX Range", "Style", "PID", "TID", "NVTX Inst", "Kern Inst",
                                                  "Total Time", "Avg", "Med", "Min", "Max", "StdDev",
                                                  "Kernel Name"}));
  ASSERT_EQ(r.rows.size(), 5u);
  // Range NULL first (SQLite's order): k7 (launch unknown: PID, TID NULL), then k6.
  EXPECT_TRUE(Null(At(r, 0, "NVTX Range")));
  EXPECT_TRUE(Null(At(r, 0, "PID")));
  EXPECT_EQ(I(At(r, 0, "NVTX Inst")), 0);
  EXPECT_EQ(I(At(r, 0, "Total Time")), 10);
  EXPECT_EQ(I(At(r, 1, "PID")), 4242);
  EXPECT_EQ(I(At(r, 1, "Total Time")), 120);
  // ":outer" PushPop: k1, k2, k3 (100 + 50 + 350); then ":outer" StartEnd: k4, k5 (50 + 100).
  EXPECT_EQ(S(At(r, 2, "NVTX Range")), ":outer");
  EXPECT_EQ(S(At(r, 2, "Style")), "PushPop");
  EXPECT_EQ(I(At(r, 2, "Kern Inst")), 3);
  EXPECT_EQ(I(At(r, 2, "Total Time")), 500);
  EXPECT_EQ(S(At(r, 2, "Kernel Name")), "gemm<float>");
  EXPECT_EQ(S(At(r, 3, "Style")), "StartEnd");
  EXPECT_EQ(I(At(r, 3, "Kern Inst")), 2);
  EXPECT_EQ(I(At(r, 3, "Total Time")), 150);
  // "dom:inner" holds k1 too (every enclosing range, not only the innermost).
  EXPECT_EQ(S(At(r, 4, "NVTX Range")), "dom:inner");
  EXPECT_EQ(I(At(r, 4, "Total Time")), 100);
}

TEST(ReportRules, GpuSumsAndTrace) {
  Db d;
  Scene(&d);
  Report gb = RunOn(d, "cuda_gpu_kern_gb_sum");
  EXPECT_EQ(gb.title, "CUDA GPU Kernel/Grid/Block Summary");
  ASSERT_EQ(gb.rows.size(), 3u);
  // gemm grid 4: k3 350; gemm grid 2: k1, k2, k6, k7 = 100 + 50 + 120 + 10 = 280; node_k 150.
  EXPECT_EQ(I(At(gb, 0, "Total Time")), 350);
  EXPECT_EQ(S(At(gb, 0, "GridXYZ")), "   4    1    1");
  EXPECT_EQ(S(At(gb, 0, "BlockXYZ")), " 128    1    1");
  EXPECT_EQ(I(At(gb, 1, "Total Time")), 280);
  EXPECT_EQ(I(At(gb, 1, "Instances")), 4);
  EXPECT_DOUBLE_EQ(D(At(gb, 1, "Med")), 75.0);  // 10, 50, 100, 120

  Report sum = RunOn(d, "cuda_gpu_sum");
  EXPECT_EQ(sum.title, "CUDA GPU Summary (Kernels/MemOps)");
  ASSERT_EQ(sum.rows.size(), 3u);  // gemm 630, node_k 150, the copy 40: 820
  EXPECT_EQ(S(At(sum, 0, "Category")), "CUDA_KERNEL");
  EXPECT_EQ(I(At(sum, 0, "Total Time")), 630);
  EXPECT_DOUBLE_EQ(D(At(sum, 0, "Time")), 76.8);
  EXPECT_EQ(S(At(sum, 2, "Category")), "MEMORY_OPER");
  EXPECT_EQ(S(At(sum, 2, "Operation")), "[CUDA memcpy Host-to-Device]");
  EXPECT_DOUBLE_EQ(D(At(sum, 2, "Time")), 4.9);

  // k1 with 512 bytes of static and 2048 of dynamic shared memory per block.
  d.Exec("UPDATE kernels SET shared_memory = 2560, static_shared_memory = 512, dynamic_shared_memory = 2048 "
         "WHERE id = 1");
  Report t = RunOn(d, "cuda_gpu_trace", KernelNameForm::kMangled);
  EXPECT_EQ(t.title, "CUDA GPU Trace");
  EXPECT_EQ(Headers(t), (std::vector<std::string>{"Start", "Duration", "CorrId", "GrdX", "GrdY", "GrdZ", "BlkX",
                                                  "BlkY", "BlkZ", "Reg/Trd", "StcSMem", "DymSMem", "Bytes",
                                                  "Throughput", "SrcMemKd", "DstMemKd", "Device", "Ctx", "GreenCtx",
                                                  "Strm", "Name"}));
  ASSERT_EQ(t.rows.size(), 8u);
  std::vector<int64_t> starts;
  for (size_t i = 0; i < t.rows.size(); ++i) starts.push_back(I(At(t, i, "Start")));
  EXPECT_EQ(starts, (std::vector<int64_t>{250, 400, 550, 660, 850, 900, 1200, 1400}));
  EXPECT_EQ(S(At(t, 0, "Name")), "_Z4gemmIfEvPf");
  EXPECT_EQ(S(At(t, 0, "Device")), "NVIDIA H200 (0)");
  EXPECT_TRUE(Null(At(t, 0, "Bytes")));
  EXPECT_EQ(I(At(t, 0, "StcSMem")), 512);
  EXPECT_EQ(I(At(t, 0, "DymSMem")), 2048);
  EXPECT_TRUE(Null(At(t, 3, "StcSMem")));
  EXPECT_TRUE(Null(At(t, 3, "DymSMem")));
  // The copy: 1000 bytes in 40 ns: 1000 * (1000000000 / 40) = 25,000,000,000 B/s.
  EXPECT_EQ(S(At(t, 3, "Name")), "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(I(At(t, 3, "Bytes")), 1000);
  EXPECT_EQ(I(At(t, 3, "Throughput")), 25000000000);
  EXPECT_EQ(S(At(t, 3, "SrcMemKd")), "Pageable");
  EXPECT_EQ(S(At(t, 3, "DstMemKd")), "Device");
  EXPECT_TRUE(Null(At(t, 3, "GrdX")));
}

TEST(ReportRules, KernelSumOrdersByTotalThenInstancesThenName) {
  Db d;
  Scene(&d);
  // Two kernels of equal total time: the one with fewer instances first; equal
  // in both, by name.
  d.Exec("INSERT INTO strings VALUES (40, 'b_two'), (41, 'a_two'), (42, 'z_one')");
  d.Exec("INSERT INTO kernels (id, process, device, start_ns, end_ns, name, mangled_name, short_name) VALUES "
         "(20, 1, 0, 0, 5, 40, 40, 40), (21, 1, 0, 0, 5, 40, 40, 40), (22, 1, 0, 0, 5, 41, 41, 41), "
         "(23, 1, 0, 0, 5, 41, 41, 41), (24, 1, 0, 0, 10, 42, 42, 42)");
  Report r = RunOn(d, "cuda_gpu_kern_sum");
  std::vector<std::string> names;
  for (size_t i = 0; i < r.rows.size(); ++i) names.push_back(S(At(r, i, "Name")));
  EXPECT_EQ(names, (std::vector<std::string>{"void gemm<float>(float*)", "node_k", "z_one", "a_two", "b_two"}));
}

TEST(ReportRules, ReportArgumentsAsNsysWritesThem) {
  tools::ReportRequest q;
  auto known = tools::ParseReportRequest("cuda_gpu_kern_sum:base", &q);
  ASSERT_TRUE(known.ok());
  EXPECT_TRUE(*known);
  EXPECT_EQ(q.name, "cuda_gpu_kern_sum");
  EXPECT_TRUE(q.has_form);
  EXPECT_EQ(q.form, KernelNameForm::kBase);
  known = tools::ParseReportRequest("nvtx_kern_sum:mangled", &q);
  ASSERT_TRUE(known.ok());
  EXPECT_EQ(q.form, KernelNameForm::kMangled);
  known = tools::ParseReportRequest("kernels", &q);
  ASSERT_TRUE(known.ok());
  EXPECT_FALSE(*known);
  EXPECT_FALSE(tools::ParseReportRequest("nvtx_sum:base", &q).ok());
  EXPECT_FALSE(tools::ParseReportRequest("cuda_gpu_trace:short", &q).ok());
}

TEST(ReportRules, TextTablesCutLongNamesCsvAndJsonKeepThem) {
  Report r{"cuda_gpu_kern_sum", "CUDA GPU Kernel Summary",
           {{"Total Time", tools::ReportColumn::Kind::kTime}, {"Name", tools::ReportColumn::Kind::kText}},
           {{int64_t{1234567}, std::string(300, 'x')}}};
  std::string text = tools::RenderReports({r}, tools::TableFormat::kText, {tools::TimeUnit::kNs, 40});
  EXPECT_NE(text.find(" ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):"), std::string::npos) << text;
  EXPECT_NE(text.find("1,234,567"), std::string::npos) << text;
  EXPECT_NE(text.find(std::string(39, 'x') + "\xE2\x80\xA6"), std::string::npos) << text;
  EXPECT_EQ(text.find(std::string(40, 'x')), std::string::npos) << text;
  std::string unlimited = tools::RenderReports({r}, tools::TableFormat::kText, {tools::TimeUnit::kNs, 0});
  EXPECT_NE(unlimited.find(std::string(300, 'x')), std::string::npos);
  std::string csv = tools::RenderReports({r}, tools::TableFormat::kCsv, {tools::TimeUnit::kNs, 40});
  EXPECT_EQ(csv, "Total Time (ns),Name\n1234567," + std::string(300, 'x') + "\n");
  std::string json = tools::RenderReports({r}, tools::TableFormat::kJson, {tools::TimeUnit::kNs, 40});
  EXPECT_NE(json.find("\"" + std::string(300, 'x') + "\""), std::string::npos);
}

}  // namespace
}  // namespace gpucap::testing
