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
