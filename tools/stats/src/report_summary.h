// What nsys's report scripts compute for a set of samples, and the SQL
// plumbing the reports share. nsys's scripts show avg, median and stdev
// through SQLite's round(x, 1) and min, max and totals as integers; its
// stdev is the sample standard deviation (0 for one sample), and an empty
// set gives NULL for all of them (SQL aggregates over no rows).
#ifndef GPUCAP_TOOLS_STATS_REPORT_SUMMARY_H_
#define GPUCAP_TOOLS_STATS_REPORT_SUMMARY_H_

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpucap/status.h"
#include "gpucap/tools/stats/stats_reports.h"

namespace gpucap::tools::reports {

using Kind = ReportColumn::Kind;

struct Summary {
  int64_t count = 0, total = 0, min = 0, max = 0;
  double avg = 0, median = 0, stddev = 0;  // rounded to 0.1 unless asked not to
};
Summary Summarise(std::vector<int64_t> samples, bool round = true);

// SQLite's round(x, 1): to one decimal, halves away from zero.
double Round1(double x);

// Avg, Med, Min, Max, StdDev of one measure, their headers prefixed
// ("Proj ", "Q"); the cells NULL for an empty set.
void AddStatColumns(std::vector<ReportColumn>* columns, const std::string& prefix, Kind kind);
void AddStatCells(std::vector<ReportCell>* row, const Summary& s);

// Runs `sql` on `db`, calling `row` per result row.
Status ForEachRow(sqlite3* db, const std::string& sql, const std::function<void(sqlite3_stmt*)>& row);
// A column as a cell: NULL, integer, real or text.
ReportCell Cell(sqlite3_stmt* st, int column);
std::string Text(sqlite3_stmt* st, int column);

// Rows of `sql` grouped by their first `keys` columns (in first-seen
// order), the next column one sample of the group's measure.
struct Group {
  std::vector<ReportCell> keys;
  std::vector<int64_t> samples;
};
Result<std::vector<Group>> GroupSamples(sqlite3* db, const std::string& sql, int keys);

// The shape of nsys's *_sum reports: Time (%), Total Time, a count, Avg,
// Med, Min, Max, StdDev, then the key columns; rows by total time, largest
// first, then (as cuda_gpu_kern_sum orders them) the count, smallest
// first, then the keys' text.
Report TimeSummary(std::string name, std::string title, const char* count_header,
                   std::vector<ReportColumn> key_columns, const std::vector<Group>& groups);

// The text of a cell (for ordering rows): "" for NULL.
std::string CellText(const ReportCell& cell);

// The kernel name column of the export for a name form.
std::string KernelNameColumn(KernelNameForm form);

// nsys's name of a copy's operation, `[CUDA memcpy Host-to-Device]`, from
// the export's copy_kind, as SQL over memcpys.
extern const char* const kCopyOperationSql;

// A CUDA API name as nsys's scripts show it: a versioned entry point's
// `_vNNNN` suffix cut (cudaLaunchKernel_v7000 -> cudaLaunchKernel).
std::string ApiName(std::string name);

}  // namespace gpucap::tools::reports

#endif  // GPUCAP_TOOLS_STATS_REPORT_SUMMARY_H_
