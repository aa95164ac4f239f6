// gpucap stats CAPTURE [--window SPEC] [--format text|csv|json] [--top N]:
// GPU time per kernel, copy, API call, NVTX range and stream, over the
// windows the spec selects.
#include <fstream>
#include <iostream>

#include "cli.h"
#include "command.h"
#include "progress.h"
#include "gpucap/tools/stats/stats_table.h"
#include "gpucap/format/output_file.h"

namespace po = boost::program_options;

namespace gpucap::tools {

int RunStats(const std::vector<std::string>& args) {
  po::options_description options("gpucap stats options");
  WindowFlags window;
  std::string format_name, output;
  size_t top = 0;
  std::vector<std::string> only;
  options.add_options()
      ("capture", po::value<std::string>()->required(), "capture file")
      ("format,f", po::value<std::string>(&format_name)->default_value("text"), "text | csv | json")
      ("top,n", po::value<size_t>(&top)->default_value(0), "rows per table, largest first (0: all)")
      ("table,t", po::value<std::vector<std::string>>(&only)->composing(),
       "print only this table (kernels, copies, apis, ranges, streams); repeatable")
      ("output,o", po::value<std::string>(&output), "write to this file instead of stdout")
      ("quiet,q", po::bool_switch(), "no progress line, no warnings on stderr");
  AddWindowFlags(&options, &window, "Several windows are tallied together.");
  po::positional_options_description positional;
  positional.add("capture", 1);
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(args, "usage: gpucap stats CAPTURE [--window SPEC] [--format text|csv|json] [--top N]", options,
                 positional, &vm, &code)) {
    return code;
  }
  bool quiet = vm["quiet"].as<bool>();
  auto format = ParseTableFormat(format_name);
  if (!format.ok()) return Fail("stats", format.status(), kExitUsage);
  builder::BuildOptions o;
  if (Status s = ApplyWindowFlags(window, &o); !s.ok()) return Fail("stats", s, kExitUsage);
  for (const std::string& t : only) {
    if (t != "kernels" && t != "copies" && t != "apis" && t != "ranges" && t != "streams") {
      return Fail("stats", "--table '" + t + "': expected kernels, copies, apis, ranges or streams", kExitUsage);
    }
  }

  auto index = OpenCapture(vm["capture"].as<std::string>());
  if (!index.ok()) return Fail("stats", index.status());
  Progress progress("stats", Progress::ShouldShow(quiet));
  auto stats = CollectStats(**index, o, progress.Fn());
  progress.Clear();
  if (!stats.ok()) return Fail("stats", stats.status());
  std::vector<Table> tables = StatsTables(*stats, top);
  if (!only.empty()) {
    std::erase_if(tables, [&](const Table& t) { return std::find(only.begin(), only.end(), t.name) == only.end(); });
  }
  if (*format != TableFormat::kText) {
    // The text form carries its warnings; the others keep stdout parseable.
    for (const std::string& w : stats->warnings) Warn("stats", w, quiet);
  }
  std::string text = RenderTables(*stats, tables, *format);
  if (output.empty()) {
    std::cout << text;
    return kExitOk;
  }
  Status written = format::WriteOutputFile(output, text);
  if (!written.ok()) return Fail("stats", written);
  return kExitOk;
}

}  // namespace gpucap::tools
