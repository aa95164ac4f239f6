// nsys-style reports (`gpucap stats --report cuda_gpu_kern_sum`): the names
// and columns of Nsight Systems' `nsys stats` reports where they apply,
// computed by SQL over the capture's SQLite export (docs/sqlite.md), so a
// report says what a query of the same database says. Times are ns inside,
// shown in the unit asked for.
#ifndef GPUCAP_TOOLS_STATS_REPORTS_H_
#define GPUCAP_TOOLS_STATS_REPORTS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gpucap/builder/builder.h"
#include "gpucap/status.h"
#include "gpucap/tools/stats/stats_table.h"

struct sqlite3;

namespace gpucap::tools {

// The nsys report names gpucap knows.
std::span<const std::string_view> ReportNames();
bool IsReportName(std::string_view name);

// Which kernel name a report shows: as the trace does, without return type
// and parameters (nsys's "base"), or as CUDA reported it.
enum class KernelNameForm { kDemangled, kBase, kMangled };
Result<KernelNameForm> ParseKernelNameForm(std::string_view name);

enum class TimeUnit { kNs, kUs, kMs, kS };
Result<TimeUnit> ParseTimeUnit(std::string_view name);

struct ReportColumn {
  enum class Kind { kText, kInt, kCount, kPercent, kTime, kMegabytes };
  std::string header;  // without the unit: "Total Time", "Avg"
  Kind kind = Kind::kText;
};
using ReportCell = std::variant<int64_t, double, std::string>;

struct Report {
  std::string name;
  std::string title;
  std::vector<ReportColumn> columns;
  std::vector<std::vector<ReportCell>> rows;
};

// Runs report `name` over `db`, an export (ExportCaptures).
Result<Report> RunReport(sqlite3* db, std::string_view name, KernelNameForm names);

// Exports the windows `options` selects into a database in memory and runs
// the reports named over it.
Result<std::vector<Report>> CaptureReports(const builder::CaptureIndex& index, const builder::BuildOptions& options,
                                           const std::vector<std::string>& names, KernelNameForm kernel_names,
                                           std::vector<std::string>* warnings);

// Aligned text (format kText), CSV, or JSON (an object per report holding
// an array of rows keyed by the headers), times in `unit`.
std::string RenderReports(const std::vector<Report>& reports, TableFormat format, TimeUnit unit);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_STATS_REPORTS_H_
