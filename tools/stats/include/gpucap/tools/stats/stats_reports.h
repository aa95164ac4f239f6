// nsys-style reports (`gpucap stats --report cuda_gpu_kern_sum`): the
// reports of Nsight Systems' `nsys stats` by their names, with their titles,
// columns, column order, units, rounding, row order and rules as NVIDIA's
// Post-Collection Analysis Guide ("Statistical Reports Shipped With Nsight
// Systems") and the report scripts it describes have them; docs/cli.md
// lists each report's columns and the guide's section. They are computed
// over the capture's SQLite export (docs/sqlite.md), so a report says what
// a query of the same database says. Times are ns inside, shown in the unit
// asked for.
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

// Which kernel name a report shows (nsys's report arguments `:base` and
// `:mangled`): as the trace does (demangled, templated), without return
// type and parameters ("base"), or as CUDA reported it.
enum class KernelNameForm { kDemangled, kBase, kMangled };
Result<KernelNameForm> ParseKernelNameForm(std::string_view name);

// A report as nsys names it on its command line: NAME, NAME:base or
// NAME:mangled. `form` is left alone when no argument is given.
struct ReportRequest {
  std::string name;
  bool has_form = false;
  KernelNameForm form = KernelNameForm::kDemangled;
};
// False when `text` names no nsys report; an error for a known report with
// an argument it does not take.
Result<bool> ParseReportRequest(std::string_view text, ReportRequest* out);

enum class TimeUnit { kNs, kUs, kMs, kS };
Result<TimeUnit> ParseTimeUnit(std::string_view name);

struct ReportColumn {
  // kTime: ns, shown in the time unit asked for; kMegabytes: bytes, shown
  // in MB (10^6 bytes); kMegabytesPerSecond: bytes/s, shown in MB/s (nsys's header: "Throughput (MB/s)").
  enum class Kind { kText, kInt, kCount, kPercent, kRatio, kTime, kMegabytes, kMegabytesPerSecond };
  std::string header;  // without the unit: "Total Time", "Avg"
  Kind kind = Kind::kText;
};
// monostate: NULL in nsys's table (an empty cell, JSON null).
using ReportCell = std::variant<std::monostate, int64_t, double, std::string>;

struct Report {
  std::string name;
  std::string title;  // nsys's display name: "CUDA GPU Kernel Summary"
  std::vector<ReportColumn> columns;
  std::vector<std::vector<ReportCell>> rows;
};

// Runs report `name` over `db`, an export (ExportCaptures).
Result<Report> RunReport(sqlite3* db, std::string_view name, KernelNameForm names);

// Exports the windows `options` selects into a database in memory and runs
// the reports asked for over it; a request without a name form gets `names`.
Result<std::vector<Report>> CaptureReports(const builder::CaptureIndex& index, const builder::BuildOptions& options,
                                           const std::vector<ReportRequest>& requests, KernelNameForm names,
                                           std::vector<std::string>* warnings);

struct RenderOptions {
  TimeUnit unit = TimeUnit::kNs;
  // The widest a text cell is shown in the table form, in characters; a
  // longer one (a demangled template name) is cut with an ellipsis. 0: no
  // limit. CSV and JSON always hold the whole text.
  size_t max_text_width = 80;
};

// Aligned text (format kText), CSV, or JSON (an object per report holding
// an array of rows keyed by the headers).
std::string RenderReports(const std::vector<Report>& reports, TableFormat format, const RenderOptions& options);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_STATS_REPORTS_H_
