// The report's internals: what each part of the page is computed from, and
// how it goes into the embedded JSON (the page's keys are named here once;
// report.js reads them).
#ifndef GPUCAP_TOOLS_REPORT_PARTS_H_
#define GPUCAP_TOOLS_REPORT_PARTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gpucap/builder/capture_index.h"
#include "gpucap/tools/json/json_out.h"
#include "gpucap/tools/report/html_report.h"
#include "gpucap/tools/stats/window_stats.h"

namespace gpucap::tools::report_internal {

struct CaptureData {
  const builder::CaptureIndex* index = nullptr;
  CaptureStats stats;
};

// One capture's object in "captures": facts, windows with each GPU's time
// split, top kernels per window kind, stream strips, launch delays, counters.
void WriteCapture(const CaptureData& c, const ReportOptions& options, JsonOut* j);

// "ranks": step time, NCCL time and wait per rank and step, the straggler
// per step. Written only for two or more captures.
void WriteRanks(const std::vector<CaptureData>& captures, JsonOut* j);

// The page around the data.
std::string Page(const std::string& title, const std::string& json);

}  // namespace gpucap::tools::report_internal

#endif  // GPUCAP_TOOLS_REPORT_PARTS_H_
