// What the subcommands share, so a flag means the same everywhere:
//
//   -o, --output   where the result goes       -w, --window   window spec
//   -s, --select   windows kept by index        -j, --threads  decode threads
//   -q, --quiet    no progress, no warnings     -h, --help     the options
//
//   --strict       capture damage or dropped records: exit 4
//
// Exit codes: 0 done, 1 an input or output failed (the message names the
// file and what was wrong), 2 a usage error, 3 `gpucap diff` found a change
// past its threshold, 4 --strict found a capture damaged or short of records.
//
// Outputs follow format/output_file.h's rule; "-o -" is standard output,
// and then what a command says about its output goes to stderr.
#ifndef GPUCAP_TOOLS_CLI_H_
#define GPUCAP_TOOLS_CLI_H_

#include <boost/program_options.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "gpucap/builder/builder.h"
#include "gpucap/status.h"

namespace gpucap::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitPastThreshold = 3;
inline constexpr int kExitDamaged = 4;

// The window flags as given.
struct WindowFlags {
  std::string window = "all";
  std::string select;
  std::string lookback = "2s";
  std::string steps;  // empty: the capture's default (annotation_stacks.h)
  int threads = 0;
};

// Adds --window, --select, --lookback, --steps and --threads; `window_help` says what
// the command does with several windows.
void AddWindowFlags(boost::program_options::options_description* options, WindowFlags* flags,
                    const char* window_help, const char* threads_help = "decode threads (0: one per core)");
// Fills the window part of `o`; the error names the flag.
Status ApplyWindowFlags(const WindowFlags& flags, builder::BuildOptions* o);

// The flags that choose how a trace draws what the join found: graph
// dependencies and lanes, GPU-side ranges, PyTorch's view of the ranges,
// whole-microsecond times (build and merge).
struct TraceFlags {
  bool graph_dependencies = false;
  std::string graph_lanes = "capture";
  std::string gpu_ranges = "launching";
  bool nvtx_as_recorded = false;
  bool whole_microseconds = false;
};
void AddTraceFlags(boost::program_options::options_description* options, TraceFlags* flags);
// Fills o->join; the error names the flag.
Status ApplyTraceFlags(const TraceFlags& flags, builder::BuildOptions* o);

// "gpucap <command>: <message>" on stderr; returns `code`.
int Fail(std::string_view command, std::string_view message, int code = kExitFailed);
int Fail(std::string_view command, const Status& status, int code = kExitFailed);
// "gpucap <command>: warning: <line>" on stderr, unless quiet.
void Warn(std::string_view command, std::string_view line, bool quiet);

// The capture at `path`, with every chunk's checksum checked when `verify`
// (info); errors name the file.
Result<std::unique_ptr<builder::CaptureIndex>> OpenCapture(const std::string& path, bool verify = false);

// Where a command's lines about its output go: stderr when the output
// itself is standard output, else stdout.
std::ostream& SummaryStream(const std::string& output);

// --strict: prints each finding of StrictFindings (tools/info/strict.h) as
// an error and returns true when there is one.
bool StrictRefuses(std::string_view command, const builder::CaptureIndex& index);
inline constexpr const char* kStrictHelp =
    "exit 4 (before writing) when a capture is damaged, lost records or buffers, or was not closed cleanly";

// A usage error (InvalidArgument) when --format contradicts the output's
// name (-f pftrace -o x.json) or --gzip a name without ".gz".
Status CheckOutputName(builder::OutputFormat format, bool gzip, const std::string& output);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_CLI_H_
