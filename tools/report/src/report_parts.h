// The report's internals: what each part of the page is computed from, and
// how it goes into the embedded JSON (the page's keys are named here once;
// report.js reads them).
#ifndef GPUCAP_TOOLS_REPORT_PARTS_H_
#define GPUCAP_TOOLS_REPORT_PARTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpucap/builder/capture_index.h"
#include "gpucap/tools/align/clock_alignment.h"
#include "gpucap/tools/json/json_out.h"
#include "gpucap/tools/report/html_report.h"
#include "gpucap/tools/stats/rank_steps.h"
#include "gpucap/tools/stats/window_stats.h"

namespace gpucap::tools::report_internal {

struct CaptureData {
  const builder::CaptureIndex* index = nullptr;
  CaptureStats stats;
  size_t position = 0;  // among the job's captures
};

// One capture's object in "captures": facts, windows with each GPU's time
// split, top kernels per window kind, stream strips, launch delays, counters.
void WriteCapture(const CaptureData& c, const ReportOptions& options, JsonOut* j);

// "ranks": step time, NCCL time and wait per rank and step, the straggler
// per step, and across steps the slow rank (the straggler of the most
// steps) and the longest step. Written only for two or more captures.
void WriteRanks(const std::vector<RankSummary>& ranks, JsonOut* j);

// "clocks": per capture, its host's correction onto the reference's clock
// and the residual (clock_alignment.h).
void WriteClocks(const JobClocks& clocks, JsonOut* j);

// The captures a report of many ranks details, at most `most`, by position:
// the lowest rank, the slow rank, the longest step's straggler, then the
// other stragglers, most frequent first.
std::vector<size_t> NotableCaptures(const std::vector<RankSummary>& ranks, size_t most);

// The page around the data.
std::string Page(const std::string& title, const std::string& json);

}  // namespace gpucap::tools::report_internal

#endif  // GPUCAP_TOOLS_REPORT_PARTS_H_
