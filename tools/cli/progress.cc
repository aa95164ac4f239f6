#include "progress.h"

#include <unistd.h>

#include <cstdio>

namespace gpucap::tools {

Progress::Progress(std::string command, bool enabled) : command_(std::move(command)), enabled_(enabled) {}

Progress::~Progress() { Clear(); }

bool Progress::ShouldShow(bool quiet) { return !quiet && isatty(STDERR_FILENO) == 1; }

void Progress::Step(std::string_view what, size_t done, size_t total) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on some
  // chains of operator+ over temporaries.
  std::string line = "gpucap ";
  line.append(command_).append(": ").append(what.substr(0, 100));
  if (total > 0) line.append(" ").append(std::to_string(done)).append("/").append(std::to_string(total));
  // \r, the text, then erase to the end of the line (ANSI EL).
  std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::Clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
  drawn_ = false;
}

builder::ProgressFn Progress::Fn() {
  return [this](std::string_view what, size_t done, size_t total) { Step(what, done, total); };
}

}  // namespace gpucap::tools
