// gpucap export CAPTURE... -o OUT.sqlite [--window SPEC] [--select LIST]:
// every window of every capture (one per rank of a job) into one SQLite
// database, in the schema docs/sqlite.md describes.
#include <cinttypes>
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "command.h"
#include "gpucap/format/output_file.h"
#include "gpucap/tools/export/sqlite_export.h"
#include "progress.h"

namespace po = boost::program_options;

namespace gpucap::tools {

int RunExport(const std::vector<std::string>& args) {
  po::options_description options("gpucap export options");
  WindowFlags window;
  std::string output;
  int parallel = 0;
  options.add_options()
      ("capture", po::value<std::vector<std::string>>()->required()->composing(), "capture files (one per rank)")
      ("output,o", po::value<std::string>(&output)->required(),
       "the database to write (replaced when done; -: standard output, written once complete)")
      ("parallel,p", po::value<int>(&parallel)->default_value(0), "captures joined at once (0: one per core)")
      ("no-indexes", po::bool_switch(), "make no indexes (faster; for a database read once into another engine)")
      ("strict", po::bool_switch(), kStrictHelp)
      ("quiet,q", po::bool_switch(), "no progress line, no warnings, no summary line");
  AddWindowFlags(&options, &window, "Every window goes into the database, each row with its window's id.");
  po::positional_options_description positional;
  positional.add("capture", -1);
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(args, "usage: gpucap export CAPTURE... -o OUT.sqlite [--window SPEC] [--select LIST]", options,
                 positional, &vm, &code)) {
    return code;
  }
  bool quiet = vm["quiet"].as<bool>();
  ExportOptions o;
  if (Status s = ApplyWindowFlags(window, &o.build); !s.ok()) return Fail("export", s, kExitUsage);
  o.jobs = parallel;
  o.indexes = !vm["no-indexes"].as<bool>();
  const auto& captures = vm["capture"].as<std::vector<std::string>>();
  Progress progress("export", Progress::ShouldShow(quiet) && captures.size() == 1);
  if (captures.size() == 1) {
    o.on_window = [&](size_t, size_t done, size_t total) { progress.Step("window", done, total); };
  }
  if (vm["strict"].as<bool>()) {
    // Read once here to check: ExportToFile opens the captures itself.
    for (const std::string& path : captures) {
      auto index = OpenCapture(path, /*verify=*/true);
      if (!index.ok()) return Fail("export", index.status());
      if (StrictRefuses("export", **index)) return kExitDamaged;
    }
  }
  auto report = ExportToFile(captures, output, o);
  progress.Clear();
  if (!report.ok()) return Fail("export", report.status());
  for (const std::string& w : report->warnings) Warn("export", w, quiet);
  if (quiet) return kExitOk;
  using sqlite::TableId;
  auto rows = [&](TableId t) { return report->table_rows[static_cast<size_t>(t)]; };
  std::fprintf(format::IsStandardOutput(output) ? stderr : stdout, "%s: %zu captures, %" PRIu64 " windows, %" PRIu64 " kernels, %" PRIu64 " copies, %" PRIu64
              " API calls, %" PRIu64 " NVTX ranges; %" PRIu64 " rows, %" PRIu64 " bytes in %.2f s\n",
              output.c_str(), captures.size(), report->windows, rows(TableId::kKernels),
              rows(TableId::kMemcpys) + rows(TableId::kMemsets), rows(TableId::kApiCalls),
              rows(TableId::kNvtxRanges), report->rows, report->bytes, report->seconds);
  return kExitOk;
}

}  // namespace gpucap::tools
