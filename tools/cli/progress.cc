#include "progress.h"

#include <unistd.h>

#include <cstdio>

namespace gpucap::tools {

Progress::Progress(std::string command, bool enabled, bool log_lines)
    : command_(std::move(command)), enabled_(enabled), log_lines_(log_lines && !enabled) {}

Progress::~Progress() { Clear(); }

bool Progress::ShouldShow(bool quiet) { return !quiet && isatty(STDERR_FILENO) == 1; }
bool Progress::ShouldLog(bool quiet) { return !quiet && isatty(STDERR_FILENO) != 1; }

namespace {

// 1234567 -> "1.2M".
std::string Count(double n) {
  char b[32];
  if (n >= 1e9) std::snprintf(b, sizeof b, "%.1fG", n / 1e9);
  else if (n >= 1e6) std::snprintf(b, sizeof b, "%.1fM", n / 1e6);
  else if (n >= 1e3) std::snprintf(b, sizeof b, "%.1fk", n / 1e3);
  else std::snprintf(b, sizeof b, "%.0f", n);
  return b;
}

}  // namespace

void Progress::Events(const builder::BuildProgress& p) {
  if (!enabled_ && !log_lines_) return;
  auto now = std::chrono::steady_clock::now();
  bool last = p.windows_done == p.windows;
  if (enabled_ && drawn_ && !last && now - last_ < std::chrono::milliseconds(100)) return;
  if (log_lines_ && (last || now - (last_ == decltype(last_){} ? start_ : last_) < std::chrono::seconds(kLogSeconds))) {
    return;  // a log gets no line for a build shorter than kLogSeconds, nor a closing one
  }
  last_ = now;
  double seconds = std::chrono::duration<double>(now - start_).count();
  double rate = seconds > 0 ? p.events / seconds : 0;
  std::string line = "gpucap ";
  line.append(command_).append(": ").append(Count(p.events)).append(" of ~").append(Count(p.events_expected));
  line.append(" events");
  if (rate > 0) {
    line.append(", ").append(Count(rate)).append(" events/s");
    if (p.events_expected > p.events) {
      line.append(", ").append(std::to_string(static_cast<uint64_t>((p.events_expected - p.events) / rate + 0.5)));
      line.append(" s left");
    }
  }
  if (p.windows > 1) {
    line.append(", window ").append(std::to_string(p.windows_done)).append("/").append(std::to_string(p.windows));
    line.append(" done");
  }
  if (log_lines_) {
    std::fprintf(stderr, "%s\n", line.c_str());
  } else {
    std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
    drawn_ = true;
  }
  std::fflush(stderr);
}

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
