// Progress of a long run, for a person watching a terminal: one line on
// stderr, rewritten in place and cleared at the end. Logs and CI see nothing
// of Step, since a line per step would bury the warnings that matter there;
// a build's Events, in log mode, prints a line every few seconds instead, so
// a long build in a batch job still says how far it is.
#ifndef GPUCAP_TOOLS_PROGRESS_H_
#define GPUCAP_TOOLS_PROGRESS_H_

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "gpucap/builder/build_progress.h"
#include "gpucap/builder/builder.h"

namespace gpucap::tools {

class Progress {
 public:
  // Shows progress only when `enabled`; see ShouldShow.
  Progress(std::string command, bool enabled, bool log_lines = false);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // True when stderr is a terminal and the user did not ask for --quiet.
  static bool ShouldShow(bool quiet);
  // True when stderr is not a terminal and the user did not ask for --quiet.
  static bool ShouldLog(bool quiet);

  // "gpucap stats: window 3/10 (ProfilerStep#3)". Redraws at most every
  // 100 ms, and always for the last step.
  void Step(std::string_view what, size_t done, size_t total);
  // "gpucap build: 3.2M of ~20.0M events, 4.1M events/s, 4 s left, window
  // 3/11 done": redrawn at most every 100 ms on a terminal; in log mode a
  // line every kLogSeconds.
  static constexpr int kLogSeconds = 5;
  void Events(const builder::BuildProgress& p);
  // Clears the line, so what follows on stderr starts clean.
  void Clear();
  // Step as the libraries take it; the Progress must outlive it.
  builder::ProgressFn Fn();

 private:
  std::string command_;
  bool enabled_;
  bool log_lines_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_PROGRESS_H_
