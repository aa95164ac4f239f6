// One trace from several processes' captures, e.g. every rank of a job.
// Each capture is joined on its own, as `gpucap build` joins it, and its
// processes and tracks are renumbered into one trace: CPU processes keep
// their OS pid unless two captures share one, GPU processes get a pid of
// their capture's own (device ids repeat across ranks), and every process
// is named by rank and sorted rank by rank. The join converts each
// capture's CUPTI times to CLOCK_REALTIME through that capture's recorded
// clock pairs, so processes on one host share a clock; captures from several
// hosts are put on the lowest rank's clock from the collectives they share
// (clock_alignment.h), each host's times shifted by its fitted line.
//
// The renderer must know every track before the first slice, so each
// capture's window is joined twice: once for its header, once streaming.
#ifndef GPUCAP_TOOLS_TRACE_MERGE_H_
#define GPUCAP_TOOLS_TRACE_MERGE_H_

#include <optional>
#include <string>
#include <vector>

#include "gpucap/builder/builder.h"
#include "gpucap/tools/align/clock_alignment.h"

namespace gpucap::tools {

struct MergeReport {
  struct Output {
    std::string path;
    std::string label;       // the window's label, or its index
    size_t captures = 0;     // how many captures had this window
  };
  std::vector<Output> outputs;
  std::vector<std::string> warnings;
  // Filled when the clocks were aligned (MergeChecks::align).
  std::optional<JobClocks> clocks;
};

// Windows are matched across captures by label (each rank's
// ProfilerStep#3), or by index when unlabelled; one trace per match, named
// as `gpucap build` names them.
//
// Captures that claim to be one process (the same host, pid and rank) while
// their devices or clocks say they cannot be (device 0 another model, starts
// more than a year apart) are refused, naming both and why; with
// `keep_apart` they are merged as the separate processes they are, and the
// conflict is a warning.
struct MergeChecks {
  bool keep_apart = false;
  ClockAlign align = ClockAlign::kAuto;
};
Result<MergeReport> MergeTraces(const std::vector<const builder::CaptureIndex*>& captures,
                                const builder::BuildOptions& options, const builder::ProgressFn& progress,
                                const MergeChecks& checks = {});

// One line per pair of captures that claim one process and cannot be it.
std::vector<std::string> SameProcessConflicts(const std::vector<const builder::CaptureIndex*>& captures);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_TRACE_MERGE_H_
