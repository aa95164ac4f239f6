// gpucap report CAPTURE... -o report.html [--window SPEC] [--select LIST]:
// one self-contained HTML page (tools/report/) over one capture, or several
// that are the ranks of one job.
#include <atomic>
#include <cstdio>

#include "cli.h"
#include "command.h"
#include "gpucap/format/output_file.h"
#include "gpucap/tools/report/html_report.h"
#include "progress.h"

namespace po = boost::program_options;

namespace gpucap::tools {

int RunReport(const std::vector<std::string>& args) {
  po::options_description options("gpucap report options");
  WindowFlags window;
  ReportOptions o;
  std::string output;
  options.add_options()
      ("capture", po::value<std::vector<std::string>>()->required()->composing(), "capture files (one per rank)")
      ("output,o", po::value<std::string>(&output)->required(), "the HTML file to write (-: standard output)")
      ("top,n", po::value<size_t>(&o.top_kernels)->default_value(15), "kernels shown per kind of window")
      ("bins", po::value<size_t>(&o.strip_bins)->default_value(240), "points in each stream's busy strip (1 to 100000)")
      ("title", po::value<std::string>(&o.title), "the page's title (default: the captures' names)")
      ("detailed", po::value<size_t>(&o.detailed_captures)->default_value(8),
       "captures drawn in full; past that many, all ranks are drawn as spreads and a heatmap, and the notable "
       "ones (lowest rank, slow rank, stragglers) in full")
      ("align-clocks", po::value<std::string>()->default_value("auto"), kClockAlignHelp)
      ("strict", po::bool_switch(), kStrictHelp)
      ("quiet,q", po::bool_switch(), "no progress line, no warnings on stderr");
  AddWindowFlags(&options, &window,
                 "Each window is a step of the report; windows of one label are one step across ranks. "
                 "Without --window: the window marks, else the recorder's --window-nvtx ranges, else "
                 "ProfilerStep#N ranges, else all.",
                 "decode threads (0: one per core); with several captures, captures read at once");
  po::positional_options_description positional;
  positional.add("capture", -1);
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(args, "usage: gpucap report CAPTURE... -o report.html [--window SPEC] [--select LIST]", options,
                 positional, &vm, &code)) {
    return code;
  }
  bool quiet = vm["quiet"].as<bool>();
  if (Status s = ApplyWindowFlags(window, &o.build); !s.ok()) return Fail("report", s, kExitUsage);
  // No --window: the report opens on the captures' steps (StepWindowSpec).
  if (vm["window"].defaulted()) o.build.window.clear();
  if (o.strip_bins == 0 || o.strip_bins > kMaxStripBins) {
    return Fail("report", "--bins " + std::to_string(o.strip_bins) + ": a strip has 1 to " +
                              std::to_string(kMaxStripBins) + " bins", kExitUsage);
  }
  auto align = ParseClockAlign(vm["align-clocks"].as<std::string>());
  if (!align.ok()) return Fail("report", align.status(), kExitUsage);
  o.align = *align;
  // Captures are opened as the report reaches them, a few at a time.
  const auto paths = vm["capture"].as<std::vector<std::string>>();
  // Captures are opened as they are reached: each is an input from the
  // start, so no output may replace it.
  for (const std::string& path : paths) format::RegisterInputPath(path);
  const bool strict = vm["strict"].as<bool>();
  std::atomic<bool> refused{false};
  auto open = [&](size_t i) -> Result<std::shared_ptr<const builder::CaptureIndex>> {
    auto index = OpenCapture(paths[i], /*verify=*/strict);
    if (!index.ok()) return index.status();
    if (strict && StrictRefuses("report", **index)) {
      refused = true;
      return Status::InvalidArgument(paths[i] + ": damaged (--strict)");
    }
    return std::shared_ptr<const builder::CaptureIndex>(std::move(index).value());
  };
  Progress progress("report", Progress::ShouldShow(quiet));
  auto report = BuildReport(paths.size(), open, o, progress.Fn());
  progress.Clear();
  if (refused) return kExitDamaged;
  if (!report.ok()) return Fail("report", report.status());
  for (const std::string& w : report->warnings) Warn("report", w, quiet);
  Status written = format::WriteOutputFile(output, report->html);
  if (!written.ok()) return Fail("report", written);
  if (!quiet) {
    std::fprintf(stderr, "report: %s: %zu captures, %zu windows, %zu bytes\n", output.c_str(), paths.size(),
                 report->windows, report->html.size());
  }
  return kExitOk;
}

}  // namespace gpucap::tools
