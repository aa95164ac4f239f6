// gpucap stats over the ranks of one job (a capture per process): every
// capture read once, a few at a time (a thread each), its windows tallied
// and let go before the next. What is kept is the job's totals and a line
// per rank and step, so memory is a few captures plus the totals, however
// many ranks: 1,024 ranks' CaptureStats would not fit.
//
// The job's kernel, copy, API and range tables add every rank's windows up
// (merged in capture order, so a run gives the same numbers whatever the
// threads did). Their medians are of at most kJobSamples durations per
// name: past that, every other sample is let go, as often as it takes, so
// a job of a thousand ranks' millions of kernels keeps its memory; the
// median is then that of evenly spaced samples. Counts, totals, minima and
// maxima stay exact. Streams and devices are per rank (their ids repeat
// across ranks): the rank tables give them.
#ifndef GPUCAP_TOOLS_STATS_JOB_STATS_H_
#define GPUCAP_TOOLS_STATS_JOB_STATS_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpucap/builder/capture_index.h"
#include "gpucap/tools/stats/gpu_stats.h"
#include "gpucap/tools/stats/rank_steps.h"
#include "gpucap/tools/stats/stats_table.h"

namespace gpucap::tools {

using builder::CaptureOpener;

inline constexpr size_t kJobSamples = 1 << 16;

struct JobStats {
  struct Rank {
    std::string path;
    DeviceStats gpu;  // its devices' time, summed
    uint64_t windows = 0;
    int64_t window_ns = 0;
  };
  GpuStats total;                   // every window of every capture (no streams, no devices)
  std::vector<Rank> ranks;          // per capture, in order
  std::vector<RankSummary> steps;   // per capture, its windows (rank_steps.h)
};

// `status` with the capture's path in front, unless its message names it
// already: with several captures, which one it was.
Status NamingCapture(const Status& status, const std::string& path);

Result<JobStats> CollectJobStats(size_t count, const CaptureOpener& open, const builder::BuildOptions& options,
                                 const builder::ProgressFn& progress);

// "ranks": a row per capture (rank, host, windows, their time, each kind
// of GPU time, NCCL wait over the job's steps, steps it straggled);
// "steps": a row per capture and step of the job (step time, NCCL time,
// wait, straggler or not).
std::vector<Table> RankTables(const JobStats& job);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_STATS_JOB_STATS_H_
