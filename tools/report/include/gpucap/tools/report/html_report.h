// gpucap report: one HTML page, self-contained (the charting library, the
// page's script and the data inlined; nothing is fetched when it is opened),
// that a person looks at before opening the timeline: per window and GPU
// where the time went, the top kernels per kind of window, each stream's
// busy strip, launch delays, counters, and across ranks step times, NCCL
// time and wait, and the straggler; with each capture's facts and damage.
//
// Every number comes from gpucap stats' library (window_stats.h), so the
// page and `gpucap stats` never disagree. The data sits in the page as JSON
// (<script id="gpucap-data">); the page's script builds the charts from it
// and leaves what each chart holds in <script id="gpucap-rendered">, which
// the test reads back from a headless browser.
#ifndef GPUCAP_TOOLS_HTML_REPORT_H_
#define GPUCAP_TOOLS_HTML_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpucap/builder/builder.h"
#include "gpucap/builder/capture_index.h"
#include "gpucap/status.h"
#include "gpucap/tools/align/clock_alignment.h"
#include "gpucap/tools/stats/job_stats.h"

namespace gpucap::tools {

// Bounds on the busy strips, so that the page grows with the capture and
// not with a flag: at most kMaxStripBins points per strip (--bins past it is
// a usage error), and at most kStripCells points in all a capture's strips
// (bins x streams drawn); the busiest streams are drawn, the rest named by
// count and busy time.
inline constexpr size_t kMaxStripBins = 100'000;
inline constexpr size_t kStripCells = 4'000'000;

struct ReportOptions {
  // The windows (--window, --select) and the join. An empty window spec
  // picks the captures' steps (StepWindowSpec).
  builder::BuildOptions build;
  size_t top_kernels = 15;      // per kind of window
  size_t strip_bins = 240;      // per stream over the whole capture, 1 to kMaxStripBins
  size_t max_strip_streams = 48;  // streams drawn per capture (also limited by kStripCells)
  size_t max_counter_points = 1500;  // per counter, evenly spaced samples past that
  std::string title;            // empty: from the captures' names
  // Captures drawn in full (facts, time split, kernels, strips, delays,
  // counters). With more captures than this, the report draws all ranks'
  // steps, NCCL time and wait as spreads and a heatmap, and details only
  // the notable captures (NotableCaptures in report_parts.h: the lowest
  // rank, the slow rank, the longest step's straggler, other stragglers).
  size_t detailed_captures = 8;
  // The ranks' clocks (clock_alignment.h): the report says, per rank, how
  // far its host's clock was from the reference's and the residual.
  ClockAlign align = ClockAlign::kAuto;
};

struct ReportResult {
  std::string html;
  std::vector<std::string> warnings;  // the captures' damage and decode skips, as the page shows them
  size_t windows = 0;
};

// The window spec a report opens on when none is given: the captures'
// steps. The first of these that yields a window in every capture: the
// record-time window marks ("marks": what --window-nvtx or the API wrote),
// the NVTX ranges matching the pattern the recorder was given
// (GPUCAP_WINDOW_NVTX in the session's options), PyTorch's profiler steps
// (nvtx:ProfilerStep#\d+); else the whole capture ("all").
std::string StepWindowSpec(std::span<const builder::CaptureIndex* const> captures);

// Several captures are the ranks of one job (one per process); their steps
// are matched by window label.
Result<ReportResult> BuildReport(std::span<const builder::CaptureIndex* const> captures, const ReportOptions& options,
                                 const builder::ProgressFn& progress);

// Capture `i` of a job, opened when the report reaches it. A report of many
// captures opens each once for its statistics (a few at a time, one per
// thread of options.build.threads) and holds only a summary of it after;
// the captures it details are opened a second time. Without --window, the
// first capture's steps (StepWindowSpec of it alone) are every capture's.
Result<ReportResult> BuildReport(size_t captures, const CaptureOpener& open, const ReportOptions& options,
                                 const builder::ProgressFn& progress);

// The data part alone, as embedded in the page (for tests and scripts).
Result<std::string> ReportJson(std::span<const builder::CaptureIndex* const> captures, const ReportOptions& options,
                               const builder::ProgressFn& progress, std::vector<std::string>* warnings,
                               size_t* windows);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_HTML_REPORT_H_
