#include "cli.h"

#include <iostream>

#include "gpucap/builder/name_matcher.h"
#include "gpucap/format/output_file.h"
#include "gpucap/tools/info/strict.h"

namespace po = boost::program_options;

namespace gpucap::tools {

void AddWindowFlags(po::options_description* options, WindowFlags* flags, const char* window_help,
                    const char* threads_help) {
  std::string help = std::string("all | marks | range:START:END (CUPTI ns, or +1.5s:+2s from the capture's start) | "
                                 "every:DURATION | nvtx:REGEX. ") + window_help;
  options->add_options()
      ("window,w", po::value<std::string>(&flags->window)->default_value("all"), help.c_str())
      ("select,s", po::value<std::string>(&flags->select)->default_value(""), "keep some windows by index: 2,5-7")
      ("lookback", po::value<std::string>(&flags->lookback)->default_value("2s"),
       "how far before a window to look for launch records of its ops")
      ("steps", po::value<std::string>(&flags->steps)->default_value(""),
       "REGEX of whole range names that are the program's steps (e.g. 'train#\\d+'): an op launched on a thread "
       "with no step of its own open (PyTorch's autograd thread) takes the step open on another thread; "
       "default: ProfilerStep#N and the capture's record-time --window-nvtx pattern")
      ("threads,j", po::value<int>(&flags->threads)->default_value(0), threads_help);
}

Status ApplyWindowFlags(const WindowFlags& flags, builder::BuildOptions* o) {
  o->window = flags.window;
  o->select = flags.select;
  o->threads = flags.threads;
  o->output_options.threads = flags.threads;
  auto spec = builder::ParseWindowSpec(flags.window);
  if (!spec.ok()) return spec.status();
  if (!flags.select.empty()) {
    auto s = builder::ParseSelection(flags.select);
    if (!s.ok()) return Status::InvalidArgument("--select: " + s.status().message());
  }
  auto lookback = builder::ParseDuration(flags.lookback);
  if (!lookback.ok()) return Status::InvalidArgument("--lookback: " + lookback.status().message());
  o->launch_lookback_ns = *lookback;
  if (!flags.steps.empty()) {
    auto steps = builder::NameMatcher::Compile(flags.steps);
    if (!steps.ok()) return Status::InvalidArgument("--steps: " + steps.status().message());
  }
  o->join.steps = flags.steps;
  return Status::Ok();
}

void AddTraceFlags(po::options_description* options, TraceFlags* flags) {
  options->add_options()
      ("graph-dependencies", po::bool_switch(&flags->graph_dependencies),
       "draw dependency arrows between ops of CUDA graph replays")
      ("graph-lanes", po::value<std::string>(&flags->graph_lanes)->default_value("capture"),
       "capture: draw graph-replayed ops on a lane per stream they were captured on (when the capture "
       "recorded it), CUPTI's stream in their args; cupti: on CUPTI's streams (docs/semantics.md)")
      ("gpu-ranges", po::value<std::string>(&flags->gpu_ranges)->default_value("launching"),
       "launching: a GPU-side slice for the range an op was launched in, as Kineto draws them (not for "
       "operators or steps); all: for every range of the op's stack (docs/semantics.md)")
      ("nvtx-as-recorded", po::bool_switch(&flags->nvtx_as_recorded),
       "every NVTX range a user annotation named as recorded: no PyTorch operators (cpu_op) from emit_nvtx "
       "ranges, no nccl:<collective> names (docs/semantics.md, \"Operators\")")
      ("whole-microseconds", po::bool_switch(&flags->whole_microseconds),
       "floor every start and end to a whole microsecond, so that HTA reads the trace without rounding "
       "sub-microsecond events into negative durations (docs/cli.md, \"What each reader gets\")");
}

Status ApplyTraceFlags(const TraceFlags& flags, builder::BuildOptions* o) {
  o->join.graph_dependencies = flags.graph_dependencies;
  auto lanes = builder::ParseGraphLanes(flags.graph_lanes);
  if (!lanes.ok()) return lanes.status();
  o->join.graph_lanes = *lanes;
  auto gpu_ranges = builder::ParseGpuRanges(flags.gpu_ranges);
  if (!gpu_ranges.ok()) return gpu_ranges.status();
  o->join.gpu_ranges = *gpu_ranges;
  o->join.torch_view = !flags.nvtx_as_recorded;
  o->join.whole_microseconds = flags.whole_microseconds;
  return Status::Ok();
}

int Fail(std::string_view command, std::string_view message, int code) {
  std::cerr << "gpucap " << command << ": " << message << "\n";
  return code;
}

int Fail(std::string_view command, const Status& status, int code) { return Fail(command, status.message(), code); }

void Warn(std::string_view command, std::string_view line, bool quiet) {
  if (!quiet) std::cerr << "gpucap " << command << ": warning: " << line << "\n";
}

Result<std::unique_ptr<builder::CaptureIndex>> OpenCapture(const std::string& path, bool verify) {
  return builder::CaptureIndex::Open(path, verify);
}

std::ostream& SummaryStream(const std::string& output) {
  return format::IsStandardOutput(output) ? std::cerr : std::cout;
}

bool StrictRefuses(std::string_view command, const builder::CaptureIndex& index) {
  std::vector<std::string> findings = StrictFindings(index);
  for (const std::string& f : findings) std::cerr << "gpucap " << command << ": --strict: " << f << "\n";
  return !findings.empty();
}

Status CheckOutputName(builder::OutputFormat format, bool gzip, const std::string& output) {
  if (format::IsStandardOutput(output)) return Status::Ok();  // no name to contradict
  auto ends = [&](std::string_view ext) { return output.ends_with(ext); };
  std::optional<builder::OutputFormat> named = builder::FormatNamedByPath(output);
  if (named && *named != format) {
    return Status::InvalidArgument("--format " + std::string(builder::OutputFormatOf(format).name) +
                                   " contradicts the output's name " + output + "; rename it (" +
                                   std::string(builder::FormatExtension(format)) + ") or drop --format");
  }
  if (gzip && !ends(".gz")) {
    return Status::InvalidArgument("--gzip contradicts the output's name " + output +
                                   " (no .gz); name it .gz, or use --gzip with -o - (standard output)");
  }
  return Status::Ok();
}

}  // namespace gpucap::tools
