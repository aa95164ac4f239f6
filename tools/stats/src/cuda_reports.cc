// The CUDA reports of nsys stats over an export. nsys reads its own tables
// (CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME); the export's
// kernels, memcpys, memsets and api_calls hold the same records as the
// trace shows them, and an op's launching call is its launch_id (nsys joins
// on the correlation id within the process, which is what launch_id is).
#include <algorithm>
#include <map>
#include <tuple>

#include "report_queries.h"
#include "report_summary.h"

namespace gpucap::tools::reports {
namespace {

std::string KernelName(KernelNameForm names) { return "JOIN strings kn ON kn.id = k." + KernelNameColumn(names); }

// Memory kinds of a memset: the export has them in Kineto's name only,
// "Memset (Device)".
constexpr const char* kMemsetKindSql =
    "CASE WHEN instr(s.value, '(') > 0 THEN rtrim(substr(s.value, instr(s.value, '(') + 1), ')') END";

}  // namespace

Result<Report> CudaApiSum(sqlite3* db) {
  auto groups = GroupSamples(db, "SELECT s.value, a.dur_ns FROM api_calls a JOIN strings s ON s.id = a.name", 1);
  if (!groups.ok()) return groups.status();
  // The versioned entry points fold into their name, as nsys shows them.
  std::map<std::string, Group> by_name;
  for (Group& g : *groups) {
    std::string name = ApiName(std::get<std::string>(g.keys[0]));
    Group& into = by_name[name];
    into.keys = {name};
    into.samples.insert(into.samples.end(), g.samples.begin(), g.samples.end());
  }
  std::vector<Group> merged;
  for (auto& [name, g] : by_name) merged.push_back(std::move(g));
  return TimeSummary("cuda_api_sum", "CUDA API Summary", "Num Calls", {{"Name", Kind::kText}}, merged);
}

Result<Report> CudaGpuKernSum(sqlite3* db, KernelNameForm names) {
  auto groups = GroupSamples(db, "SELECT kn.value, k.dur_ns FROM kernels k " + KernelName(names), 1);
  if (!groups.ok()) return groups.status();
  return TimeSummary("cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", "Instances", {{"Name", Kind::kText}}, *groups);
}

Result<Report> CudaGpuKernGbSum(sqlite3* db, KernelNameForm names) {
  // Grouped by name, grid and block; GridXYZ and BlockXYZ as nsys prints
  // them, printf('%4d %4d %4d').
  auto groups = GroupSamples(db,
                             "SELECT printf('%4d %4d %4d', k.grid_x, k.grid_y, k.grid_z), "
                             "printf('%4d %4d %4d', k.block_x, k.block_y, k.block_z), kn.value, k.dur_ns "
                             "FROM kernels k " + KernelName(names),
                             3);
  if (!groups.ok()) return groups.status();
  return TimeSummary("cuda_gpu_kern_gb_sum", "CUDA GPU Kernel/Grid/Block Summary", "Instances",
                     {{"GridXYZ", Kind::kText}, {"BlockXYZ", Kind::kText}, {"Name", Kind::kText}}, *groups);
}

Result<Report> CudaGpuMemTimeSum(sqlite3* db) {
  auto groups = GroupSamples(db, std::string("SELECT ") + kCopyOperationSql + ", dur_ns FROM memcpys "
                                 "UNION ALL SELECT '[CUDA memset]', dur_ns FROM memsets", 1);
  if (!groups.ok()) return groups.status();
  return TimeSummary("cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)", "Count",
                     {{"Operation", Kind::kText}}, *groups);
}

Result<Report> CudaGpuMemSizeSum(sqlite3* db) {
  // nsys: Total, Count, Avg, Med, Min, Max, StdDev of the bytes (none of
  // them rounded), Operation; largest total first.
  auto groups = GroupSamples(db, std::string("SELECT ") + kCopyOperationSql + ", bytes FROM memcpys "
                                 "WHERE bytes IS NOT NULL UNION ALL SELECT '[CUDA memset]', bytes FROM memsets "
                                 "WHERE bytes IS NOT NULL", 1);
  if (!groups.ok()) return groups.status();
  Report r{"cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)",
           {{"Total", Kind::kMegabytes}, {"Count", Kind::kCount}}, {}};
  AddStatColumns(&r.columns, "", Kind::kMegabytes);
  r.columns.push_back({"Operation", Kind::kText});
  std::vector<std::pair<Summary, const Group*>> rows;
  for (const Group& g : *groups) rows.emplace_back(Summarise(g.samples, false), &g);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.first.total != b.first.total) return a.first.total > b.first.total;
    return CellText(a.second->keys[0]) < CellText(b.second->keys[0]);
  });
  for (const auto& [s, g] : rows) {
    std::vector<ReportCell> row = {s.total, s.count};
    AddStatCells(&row, s);
    row.push_back(g->keys[0]);
    r.rows.push_back(std::move(row));
  }
  return r;
}

Result<Report> CudaGpuSum(sqlite3* db, KernelNameForm names) {
  // Kernels and memory operations together, grouped by name alone (nsys
  // groups by name and shows the category of the group's first row).
  auto groups = GroupSamples(db,
                             "SELECT kn.value, 'CUDA_KERNEL', k.dur_ns FROM kernels k " + KernelName(names) +
                                 std::string(" UNION ALL SELECT ") + kCopyOperationSql +
                                 ", 'MEMORY_OPER', dur_ns FROM memcpys "
                                 "UNION ALL SELECT '[CUDA memset]', 'MEMORY_OPER', dur_ns FROM memsets",
                             2);
  if (!groups.ok()) return groups.status();
  std::vector<Group> by_name;
  std::map<std::string, size_t> index;
  for (Group& g : *groups) {
    auto [it, added] = index.try_emplace(CellText(g.keys[0]), by_name.size());
    if (added) {
      by_name.push_back({{g.keys[1], g.keys[0]}, {}});  // Category, then Operation
    }
    Group& into = by_name[it->second];
    into.samples.insert(into.samples.end(), g.samples.begin(), g.samples.end());
  }
  return TimeSummary("cuda_gpu_sum", "CUDA GPU Summary (Kernels/MemOps)", "Instances",
                     {{"Category", Kind::kText}, {"Operation", Kind::kText}}, by_name);
}

Result<Report> CudaGpuTrace(sqlite3* db, KernelNameForm names) {
  // One row per kernel, copy and memset, by start time. Throughput is
  // nsys's bytes * (1000000000 / duration) in SQLite's integer arithmetic
  // (NULL for an op of no duration). StcSMem and DymSMem are the kernel's
  // static and dynamic shared memory per block (CUPTI's staticSharedMemory
  // and dynamicSharedMemory, as nsys's script reads them); there are no
  // green contexts.
  const std::string device = "COALESCE(dv.name, '') || ' (' || o.device || ')'";
  const std::string devices = " LEFT JOIN devices dv ON dv.process = o.process AND dv.device = o.device";
  std::string sql =
      "SELECT o.start_ns, o.end_ns - o.start_ns, o.correlation, o.grid_x, o.grid_y, o.grid_z, o.block_x, o.block_y, "
      "o.block_z, o.registers_per_thread, o.static_shared_memory, o.dynamic_shared_memory, NULL, NULL, NULL, NULL, " +
      device +
      ", o.context, NULL, o.stream, kn.value FROM kernels o JOIN strings kn ON kn.id = o." + KernelNameColumn(names) +
      devices +
      " UNION ALL SELECT o.start_ns, o.end_ns - o.start_ns, o.correlation, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
      "NULL, NULL, o.bytes, o.bytes * (1000000000 / (o.end_ns - o.start_ns)), o.src_kind, o.dst_kind, " + device +
      ", o.context, NULL, o.stream, " + kCopyOperationSql + " FROM memcpys o" + devices +
      " UNION ALL SELECT o.start_ns, o.end_ns - o.start_ns, o.correlation, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
      "NULL, NULL, o.bytes, o.bytes * (1000000000 / (o.end_ns - o.start_ns)), " + kMemsetKindSql + ", NULL, " +
      device + ", o.context, NULL, o.stream, '[CUDA memset]' FROM memsets o JOIN strings s ON s.id = o.name" + devices +
      " ORDER BY 1, 3, 21";
  Report r{"cuda_gpu_trace", "CUDA GPU Trace",
           {{"Start", Kind::kTime},        {"Duration", Kind::kTime},  {"CorrId", Kind::kInt},
            {"GrdX", Kind::kInt},          {"GrdY", Kind::kInt},       {"GrdZ", Kind::kInt},
            {"BlkX", Kind::kInt},          {"BlkY", Kind::kInt},       {"BlkZ", Kind::kInt},
            {"Reg/Trd", Kind::kInt},       {"StcSMem", Kind::kMegabytes}, {"DymSMem", Kind::kMegabytes},
            {"Bytes", Kind::kMegabytes},   {"Throughput", Kind::kMegabytesPerSecond},
            {"SrcMemKd", Kind::kText},     {"DstMemKd", Kind::kText},  {"Device", Kind::kText},
            {"Ctx", Kind::kInt},           {"GreenCtx", Kind::kInt},   {"Strm", Kind::kInt},
            {"Name", Kind::kText}},
           {}};
  Status s = ForEachRow(db, sql, [&](sqlite3_stmt* st) {
    std::vector<ReportCell> row;
    for (int c = 0; c < 21; ++c) row.push_back(Cell(st, c));
    r.rows.push_back(std::move(row));
  });
  if (!s.ok()) return s;
  return r;
}

Result<Report> CudaKernExecSum(sqlite3* db, KernelNameForm names) {
  // Per (PID, TID, device, API, kernel): T, the launch call's start to the
  // later of its end and the kernel's end; A, the call; Q, the call's end
  // to the kernel's start, only where that is not negative (nsys's script:
  // iif(k.start - r.end >= 0, k.start - r.end, NULL); QCount counts them
  // and the Q statistics are over them alone, NULL when there are none);
  // K, the kernel. Rows by TAvg, largest first.
  std::string sql =
      "SELECT p.pid, k.launch_tid, k.device, sa.value, kn.value, a.start_ns, a.end_ns, k.start_ns, k.end_ns "
      "FROM kernels k JOIN api_calls a ON a.id = k.launch_id JOIN processes p ON p.id = k.process "
      "JOIN strings sa ON sa.id = a.name " + KernelName(names);
  using Key = std::tuple<int64_t, int64_t, int64_t, std::string, std::string>;
  struct Samples {
    std::vector<int64_t> t, a, q, k;
  };
  std::map<Key, Samples> groups;
  Status s = ForEachRow(db, sql, [&](sqlite3_stmt* st) {
    Key key{sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
            ApiName(Text(st, 3)), Text(st, 4)};
    int64_t api_start = sqlite3_column_int64(st, 5), api_end = sqlite3_column_int64(st, 6);
    int64_t kernel_start = sqlite3_column_int64(st, 7), kernel_end = sqlite3_column_int64(st, 8);
    Samples& g = groups[key];
    g.t.push_back(std::max(api_end, kernel_end) - api_start);
    g.a.push_back(api_end - api_start);
    if (kernel_start - api_end >= 0) g.q.push_back(kernel_start - api_end);
    g.k.push_back(kernel_end - kernel_start);
  });
  if (!s.ok()) return s;
  Report r{"cuda_kern_exec_sum", "CUDA Kernel Launch & Exec Time Summary",
           {{"PID", Kind::kInt}, {"TID", Kind::kInt}, {"DevId", Kind::kInt}, {"Count", Kind::kCount},
            {"QCount", Kind::kCount}},
           {}};
  for (const char* m : {"T", "A", "Q", "K"}) AddStatColumns(&r.columns, m, Kind::kTime);
  r.columns.push_back({"API Name", Kind::kText});
  r.columns.push_back({"Kernel Name", Kind::kText});
  std::vector<std::pair<double, std::vector<ReportCell>>> rows;
  for (const auto& [key, g] : groups) {
    const auto& [pid, tid, device, api, kernel] = key;
    std::vector<ReportCell> row = {pid, tid, device, static_cast<int64_t>(g.k.size()),
                                   static_cast<int64_t>(g.q.size())};
    Summary t = Summarise(g.t);
    for (const std::vector<int64_t>* v : {&g.t, &g.a, &g.q, &g.k}) AddStatCells(&row, Summarise(*v));
    row.push_back(api);
    row.push_back(kernel);
    rows.emplace_back(t.avg, std::move(row));
  }
  // Equal averages keep the key order (the map's).
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [avg, row] : rows) r.rows.push_back(std::move(row));
  return r;
}

}  // namespace gpucap::tools::reports
