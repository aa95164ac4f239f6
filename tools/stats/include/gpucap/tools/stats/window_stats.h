// `gpucap stats`'s tallies one window at a time, with the timeline beside
// them, in one pass over the joined windows: what a report shows per step.
// Merging the windows' GpuStats gives what CollectStats gives for the same
// windows (the report's test holds the two to that).
#ifndef GPUCAP_TOOLS_WINDOW_STATS_H_
#define GPUCAP_TOOLS_WINDOW_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gpucap/builder/builder.h"
#include "gpucap/tools/stats/gpu_stats.h"
#include "gpucap/tools/stats/timeline.h"

namespace gpucap::tools {

struct WindowStats {
  builder::Window window;
  int64_t start_ns = 0, end_ns = 0;  // realtime, as the trace has them
  GpuStats stats;
};

struct CaptureStats {
  std::vector<WindowStats> windows;
  Timeline timeline;
  int32_t rank = -1, world_size = -1;
  std::string host;
  std::vector<std::string> warnings;  // capture damage and what decoding skipped
};

Result<CaptureStats> CollectWindowStats(const builder::CaptureIndex& index, const builder::BuildOptions& options,
                                        const builder::ProgressFn& progress);

// A window's kind: its label with each run of digits as "N" (ProfilerStep#3
// and ProfilerStep#4 are both ProfilerStep#N); "window" for an unlabelled one.
std::string WindowKind(const std::string& label);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_WINDOW_STATS_H_
