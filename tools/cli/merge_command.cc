// gpucap merge A B ... -o OUT [--format chrome|pftrace]: one trace from several
// processes' captures (all ranks of a job), on one clock, each process
// labelled by rank.
#include <iostream>

#include "cli.h"
#include "command.h"
#include "progress.h"
#include "gpucap/format/output_file.h"
#include "gpucap/tools/merge/trace_merge.h"

namespace po = boost::program_options;

namespace gpucap::tools {

int RunMerge(const std::vector<std::string>& args) {
  po::options_description options("gpucap merge options");
  WindowFlags window;
  TraceFlags trace;
  std::vector<std::string> inputs;
  std::string output;
  const std::string format_help = builder::OutputFormatsHelp() + "; default: by the output's name, else " +
                                  std::string(builder::OutputFormats().front().name);
  const std::string output_help = "trace file (" + builder::TraceFileNamesHelp() +
                                  "); several windows get their index and label before the extension; -: standard "
                                  "output (one window)";
  options.add_options()
      ("captures", po::value<std::vector<std::string>>(&inputs)->required(), "capture files, one per process")
      ("output,o", po::value<std::string>(&output)->required(), output_help.c_str())
      ("gzip", po::bool_switch(), "gzip the trace: for -o - (standard output); a file is gzipped by its .gz name")
      ("strict", po::bool_switch(), kStrictHelp)
      ("format,f", po::value<std::string>(),
       format_help.c_str())
      ("keep-apart", po::bool_switch(),
       "merge captures that claim one process (host, pid, rank) but cannot be it (another device model, clocks "
       "years apart) as separate processes instead of refusing them")
      ("align-clocks", po::value<std::string>()->default_value("auto"), kClockAlignHelp)
      ("quiet,q", po::bool_switch(), "no progress line, no warnings, no line per window");
  AddTraceFlags(&options, &trace);
  AddWindowFlags(&options, &window,
                 "Windows are matched across captures by label (each rank's ProfilerStep#3), else by index.");
  po::positional_options_description positional;
  positional.add("captures", -1);
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(args, "usage: gpucap merge CAPTURE... -o OUT [--window SPEC] [--select LIST]", options, positional,
                 &vm, &code)) {
    return code;
  }
  bool quiet = vm["quiet"].as<bool>();
  builder::BuildOptions o;
  if (Status s = ApplyWindowFlags(window, &o); !s.ok()) return Fail("merge", s, kExitUsage);
  o.output = output;
  if (vm.count("format")) {
    auto format = builder::ParseOutputFormat(vm["format"].as<std::string>());
    if (!format.ok()) return Fail("merge", format.status(), kExitUsage);
    o.format = *format;
  } else {
    o.format = builder::FormatForPath(output);
  }
  o.output_options.gzip = vm["gzip"].as<bool>();
  if (Status named = CheckOutputName(o.format, o.output_options.gzip, output); !named.ok()) {
    return Fail("merge", named, kExitUsage);
  }
  if (Status s = ApplyTraceFlags(trace, &o); !s.ok()) return Fail("merge", s, kExitUsage);

  std::vector<std::unique_ptr<builder::CaptureIndex>> indexes;
  std::vector<const builder::CaptureIndex*> captures;
  for (const std::string& path : inputs) {
    auto index = OpenCapture(path, /*verify=*/vm["strict"].as<bool>());
    if (!index.ok()) return Fail("merge", index.status());
    if (vm["strict"].as<bool>() && StrictRefuses("merge", **index)) return kExitDamaged;
    indexes.push_back(std::move(index).value());
    captures.push_back(indexes.back().get());
  }
  Progress progress("merge", Progress::ShouldShow(quiet));
  MergeChecks checks;
  checks.keep_apart = vm["keep-apart"].as<bool>();
  auto align = ParseClockAlign(vm["align-clocks"].as<std::string>());
  if (!align.ok()) return Fail("merge", align.status(), kExitUsage);
  checks.align = *align;
  auto report = MergeTraces(captures, o, progress.Fn(), checks);
  progress.Clear();
  // -o - with a spec that yields several windows is a usage error, as in
  // build (found only once the captures are read).
  if (!report.ok()) {
    bool usage = format::IsStandardOutput(output) && report.status().code() == Status::Code::kInvalidArgument;
    return Fail("merge", report.status(), usage ? kExitUsage : kExitFailed);
  }
  for (const std::string& w : report->warnings) Warn("merge", w, quiet);
  if (quiet) return kExitOk;
  if (report->clocks) {
    for (const std::string& line : DescribeClocks(*report->clocks)) SummaryStream(output) << line << "\n";
  }
  for (const MergeReport::Output& out : report->outputs) {
    SummaryStream(output) << out.path << ": " << out.label << " from " << out.captures << " of " << captures.size()
              << " captures\n";
  }
  return kExitOk;
}

}  // namespace gpucap::tools
