// Progress of a long run, for a person watching a terminal: one line on
// stderr, rewritten in place and cleared at the end. Logs and CI see nothing,
// since a line per step would bury the warnings that matter there.
#ifndef GPUCAP_TOOLS_PROGRESS_H_
#define GPUCAP_TOOLS_PROGRESS_H_

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "gpucap/builder/builder.h"

namespace gpucap::tools {

class Progress {
 public:
  // Shows progress only when `enabled`; see ShouldShow.
  Progress(std::string command, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // True when stderr is a terminal and the user did not ask for --quiet.
  static bool ShouldShow(bool quiet);

  // "gpucap stats: window 3/10 (ProfilerStep#3)". Redraws at most every
  // 100 ms, and always for the last step.
  void Step(std::string_view what, size_t done, size_t total);
  // Clears the line, so what follows on stderr starts clean.
  void Clear();
  // Step as the libraries take it; the Progress must outlive it.
  builder::ProgressFn Fn();

 private:
  std::string command_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_PROGRESS_H_
