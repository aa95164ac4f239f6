#include "gpucap/tools/stats/stats_reports.h"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "gpucap/tools/export/sqlite_export.h"
#include "gpucap/tools/json/json_out.h"

namespace gpucap::tools {
namespace {

using Kind = ReportColumn::Kind;

constexpr std::string_view kReports[] = {"cuda_gpu_kern_sum",     "cuda_api_sum",  "cuda_gpu_mem_time_sum",
                                         "cuda_gpu_mem_size_sum", "nvtx_sum",      "nvtx_gpu_proj_sum",
                                         "cuda_kern_exec_sum"};

// One group's samples of each value column, and its key cells.
struct Group {
  std::vector<ReportCell> keys;
  std::vector<std::vector<int64_t>> values;
};

// Runs `sql`, whose first `keys` columns name a group and the next `values`
// are one sample each of that group's measures.
Result<std::vector<Group>> Groups(sqlite3* db, const std::string& sql, int keys, int values) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    return Status::Internal(std::string("report query: ") + sqlite3_errmsg(db));
  }
  std::map<std::string, size_t> index;
  std::vector<Group> groups;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    std::string key;
    std::vector<ReportCell> cells;
    for (int i = 0; i < keys; ++i) {
      if (sqlite3_column_type(st, i) == SQLITE_INTEGER) {
        cells.emplace_back(static_cast<int64_t>(sqlite3_column_int64(st, i)));
        key += std::to_string(std::get<int64_t>(cells.back()));
      } else {
        const unsigned char* t = sqlite3_column_text(st, i);
        cells.emplace_back(std::string(t ? reinterpret_cast<const char*>(t) : ""));
        key += std::get<std::string>(cells.back());
      }
      key.push_back('\0');
    }
    auto [it, added] = index.try_emplace(key, groups.size());
    if (added) groups.push_back({std::move(cells), std::vector<std::vector<int64_t>>(values)});
    Group& g = groups[it->second];
    for (int v = 0; v < values; ++v) g.values[v].push_back(sqlite3_column_int64(st, keys + v));
  }
  std::string error = rc == SQLITE_DONE ? "" : sqlite3_errmsg(db);
  sqlite3_finalize(st);
  if (!error.empty()) return Status::Internal("report query: " + error);
  return groups;
}

struct Summary {
  int64_t count = 0, total = 0, min = 0, max = 0;
  double avg = 0, median = 0, stddev = 0;  // sample standard deviation, as nsys
};

Summary Summarise(std::vector<int64_t> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.count = static_cast<int64_t>(v.size());
  for (int64_t x : v) s.total += x;
  s.min = v.front();
  s.max = v.back();
  s.avg = static_cast<double>(s.total) / static_cast<double>(s.count);
  size_t mid = v.size() / 2;
  s.median = v.size() % 2 ? static_cast<double>(v[mid]) : (static_cast<double>(v[mid - 1]) + static_cast<double>(v[mid])) / 2;
  if (v.size() > 1) {
    double sum = 0;
    for (int64_t x : v) sum += (static_cast<double>(x) - s.avg) * (static_cast<double>(x) - s.avg);
    s.stddev = std::sqrt(sum / static_cast<double>(v.size() - 1));
  }
  return s;
}

// Avg, Med, Min, Max, StdDev of one measure, with a prefix ("Proj ", "Q").
void AddStatColumns(std::vector<ReportColumn>* cols, const std::string& prefix, Kind kind) {
  for (const char* h : {"Avg", "Med", "Min", "Max", "StdDev"}) cols->push_back({prefix + h, kind});
}
void AddStatCells(std::vector<ReportCell>* row, const Summary& s, double scale = 1) {
  row->push_back(s.avg / scale);
  row->push_back(s.median / scale);
  if (scale == 1) {
    row->push_back(s.min);
    row->push_back(s.max);
  } else {
    row->push_back(static_cast<double>(s.min) / scale);
    row->push_back(static_cast<double>(s.max) / scale);
  }
  row->push_back(s.stddev / scale);
}

// Time (%), Total Time, Instances, Avg ... StdDev, then the keys: the
// shape of nsys's *_sum reports.
Report TimeSummary(std::string name, std::string title, std::vector<Group> groups, const char* count_header,
                   std::vector<ReportColumn> key_columns) {
  Report r{std::move(name), std::move(title), {}, {}};
  r.columns = {{"Time", Kind::kPercent}, {"Total Time", Kind::kTime}, {count_header, Kind::kCount}};
  AddStatColumns(&r.columns, "", Kind::kTime);
  r.columns.insert(r.columns.end(), key_columns.begin(), key_columns.end());
  std::vector<std::pair<Summary, const Group*>> rows;
  int64_t whole = 0;
  for (const Group& g : groups) {
    rows.emplace_back(Summarise(g.values[0]), &g);
    whole += rows.back().first.total;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first.total > b.first.total; });
  for (const auto& [s, g] : rows) {
    std::vector<ReportCell> row = {whole ? 100.0 * static_cast<double>(s.total) / static_cast<double>(whole) : 0.0,
                                   s.total, s.count};
    AddStatCells(&row, s);
    row.insert(row.end(), g->keys.begin(), g->keys.end());
    r.rows.push_back(std::move(row));
  }
  return r;
}

// nsys's names for copy operations.
constexpr const char* kCopyOperation =
    "CASE copy_kind WHEN 'HtoD' THEN '[CUDA memcpy Host-to-Device]' WHEN 'DtoH' THEN '[CUDA memcpy Device-to-Host]' "
    "WHEN 'DtoD' THEN '[CUDA memcpy Device-to-Device]' WHEN 'HtoH' THEN '[CUDA memcpy Host-to-Host]' "
    "WHEN 'PtoP' THEN '[CUDA memcpy Peer-to-Peer]' ELSE '[CUDA memcpy ' || COALESCE(copy_kind, '?') || ']' END";

std::string KernelNameColumn(KernelNameForm f) {
  switch (f) {
    case KernelNameForm::kBase: return "short_name";
    case KernelNameForm::kMangled: return "mangled_name";
    default: return "name";
  }
}

Result<Report> ProjectionReport(sqlite3* db) {
  // Per range instance: the span from the first start to the last end of
  // the GPU ops launched on its thread while it was open.
  std::string sql =
      "WITH ops AS (SELECT process, launch_tid, launch_start_ns, start_ns, end_ns FROM kernels "
      "WHERE launch_tid IS NOT NULL UNION ALL SELECT process, launch_tid, launch_start_ns, start_ns, end_ns "
      "FROM memcpys WHERE launch_tid IS NOT NULL UNION ALL SELECT process, launch_tid, launch_start_ns, start_ns, "
      "end_ns FROM memsets WHERE launch_tid IS NOT NULL) "
      "SELECT COALESCE(d.value || ':', '') || s.value, 'PushPop', MAX(o.end_ns) - MIN(o.start_ns), r.dur_ns, "
      "COUNT(*), r.depth FROM nvtx_ranges r JOIN strings s ON s.id = r.name LEFT JOIN strings d ON d.id = r.domain "
      "JOIN ops o ON o.process = r.process AND o.launch_tid = r.tid AND o.launch_start_ns >= r.start_ns "
      "AND o.launch_start_ns < r.end_ns WHERE r.kind = 'push_pop' GROUP BY r.id";
  auto groups = Groups(db, sql, 2, 4);
  if (!groups.ok()) return groups.status();
  Report r{"nvtx_gpu_proj_sum", "NVTX Range Projection onto the GPU (the span of the GPU ops each range launched)",
           {{"Range", Kind::kText}, {"Style", Kind::kText}, {"Total Proj Time", Kind::kTime},
            {"Total Range Time", Kind::kTime}, {"Range Instances", Kind::kCount}},
           {}};
  AddStatColumns(&r.columns, "Proj ", Kind::kTime);
  r.columns.push_back({"Total GPU Ops", Kind::kCount});
  r.columns.push_back({"Avg Range Lvl", Kind::kPercent});
  std::vector<std::pair<Summary, const Group*>> rows;
  for (const Group& g : *groups) rows.emplace_back(Summarise(g.values[0]), &g);
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first.total > b.first.total; });
  for (const auto& [s, g] : rows) {
    int64_t range_ns = 0, ops = 0, levels = 0;
    for (int64_t v : g->values[1]) range_ns += v;
    for (int64_t v : g->values[2]) ops += v;
    for (int64_t v : g->values[3]) levels += v;
    std::vector<ReportCell> row = {g->keys[0], g->keys[1], s.total, range_ns, s.count};
    AddStatCells(&row, s);
    row.push_back(ops);
    row.push_back(static_cast<double>(levels) / static_cast<double>(s.count));
    r.rows.push_back(std::move(row));
  }
  return r;
}

Result<Report> KernelExecReport(sqlite3* db, KernelNameForm names) {
  std::string sql =
      "SELECT p.pid, k.launch_tid, k.device, sa.value, sk.value, k.end_ns - a.start_ns, a.dur_ns, "
      "k.start_ns - a.end_ns, k.dur_ns FROM kernels k JOIN api_calls a ON a.id = k.launch_id "
      "JOIN processes p ON p.id = k.process JOIN strings sa ON sa.id = a.name JOIN strings sk ON sk.id = k." +
      KernelNameColumn(names);
  auto groups = Groups(db, sql, 5, 4);
  if (!groups.ok()) return groups.status();
  Report r{"cuda_kern_exec_sum",
           "CUDA Kernel Launch & Exec Time Summary (T: API start to kernel end, A: API call, Q: API end to kernel "
           "start, K: kernel)",
           {{"PID", Kind::kInt}, {"TID", Kind::kInt}, {"DevId", Kind::kInt}, {"Count", Kind::kCount},
            {"QCount", Kind::kCount}},
           {}};
  for (const char* m : {"T", "A", "Q", "K"}) AddStatColumns(&r.columns, m, Kind::kTime);
  r.columns.push_back({"API Name", Kind::kText});
  r.columns.push_back({"Kernel Name", Kind::kText});
  std::vector<std::pair<int64_t, std::vector<ReportCell>>> rows;
  for (Group& g : *groups) {
    // A kernel that starts before its launch call returns waited nothing.
    int64_t queued = 0;
    for (int64_t& q : g.values[2]) {
      queued += q > 0;
      q = std::max<int64_t>(q, 0);
    }
    std::vector<ReportCell> row = {g.keys[0], g.keys[1], g.keys[2], static_cast<int64_t>(g.values[0].size()), queued};
    Summary kernel;
    for (int m = 0; m < 4; ++m) {
      Summary s = Summarise(g.values[m]);
      AddStatCells(&row, s);
      if (m == 3) kernel = s;
    }
    row.push_back(g.keys[3]);
    row.push_back(g.keys[4]);
    rows.emplace_back(kernel.total, std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [total, row] : rows) r.rows.push_back(std::move(row));
  return r;
}

Result<Report> SizeReport(sqlite3* db) {
  std::string sql = std::string("SELECT ") + kCopyOperation + ", bytes FROM memcpys WHERE bytes IS NOT NULL "
                    "UNION ALL SELECT '[CUDA memset]', bytes FROM memsets WHERE bytes IS NOT NULL";
  auto groups = Groups(db, sql, 1, 1);
  if (!groups.ok()) return groups.status();
  Report r{"cuda_gpu_mem_size_sum", "CUDA GPU Memory Operations by Size (MB = 10^6 bytes)",
           {{"Total", Kind::kMegabytes}, {"Count", Kind::kCount}}, {}};
  AddStatColumns(&r.columns, "", Kind::kMegabytes);
  r.columns.push_back({"Operation", Kind::kText});
  std::vector<std::pair<Summary, const Group*>> rows;
  for (const Group& g : *groups) rows.emplace_back(Summarise(g.values[0]), &g);
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first.total > b.first.total; });
  for (const auto& [s, g] : rows) {
    std::vector<ReportCell> row = {static_cast<double>(s.total) / 1e6, s.count};
    AddStatCells(&row, s, 1e6);
    row.push_back(g->keys[0]);
    r.rows.push_back(std::move(row));
  }
  return r;
}

}  // namespace

std::span<const std::string_view> ReportNames() { return kReports; }

bool IsReportName(std::string_view name) {
  return std::find(std::begin(kReports), std::end(kReports), name) != std::end(kReports);
}

Result<KernelNameForm> ParseKernelNameForm(std::string_view name) {
  if (name == "demangled") return KernelNameForm::kDemangled;
  if (name == "base") return KernelNameForm::kBase;
  if (name == "mangled") return KernelNameForm::kMangled;
  return Status::InvalidArgument("--names '" + std::string(name) + "': expected demangled, base or mangled");
}

Result<TimeUnit> ParseTimeUnit(std::string_view name) {
  if (name == "ns" || name == "nsec") return TimeUnit::kNs;
  if (name == "us" || name == "usec") return TimeUnit::kUs;
  if (name == "ms" || name == "msec") return TimeUnit::kMs;
  if (name == "s" || name == "sec") return TimeUnit::kS;
  return Status::InvalidArgument("--timeunit '" + std::string(name) + "': expected ns, us, ms or s");
}

Result<Report> RunReport(sqlite3* db, std::string_view name, KernelNameForm names) {
  if (name == "cuda_gpu_kern_sum") {
    auto g = Groups(db, "SELECT s.value, k.dur_ns FROM kernels k JOIN strings s ON s.id = k." + KernelNameColumn(names), 1, 1);
    if (!g.ok()) return g.status();
    return TimeSummary("cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", std::move(g).value(), "Instances",
                       {{"Name", Kind::kText}});
  }
  if (name == "cuda_api_sum") {
    auto g = Groups(db, "SELECT s.value, a.dur_ns FROM api_calls a JOIN strings s ON s.id = a.name", 1, 1);
    if (!g.ok()) return g.status();
    return TimeSummary("cuda_api_sum", "CUDA API Summary", std::move(g).value(), "Num Calls", {{"Name", Kind::kText}});
  }
  if (name == "cuda_gpu_mem_time_sum") {
    auto g = Groups(db, std::string("SELECT ") + kCopyOperation + ", dur_ns FROM memcpys "
                        "UNION ALL SELECT '[CUDA memset]', dur_ns FROM memsets", 1, 1);
    if (!g.ok()) return g.status();
    return TimeSummary("cuda_gpu_mem_time_sum", "CUDA GPU Memory Operations by Time", std::move(g).value(), "Count",
                       {{"Operation", Kind::kText}});
  }
  if (name == "cuda_gpu_mem_size_sum") return SizeReport(db);
  if (name == "nvtx_sum") {
    auto g = Groups(db,
                    "SELECT CASE r.kind WHEN 'push_pop' THEN 'PushPop' ELSE 'StartEnd' END, "
                    "COALESCE(d.value || ':', '') || s.value, r.dur_ns FROM nvtx_ranges r "
                    "JOIN strings s ON s.id = r.name LEFT JOIN strings d ON d.id = r.domain WHERE r.kind != 'mark'",
                    2, 1);
    if (!g.ok()) return g.status();
    return TimeSummary("nvtx_sum", "NVTX Range Summary", std::move(g).value(), "Instances",
                       {{"Style", Kind::kText}, {"Range", Kind::kText}});
  }
  if (name == "nvtx_gpu_proj_sum") return ProjectionReport(db);
  if (name == "cuda_kern_exec_sum") return KernelExecReport(db, names);
  std::string known;
  for (std::string_view n : kReports) known += (known.empty() ? "" : ", ") + std::string(n);
  return Status::InvalidArgument("--report '" + std::string(name) + "': expected one of " + known +
                                 " (or kernels, copies, apis, ranges, streams)");
}

Result<std::vector<Report>> CaptureReports(const builder::CaptureIndex& index, const builder::BuildOptions& options,
                                           const std::vector<std::string>& names, KernelNameForm kernel_names,
                                           std::vector<std::string>* warnings) {
  sqlite3* db = nullptr;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
    sqlite3_close(db);
    return Status::ResourceExhausted("cannot open a database in memory");
  }
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> closer(db, sqlite3_close);
  ExportOptions o;
  o.build = options;
  const builder::CaptureIndex* captures[] = {&index};
  auto exported = ExportCaptures(db, captures, o);
  if (!exported.ok()) return exported.status();
  if (warnings != nullptr) *warnings = exported->warnings;
  std::vector<Report> reports;
  for (const std::string& name : names) {
    auto r = RunReport(db, name, kernel_names);
    if (!r.ok()) return r.status();
    reports.push_back(std::move(r).value());
  }
  return reports;
}

namespace {

std::string UnitName(TimeUnit u) {
  switch (u) {
    case TimeUnit::kUs: return "us";
    case TimeUnit::kMs: return "ms";
    case TimeUnit::kS: return "s";
    default: return "ns";
  }
}

std::string Header(const ReportColumn& c, TimeUnit u) {
  switch (c.kind) {
    case Kind::kTime: return c.header + " (" + UnitName(u) + ")";
    case Kind::kMegabytes: return c.header + " (MB)";
    case Kind::kPercent: return c.header == "Time" ? "Time (%)" : c.header;
    default: return c.header;
  }
}

// A cell as text: times scaled to the unit (ns keep integers as integers
// and give averages one decimal), percentages with one decimal.
std::string Format(const ReportCell& cell, const ReportColumn& c, TimeUnit u) {
  if (const std::string* s = std::get_if<std::string>(&cell)) return *s;
  char buf[64];
  if (c.kind == Kind::kTime) {
    static constexpr std::array<double, 4> kScale = {1, 1e3, 1e6, 1e9};
    static constexpr std::array<int, 4> kDecimals = {1, 3, 6, 9};
    size_t i = static_cast<size_t>(u);
    if (u == TimeUnit::kNs && std::holds_alternative<int64_t>(cell)) return std::to_string(std::get<int64_t>(cell));
    double v = std::holds_alternative<int64_t>(cell) ? static_cast<double>(std::get<int64_t>(cell)) : std::get<double>(cell);
    std::snprintf(buf, sizeof(buf), "%.*f", kDecimals[i], v / kScale[i]);
    return buf;
  }
  if (const int64_t* v = std::get_if<int64_t>(&cell)) return std::to_string(*v);
  std::snprintf(buf, sizeof(buf), c.kind == Kind::kMegabytes ? "%.6f" : "%.1f", std::get<double>(cell));
  return buf;
}

std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + "\"";
}

}  // namespace

std::string RenderReports(const std::vector<Report>& reports, TableFormat format, TimeUnit unit) {
  std::string out;
  if (format == TableFormat::kJson) {
    JsonOut j;
    j.BeginObject().Key("time_unit").String(UnitName(unit)).Key("reports").BeginObject();
    for (const Report& r : reports) {
      j.Key(r.name).BeginArray();
      for (const auto& row : r.rows) {
        j.BeginObject();
        for (size_t c = 0; c < r.columns.size(); ++c) {
          j.Key(Header(r.columns[c], unit));
          const ReportColumn& col = r.columns[c];
          if (const std::string* s = std::get_if<std::string>(&row[c])) j.String(*s);
          else if (const int64_t* v = std::get_if<int64_t>(&row[c]); v && (col.kind != Kind::kTime || unit == TimeUnit::kNs)) j.Int(*v);
          else if (col.kind == Kind::kTime) j.Double(std::stod(Format(row[c], col, unit)), 9);
          else j.Double(std::get<double>(row[c]), 6);
        }
        j.EndObject();
      }
      j.EndArray();
    }
    j.EndObject().EndObject();
    return j.Take();
  }
  for (const Report& r : reports) {
    std::vector<std::vector<std::string>> cells(1);
    for (const ReportColumn& c : r.columns) cells[0].push_back(Header(c, unit));
    for (const auto& row : r.rows) {
      auto& line = cells.emplace_back();
      for (size_t c = 0; c < r.columns.size(); ++c) line.push_back(Format(row[c], r.columns[c], unit));
    }
    if (format == TableFormat::kCsv) {
      if (reports.size() > 1) out += "# " + r.name + "\n";
      for (const auto& line : cells) {
        for (size_t c = 0; c < line.size(); ++c) out += (c ? "," : "") + Csv(line[c]);
        out += "\n";
      }
      continue;
    }
    out += (out.empty() ? "" : "\n") + std::string("** ") + r.title + " (" + r.name + "):\n\n";
    if (r.rows.empty()) {
      out += "  (none)\n";
      continue;
    }
    std::vector<size_t> width(r.columns.size());
    for (const auto& line : cells) {
      for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
    }
    for (size_t l = 0; l < cells.size(); ++l) {
      std::string text = " ";
      for (size_t c = 0; c < cells[l].size(); ++c) {
        bool left = r.columns[c].kind == Kind::kText;
        std::string pad(width[c] - cells[l][c].size(), ' ');
        text += " " + (left ? cells[l][c] + (c + 1 < cells[l].size() ? pad : "") : pad + cells[l][c]);
      }
      out += text + "\n";
      if (l == 0) {
        std::string rule = " ";
        for (size_t w : width) rule += " " + std::string(w, '-');
        out += rule + "\n";
      }
    }
  }
  return out;
}

}  // namespace gpucap::tools
