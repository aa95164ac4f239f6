#include "gpucap/builder/build_times.h"

#include <chrono>
#include <cstdio>

#include "gpucap/builder/builder.h"

namespace gpucap::builder {

int64_t BuildClockNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<std::string> DescribeBuildTimes(const BuildReport& report, int64_t epoch_ns) {
  auto ms = [epoch_ns](int64_t t) { return t == 0 ? -1.0 : (t - epoch_ns) / 1e6; };
  std::vector<std::string> lines;
  char line[320];
  const BuildTimes& b = report.times;
  std::snprintf(line, sizeof line,
                "times (ms since start): build called %.1f, workers start %.1f, windows written %.1f, done %.1f",
                ms(b.started_ns), ms(b.workers_ns), ms(b.workers_done_ns), ms(b.done_ns));
  lines.push_back(line);
  for (const WindowReport& w : report.windows) {
    const WindowTimes& t = w.times;
    uint64_t events = w.join.slices + 2 * w.join.flows + w.join.counters;
    std::snprintf(line, sizeof line,
                  "times: window %u worker %d: start %.1f decoded %.1f joined %.1f rendered %.1f closed %.1f "
                  "(decode %.1f join %.1f render %.1f close %.1f ms, %.2fM events)",
                  w.window.index, t.worker, ms(t.start_ns), ms(t.decoded_ns), ms(t.begun_ns), ms(t.written_ns),
                  ms(t.done_ns), (t.decoded_ns - t.start_ns) / 1e6, (t.begun_ns - t.decoded_ns) / 1e6,
                  (t.written_ns - t.begun_ns) / 1e6, (t.done_ns - t.written_ns) / 1e6, events / 1e6);
    lines.push_back(line);
  }
  return lines;
}

}  // namespace gpucap::builder
