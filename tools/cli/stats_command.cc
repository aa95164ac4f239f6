// gpucap stats CAPTURE... [--window SPEC] [--format table|csv|json] [--top N]:
// GPU time per kernel, copy, API call, NVTX range and stream, over the
// windows the spec selects; over several captures (the ranks of a job), the
// job's totals and a row per rank and per rank and step (job_stats.h); with --report NAME[:base|:mangled], nsys's
// reports of that name (stats_reports.h), --timeunit, --names (or --base,
// --mangled) and --width for their times, kernel names and text width.
#include <iostream>

#include "cli.h"
#include "command.h"
#include "progress.h"
#include "gpucap/tools/stats/job_stats.h"
#include "gpucap/tools/stats/stats_table.h"
#include "gpucap/format/output_file.h"
#include "gpucap/tools/stats/stats_reports.h"

namespace po = boost::program_options;

namespace gpucap::tools {
namespace {

int Write(const std::string& text, const std::string& output) {
  if (output.empty()) {
    std::cout << text;
    return kExitOk;
  }
  Status written = format::WriteOutputFile(output, text);
  if (!written.ok()) return Fail("stats", written);
  return kExitOk;
}

}  // namespace

int RunStats(const std::vector<std::string>& args) {
  po::options_description options("gpucap stats options");
  WindowFlags window;
  std::string format_name, output;
  size_t top = 0;
  std::vector<std::string> only, reports;
  std::string timeunit_name, names_name;
  size_t width = 80;
  options.add_options()
      ("capture", po::value<std::vector<std::string>>()->required()->composing(),
       "capture file; several: the ranks of one job (read a few at a time), with per-rank tables")
      ("format,f", po::value<std::string>(&format_name)->default_value("table"), "table (or text) | csv | json")
      ("top,n", po::value<size_t>(&top)->default_value(0), "rows per table, largest first (0: all)")
      ("table,t", po::value<std::vector<std::string>>(&only)->composing(),
       "print only this table (kernels, copies, apis, ranges, streams, devices; with several captures also ranks, "
       "steps); repeatable")
      ("report,r", po::value<std::vector<std::string>>(&reports)->composing(),
       "an nsys report, NAME[:base|:mangled]: cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_kern_gb_sum, "
       "cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, cuda_gpu_sum, cuda_gpu_trace, cuda_kern_exec_sum, nvtx_sum, "
       "nvtx_pushpop_sum, nvtx_gpu_proj_sum, nvtx_kern_sum (or a --table name); repeatable")
      ("timeunit", po::value<std::string>(&timeunit_name)->default_value("ns"), "report times in ns | us | ms | s")
      ("names", po::value<std::string>(&names_name)->default_value("demangled"),
       "report kernel names: demangled | base (no return type, no parameters) | mangled")
      ("base", po::bool_switch(), "report kernel names as --names base (nsys's :base)")
      ("mangled", po::bool_switch(), "report kernel names as --names mangled (nsys's :mangled)")
      ("width", po::value<size_t>(&width)->default_value(80),
       "reports' table form: the widest a text cell is shown, longer ones cut with an ellipsis (0: no limit)")
      ("output,o", po::value<std::string>(&output), "write to this file instead of stdout")
      ("strict", po::bool_switch(), kStrictHelp)
      ("quiet,q", po::bool_switch(), "no progress line, no warnings on stderr");
  AddWindowFlags(&options, &window, "Several windows are tallied together.",
                 "decode threads (0: one per core); with several captures, captures read at once");
  po::positional_options_description positional;
  positional.add("capture", -1);
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(args, "usage: gpucap stats CAPTURE... [--window SPEC] [--format table|csv|json] [--top N] [--report NAME[:base|:mangled]]", options,
                 positional, &vm, &code)) {
    return code;
  }
  bool quiet = vm["quiet"].as<bool>();
  auto format = ParseTableFormat(format_name);
  if (!format.ok()) return Fail("stats", format.status(), kExitUsage);
  builder::BuildOptions o;
  if (Status s = ApplyWindowFlags(window, &o); !s.ok()) return Fail("stats", s, kExitUsage);
  std::vector<ReportRequest> nsys;
  for (const std::string& r : reports) {
    ReportRequest request;
    auto known = ParseReportRequest(r, &request);
    if (!known.ok()) return Fail("stats", known.status(), kExitUsage);
    if (*known) nsys.push_back(request);
    else only.push_back(r);
  }
  auto timeunit = ParseTimeUnit(timeunit_name);
  if (!timeunit.ok()) return Fail("stats", timeunit.status(), kExitUsage);
  if (vm["base"].as<bool>() && vm["mangled"].as<bool>()) {
    return Fail("stats", "--base and --mangled: choose one", kExitUsage);
  }
  if (vm["base"].as<bool>()) names_name = "base";
  if (vm["mangled"].as<bool>()) names_name = "mangled";
  auto names = ParseKernelNameForm(names_name);
  if (!names.ok()) return Fail("stats", names.status(), kExitUsage);
  if (!nsys.empty() && !only.empty()) {
    return Fail("stats", "nsys reports and gpucap's tables (" + only.front() + ") go in separate runs", kExitUsage);
  }
  const auto paths = vm["capture"].as<std::vector<std::string>>();
  const bool job = paths.size() > 1;
  for (const std::string& t : only) {
    bool rank_table = t == "ranks" || t == "steps";
    if ((t != "kernels" && t != "copies" && t != "apis" && t != "ranges" && t != "streams" && t != "devices" &&
         !rank_table) || (rank_table && !job)) {
      return Fail("stats", "--table/--report '" + t + "': expected kernels, copies, apis, ranges, streams or devices, "
                           "ranks or steps with several captures, or an nsys report name (--help lists them)",
                  kExitUsage);
    }
  }

  // Captures are opened as they are reached: each is an input from the
  // start, so no output may replace it.
  for (const std::string& path : paths) format::RegisterInputPath(path);
  bool strict = vm["strict"].as<bool>();
  if (job) {
    if (!nsys.empty()) return Fail("stats", "nsys reports (--report) take one capture", kExitUsage);
    if (std::find(only.begin(), only.end(), "streams") != only.end() ||
        std::find(only.begin(), only.end(), "devices") != only.end()) {
      return Fail("stats", "streams and devices are per capture; with several, the ranks table has each rank's",
                  kExitUsage);
    }
    auto open = [&](size_t i) -> Result<std::shared_ptr<const builder::CaptureIndex>> {
      auto index = OpenCapture(paths[i], /*verify=*/strict);
      if (!index.ok()) return index.status();
      if (strict && StrictRefuses("stats", **index)) return Status::InvalidArgument(paths[i] + ": damaged (--strict)");
      return std::shared_ptr<const builder::CaptureIndex>(std::move(index).value());
    };
    Progress progress("stats", Progress::ShouldShow(quiet));
    auto stats = CollectJobStats(paths.size(), open, o, progress.Fn());
    progress.Clear();
    if (!stats.ok()) return Fail("stats", stats.status());
    std::vector<Table> tables = StatsTables(stats->total, top);
    std::erase_if(tables, [](const Table& t) { return t.name == "streams"; });
    for (Table& t : RankTables(*stats)) tables.push_back(std::move(t));
    if (!only.empty()) {
      std::erase_if(tables, [&](const Table& t) { return std::find(only.begin(), only.end(), t.name) == only.end(); });
    }
    if (*format != TableFormat::kText) {
      for (const std::string& w : stats->total.warnings) Warn("stats", w, quiet);
    }
    return Write(RenderTables(stats->total, tables, *format), output);
  }
  auto index = OpenCapture(paths.front(), /*verify=*/strict);
  if (!index.ok()) return Fail("stats", index.status());
  if (strict && StrictRefuses("stats", **index)) return kExitDamaged;
  if (!nsys.empty()) {
    std::vector<std::string> warnings;
    auto done = CaptureReports(**index, o, nsys, *names, &warnings);
    if (!done.ok()) return Fail("stats", done.status());
    for (const std::string& w : warnings) Warn("stats", w, quiet);
    return Write(RenderReports(*done, *format, RenderOptions{*timeunit, width}), output);
  }
  Progress progress("stats", Progress::ShouldShow(quiet));
  auto stats = CollectStats(**index, o, progress.Fn());
  progress.Clear();
  if (!stats.ok()) return Fail("stats", stats.status());
  std::vector<Table> tables = StatsTables(*stats, top);
  if (std::find(only.begin(), only.end(), "devices") != only.end()) tables.push_back(DevicesTable(*stats));
  if (!only.empty()) {
    std::erase_if(tables, [&](const Table& t) { return std::find(only.begin(), only.end(), t.name) == only.end(); });
  }
  if (*format != TableFormat::kText) {
    // The text form carries its warnings; the others keep stdout parseable.
    for (const std::string& w : stats->warnings) Warn("stats", w, quiet);
  }
  return Write(RenderTables(*stats, tables, *format), output);
}

}  // namespace gpucap::tools
