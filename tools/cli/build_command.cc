// gpucap build CAPTURE -o OUT [--format chrome|pftrace] [--window SPEC] [--select LIST]
// One trace per window; --list-windows shows what a spec yields.
// gpucap build CAPTURE --into KINETO.json -o OUT: the GPU activity of the
// profiler trace's span (or of one --window) spliced into that trace.
#include <cinttypes>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "command.h"
#include "gpucap/builder/build_progress.h"
#include "gpucap/builder/builder.h"
#include "gpucap/tools/splice/kineto_splice.h"
#include "progress.h"

namespace po = boost::program_options;
using namespace gpucap::builder;

namespace gpucap::tools {

namespace {

int Splice(const CaptureIndex& index, const BuildOptions& o, const po::variables_map& vm) {
  bool quiet = vm["quiet"].as<bool>();
  if (o.format != OutputFormat::kChromeJson) return Fail("build", "--into writes Chrome JSON (--format chrome)", kExitUsage);
  auto kineto = KinetoTrace::Read(vm["into"].as<std::string>());
  if (!kineto.ok()) return Fail("build", kineto.status());
  Window window;
  if (vm["window"].defaulted() && vm["select"].defaulted()) {
    if (kineto->span().second == 0) return Fail("build", kineto->path() + ": no events to take a time span from; give --window");
    window = KinetoWindow(index, *kineto);
  } else {
    Builder builder(index, o);
    auto windows = builder.Windows();
    if (!windows.ok()) return Fail("build", windows.status());
    if (windows->size() != 1) {
      return Fail("build", "--into takes one window; --window '" + o.window + "' yields " +
                               std::to_string(windows->size()) + " (pick one with --select)", kExitUsage);
    }
    window = windows->front();
  }
  auto report = SpliceIntoKineto(index, o, window, *kineto, o.output);
  // Bad flags found once the capture is read (too many windows, a selection
  // past the last) are usage errors too.
  if (!report.ok()) {
    bool usage = report.status().code() == Status::Code::kInvalidArgument;
    return Fail("build", report.status(), usage ? kExitUsage : kExitFailed);
  }
  for (const std::string& w : report->warnings) Warn("build", w, quiet);
  if (quiet) return kExitOk;
  SummaryStream(o.output) << o.output << ": " << report->window.join.gpu_ops << " GPU ops and " << report->window.join.api_calls
            << " API calls into " << kineto->path() << "; launches tied to profiler ops: "
            << report->launches_linked_by_time << " by the enclosing profiler op, "
            << report->launches_linked_by_capture << " outside any profiler op kept the capture's id, "
            << report->launches_unlinked << " not\n";
  return kExitOk;
}

// --list-windows: one line per window, its start from the capture's.
int ListWindows(const CaptureIndex& index, const BuildOptions& o) {
  Builder builder(index, o);
  auto windows = builder.Windows();
  if (!windows.ok()) return Fail("build", windows.status());
  uint64_t origin = index.extent().start_ns;
  for (const Window& w : *windows) {
    std::printf("%4u  +%.6f s  %.6f s  %s\n", w.index, (w.start_ns - origin) / 1e9,
                (w.end_ns - w.start_ns) / 1e9, w.label.c_str());
  }
  return 0;
}

}  // namespace

int RunBuild(const std::vector<std::string>& args) {
  po::options_description options("gpucap build options");
  WindowFlags window;
  TraceFlags trace;
  const std::string format_help = builder::OutputFormatsHelp() + "; default: by the output's name, else " +
                                  std::string(builder::OutputFormats().front().name);
  const std::string output_help =
      "trace file (" + builder::TraceFileNamesHelp() + ") or a folder (DIR/: DIR/<capture>" +
      std::string(builder::OutputFormats().front().folder_file) +
      "); several windows get their index and label before the extension; -: standard output (one window)";
  options.add_options()
      ("capture", po::value<std::string>()->required(), "capture file")
      ("output,o", po::value<std::string>(), output_help.c_str())
      ("format,f", po::value<std::string>(),
       format_help.c_str())
      ("gzip", po::bool_switch(), "gzip the trace: for -o - (standard output); a file is gzipped by its .gz name")
      ("strict", po::bool_switch(), kStrictHelp)
      ("gzip-level", po::value<int>()->default_value(-1),
       "gzip level for .gz outputs: ISA-L 0-3, libdeflate 1-12, zlib 1-9; -1: the codec's fast level "
       "(ISA-L 0, others 1). ISA-L's 1-3 can give different bytes run to run")
      ("gzip-codec", po::value<std::string>()->default_value("default"),
       "default (isal where built with ISA-L, else libdeflate) | isal (~2 GB/s per core) | libdeflate (~0.5 GB/s, "
       "~10% smaller) | zlib")
      ("max-windows", po::value<size_t>()->default_value(10'000),
       "write at most this many windows (files); a spec that yields more stops before writing (0: no bound)")
      ("list-windows", po::bool_switch(), "print the windows and exit")
      ("into", po::value<std::string>(),
       "a torch.profiler (Kineto) trace recorded with CPU activities only: write it with the GPU activity of "
       "its time span (or of the one window --window selects) inserted")
      ("quiet,q", po::bool_switch(), "no progress line, no warnings, no line per window");
  AddTraceFlags(&options, &trace);
  AddWindowFlags(&options, &window, "Each window is its own trace.", "threads in all (0: one per core), this one included: windows are built on up to this many workers at "
                  "once, and their decoding and gzip share the same threads (1: one thread does everything); the "
                  "same bytes at every count. Peak memory: about min(threads, windows) x the largest window, at ~90 "
                  "bytes per trace event (decoded rows and join tables), ~50 in a window of over 1M kernels, "
                  "which decodes its kernel and API rows again as it writes them (a 20M-event window: ~1 GB)");
  po::positional_options_description positional;
  positional.add("capture", 1);
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(args, "usage: gpucap build CAPTURE -o OUT [--window SPEC] [--select LIST]", options,
                 positional, &vm, &code)) {
    return code;
  }
  BuildOptions o;
  if (Status s = ApplyWindowFlags(window, &o); !s.ok()) return Fail("build", s, kExitUsage);
  o.max_windows = vm["max-windows"].as<size_t>();
  if (Status s = ApplyTraceFlags(trace, &o); !s.ok()) return Fail("build", s, kExitUsage);
  o.output_options.gzip_level = vm["gzip-level"].as<int>();
  auto codec = ParseGzipCodec(vm["gzip-codec"].as<std::string>());
  if (!codec.ok()) return Fail("build", codec.status(), kExitUsage);
  o.output_options.codec = *codec;
  if (!GzipCodecAvailable(o.output_options.codec)) {
    return Fail("build", "this gpucap was built without ISA-L (libisal-dev)", kExitUsage);
  }
  if (vm.count("format")) {
    auto format = ParseOutputFormat(vm["format"].as<std::string>());
    if (!format.ok()) {
      return Fail("build", format.status(), kExitUsage);
    }
    o.format = *format;
  } else if (vm.count("output")) {
    o.format = FormatForPath(vm["output"].as<std::string>());
  }
  o.output_options.gzip = vm["gzip"].as<bool>();
  if (vm.count("output")) {
    Status named = CheckOutputName(o.format, o.output_options.gzip, vm["output"].as<std::string>());
    if (!named.ok()) return Fail("build", named, kExitUsage);
  }

  // GPUCAP_BUILD_TIMES=1: when each phase ran, on stderr (build_times.h).
  int64_t epoch_ns = BuildClockNs();
  const char* times = std::getenv(kBuildTimesEnv);
  o.phase_times = times != nullptr && std::string_view(times) == "1";
  std::string path = vm["capture"].as<std::string>();
  bool strict = vm["strict"].as<bool>();
  auto index = OpenCapture(path, /*verify=*/strict);
  if (!index.ok()) return Fail("build", index.status());
  if (strict && StrictRefuses("build", **index)) return kExitDamaged;
  if (vm["list-windows"].as<bool>()) return ListWindows(**index, o);
  if (!vm.count("output")) {
    return Fail("build", "no output given (-o OUT)", kExitUsage);
  }
  // -o DIR/ (or an existing folder): DIR/<capture>.pt.trace.json.gz.
  o.output = TraceFileIn(vm["output"].as<std::string>(), path, o.format);
  // A trace's folder is made on demand, as `-o out/step.json.gz` suggests.
  std::filesystem::path parent = std::filesystem::path(o.output).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) {
    return Fail("build", "cannot create " + parent.string() + ": " + ec.message());
  }
  if (vm.count("into")) return Splice(**index, o, vm);
  bool quiet = vm["quiet"].as<bool>();
  Progress progress("build", Progress::ShouldShow(quiet), Progress::ShouldLog(quiet));
  auto report = BuildTraces(**index, o, [&](const BuildProgress& p) { progress.Events(p); });
  progress.Clear();
  // Bad flags found once the capture is read (too many windows, a selection
  // past the last) are usage errors too.
  if (!report.ok()) {
    bool usage = report.status().code() == Status::Code::kInvalidArgument;
    return Fail("build", report.status(), usage ? kExitUsage : kExitFailed);
  }
  for (const std::string& w : report->warnings) Warn("build", w, vm["quiet"].as<bool>());
  if (o.phase_times) {
    for (const std::string& line : DescribeBuildTimes(*report, epoch_ns)) std::cerr << line << "\n";
  }
  if (vm["quiet"].as<bool>()) return kExitOk;
  for (const WindowReport& w : report->windows) {
    SummaryStream(o.output) << w.path << ": " << w.join.gpu_ops << " GPU ops, " << w.join.api_calls << " API calls, "
              << w.join.ranges << " ranges, " << w.join.flows << " flows";
    if (w.join.ops_without_launch) SummaryStream(o.output) << ", " << w.join.ops_without_launch << " ops without launch";
    SummaryStream(o.output) << "\n";
  }
  return 0;
}

}  // namespace gpucap::tools
