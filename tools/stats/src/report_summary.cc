#include "report_summary.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace gpucap::tools::reports {

double Round1(double x) { return std::round(x * 10.0) / 10.0; }

Summary Summarise(std::vector<int64_t> v, bool round) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.count = static_cast<int64_t>(v.size());
  for (int64_t x : v) s.total += x;
  s.min = v.front();
  s.max = v.back();
  double avg = static_cast<double>(s.total) / static_cast<double>(s.count);
  size_t mid = v.size() / 2;
  double median = v.size() % 2 ? static_cast<double>(v[mid])
                               : (static_cast<double>(v[mid - 1]) + static_cast<double>(v[mid])) / 2;
  double stddev = 0;
  if (v.size() > 1) {
    double sum = 0;
    for (int64_t x : v) sum += (static_cast<double>(x) - avg) * (static_cast<double>(x) - avg);
    stddev = std::sqrt(sum / static_cast<double>(v.size() - 1));
  }
  s.avg = round ? Round1(avg) : avg;
  s.median = round ? Round1(median) : median;
  s.stddev = round ? Round1(stddev) : stddev;
  return s;
}

void AddStatColumns(std::vector<ReportColumn>* columns, const std::string& prefix, Kind kind) {
  for (const char* h : {"Avg", "Med", "Min", "Max", "StdDev"}) columns->push_back({prefix + h, kind});
}

void AddStatCells(std::vector<ReportCell>* row, const Summary& s) {
  if (s.count == 0) {
    row->insert(row->end(), 5, ReportCell{});
    return;
  }
  row->emplace_back(std::in_place_type<double>, s.avg);
  row->emplace_back(std::in_place_type<double>, s.median);
  row->emplace_back(std::in_place_type<int64_t>, s.min);
  row->emplace_back(std::in_place_type<int64_t>, s.max);
  row->emplace_back(std::in_place_type<double>, s.stddev);
}

Status ForEachRow(sqlite3* db, const std::string& sql, const std::function<void(sqlite3_stmt*)>& row) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    return Status::Internal(std::string("report query: ") + sqlite3_errmsg(db));
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st);
  std::string error = rc == SQLITE_DONE ? "" : sqlite3_errmsg(db);
  sqlite3_finalize(st);
  if (!error.empty()) return Status::Internal("report query: " + error);
  return Status::Ok();
}

ReportCell Cell(sqlite3_stmt* st, int column) {
  switch (sqlite3_column_type(st, column)) {
    case SQLITE_NULL: return {};
    case SQLITE_INTEGER: return static_cast<int64_t>(sqlite3_column_int64(st, column));
    case SQLITE_FLOAT: return sqlite3_column_double(st, column);
    default: return Text(st, column);
  }
}

std::string Text(sqlite3_stmt* st, int column) {
  const unsigned char* t = sqlite3_column_text(st, column);
  return t ? reinterpret_cast<const char*>(t) : "";
}

Result<std::vector<Group>> GroupSamples(sqlite3* db, const std::string& sql, int keys) {
  std::map<std::string, size_t> index;
  std::vector<Group> groups;
  Status s = ForEachRow(db, sql, [&](sqlite3_stmt* st) {
    std::string key;
    std::vector<ReportCell> cells;
    for (int i = 0; i < keys; ++i) {
      cells.push_back(Cell(st, i));
      key += std::to_string(cells.back().index()) + CellText(cells.back());
      key.push_back('\0');
    }
    auto [it, added] = index.try_emplace(key, groups.size());
    if (added) groups.push_back({std::move(cells), {}});
    groups[it->second].samples.push_back(sqlite3_column_int64(st, keys));
  });
  if (!s.ok()) return s;
  return groups;
}

std::string CellText(const ReportCell& cell) {
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  if (const auto* i = std::get_if<int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) return std::to_string(*d);
  return "";
}

Report TimeSummary(std::string name, std::string title, const char* count_header,
                   std::vector<ReportColumn> key_columns, const std::vector<Group>& groups) {
  Report r{std::move(name), std::move(title), {}, {}};
  r.columns = {{"Time", Kind::kPercent}, {"Total Time", Kind::kTime}, {count_header, Kind::kCount}};
  AddStatColumns(&r.columns, "", Kind::kTime);
  r.columns.insert(r.columns.end(), key_columns.begin(), key_columns.end());
  struct Row {
    Summary s;
    const Group* g;
    std::string keys;
  };
  std::vector<Row> rows;
  int64_t whole = 0;
  for (const Group& g : groups) {
    std::string keys;
    for (const ReportCell& k : g.keys) keys += CellText(k) + '\0';
    rows.push_back({Summarise(g.samples), &g, std::move(keys)});
    whole += rows.back().s.total;
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.s.total != b.s.total) return a.s.total > b.s.total;
    if (a.s.count != b.s.count) return a.s.count < b.s.count;
    return a.keys < b.keys;
  });
  for (const Row& row : rows) {
    std::vector<ReportCell> cells = {
        whole ? Round1(100.0 * static_cast<double>(row.s.total) / static_cast<double>(whole)) : 0.0, row.s.total,
        row.s.count};
    AddStatCells(&cells, row.s);
    cells.insert(cells.end(), row.g->keys.begin(), row.g->keys.end());
    r.rows.push_back(std::move(cells));
  }
  return r;
}

std::string KernelNameColumn(KernelNameForm form) {
  switch (form) {
    case KernelNameForm::kBase: return "short_name";
    case KernelNameForm::kMangled: return "mangled_name";
    default: return "name";
  }
}

const char* const kCopyOperationSql =
    "CASE copy_kind WHEN 'HtoD' THEN '[CUDA memcpy Host-to-Device]' WHEN 'DtoH' THEN '[CUDA memcpy Device-to-Host]' "
    "WHEN 'DtoD' THEN '[CUDA memcpy Device-to-Device]' WHEN 'HtoH' THEN '[CUDA memcpy Host-to-Host]' "
    "WHEN 'PtoP' THEN '[CUDA memcpy Peer-to-Peer]' WHEN 'HtoA' THEN '[CUDA memcpy Host-to-Array]' "
    "WHEN 'AtoH' THEN '[CUDA memcpy Array-to-Host]' WHEN 'AtoA' THEN '[CUDA memcpy Array-to-Array]' "
    "WHEN 'AtoD' THEN '[CUDA memcpy Array-to-Device]' WHEN 'DtoA' THEN '[CUDA memcpy Device-to-Array]' "
    "ELSE '[CUDA memcpy Unknown]' END";

std::string ApiName(std::string name) {
  // nsys: CASE substr(name, -6, 2) WHEN '_v' THEN the name less its last 6.
  if (name.size() >= 6 && name.compare(name.size() - 6, 2, "_v") == 0) name.resize(name.size() - 6);
  return name;
}

}  // namespace gpucap::tools::reports
