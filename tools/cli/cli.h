// What the subcommands share, so a flag means the same everywhere:
//
//   -o, --output   where the result goes       -w, --window   window spec
//   -s, --select   windows kept by index        -j, --threads  decode threads
//   -q, --quiet    no progress, no warnings     -h, --help     the options
//
// Exit codes: 0 done, 1 an input or output failed (the message names the
// file and what was wrong), 2 a usage error, 3 `gpucap diff` found a change
// past its threshold.
#ifndef GPUCAP_TOOLS_CLI_H_
#define GPUCAP_TOOLS_CLI_H_

#include <boost/program_options.hpp>
#include <string>
#include <string_view>

#include "gpucap/builder/builder.h"
#include "gpucap/status.h"

namespace gpucap::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitPastThreshold = 3;

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

// "gpucap <command>: <message>" on stderr; returns `code`.
int Fail(std::string_view command, std::string_view message, int code = kExitFailed);
int Fail(std::string_view command, const Status& status, int code = kExitFailed);
// "gpucap <command>: warning: <line>" on stderr, unless quiet.
void Warn(std::string_view command, std::string_view line, bool quiet);

// The capture at `path`, with every chunk's checksum checked when `verify`
// (info); errors name the file.
Result<std::unique_ptr<builder::CaptureIndex>> OpenCapture(const std::string& path, bool verify = false);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_CLI_H_
