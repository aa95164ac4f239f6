// The rules across the ranks of one job, in one place (gpucap stats' rank
// tables and gpucap report's ranks part both read them):
//  - Steps are matched by window label (a step is the window of the same
//    label in every capture; unlabelled windows match by position); the
//    steps of a job are those every capture has, in the first's order.
//  - A collective kernel runs from the moment its rank reaches it until the
//    last rank does, so within a step the rank with the least NCCL time (its
//    kernels whose name starts with "nccl") is the one the others waited
//    for: the straggler. Each rank's wait is its NCCL time past the
//    straggler's. A step without NCCL time on some rank has no straggler.
//  - The slow rank is the straggler of the most steps (the first capture of
//    those tied); the longest step is the one whose median step time over
//    the ranks is the largest, measured against the other steps' median.
// Percentiles are by nearest rank.
#ifndef GPUCAP_TOOLS_STATS_RANK_STEPS_H_
#define GPUCAP_TOOLS_STATS_RANK_STEPS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpucap/tools/stats/window_stats.h"

namespace gpucap::tools {

// What the rules need of one capture, kept for every capture while the rest
// of its statistics go (a thousand ranks' CaptureStats would not fit).
struct RankSummary {
  struct Step {
    std::string key;  // the window's label, else "#" and its position
    int64_t dur_ns = 0;
    int64_t communication_ns = 0;
  };
  int32_t rank = -1;
  std::string host;
  std::vector<Step> steps;  // the capture's windows, in order
};
RankSummary Summarize(const CaptureStats& stats);

struct RankFindings {
  std::vector<std::string> steps;  // in every capture, in the first's order
  std::vector<std::map<std::string, const RankSummary::Step*>> by_key;  // per capture
  std::vector<int64_t> least;      // per step, the least NCCL time of a rank
  std::vector<int> straggler;      // per step, the capture with the least (-1: none)
  std::vector<size_t> straggled;   // per capture, the steps it was the straggler of
  int slow = -1;                   // the straggler of the most steps (-1: no straggler)
  std::vector<int64_t> medians;    // per step, the median step time over the ranks
  int longest = -1;                // the step of the largest median (-1: no step)
  int64_t others_median_ns = 0;    // the median of the other steps' medians

  const RankSummary::Step& Step(size_t capture, size_t step) const { return *by_key[capture].at(steps[step]); }
  int64_t Wait(size_t capture, size_t step) const;
};
// `ranks` must outlive the findings (they point into its steps).
RankFindings FindAcrossRanks(const std::vector<RankSummary>& ranks);

// The value at nearest rank p (0 < p <= 1) of `sorted`; 0 when empty.
int64_t Percentile(const std::vector<int64_t>& sorted, double p);
int64_t Median(std::vector<int64_t> v);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_STATS_RANK_STEPS_H_
