// When each phase of a build ran: what a person reads to find what is
// serial or unbalanced when a build runs on many cores (the capture's
// opening, each window's decoding, join and rendering, the last gzip
// members). Asked for with BuildOptions::phase_times (gpucap build and
// build_bench: the environment variable kBuildTimesEnv set to 1); off, no
// clock is read per window beyond a few. Times are the steady clock's, in ns.
#ifndef GPUCAP_BUILDER_BUILD_TIMES_H_
#define GPUCAP_BUILDER_BUILD_TIMES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace gpucap::builder {

inline constexpr const char* kBuildTimesEnv = "GPUCAP_BUILD_TIMES";

// The steady clock now, in ns.
int64_t BuildClockNs();

struct WindowTimes {
  int worker = -1;          // which of the build's window workers built it
  int64_t start_ns = 0;     // taken by its worker
  int64_t decoded_ns = 0;   // its chunks decoded (lookback and lookahead too): its join starts
  int64_t begun_ns = 0;     // joined and sorted: its first slice goes to the renderer (TraceSink::Begin)
  int64_t written_ns = 0;   // its last slice and counter given to the renderer (TraceSink::End called)
  int64_t done_ns = 0;      // End returned: its last gzip member written and the file committed
};

struct BuildTimes {
  int64_t started_ns = 0;        // BuildTraces called
  int64_t workers_ns = 0;        // windows listed, workers about to start
  int64_t workers_done_ns = 0;   // every window's file written
  int64_t done_ns = 0;           // the decoders' warnings gathered: BuildTraces returns
};

struct BuildReport;
// One line per serial phase and per window (window order), in ms since
// `epoch_ns` (e.g. taken before the capture was opened), for stderr.
std::vector<std::string> DescribeBuildTimes(const BuildReport& report, int64_t epoch_ns);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_BUILD_TIMES_H_
