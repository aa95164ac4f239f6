// What a capture trimmed to some windows must keep so that each window
// builds from it as it builds from the whole capture. Rather than guessing,
// the plan replays the builder: it builds each window (into a sink that
// drops the slices) to learn which chunks the window drew on and with which
// record families, then makes the join's decisions over those records again
// -- which ops the window holds, by start or by launch; the launch records,
// external ids, CUDA events and context owners they reference; the ranges
// open at their launches and at their graph nodes' capture; the CUPTI marker
// pairs, overheads and counters inside the window -- and keeps exactly those.
#ifndef GPUCAP_TOOLS_TRIM_PLAN_H_
#define GPUCAP_TOOLS_TRIM_PLAN_H_

#include <cstdint>
#include <map>
#include <vector>

#include "gpucap/builder/builder.h"

namespace gpucap::tools {

struct TrimPlan {
  std::vector<builder::Window> windows;  // as the source resolves them
  // Per chunk of the source (index into Capture::chunks), a flag per record
  // in walk order: 1 to keep. Chunks no window drew on are absent.
  std::map<size_t, std::vector<uint8_t>> records;
  // Flags per entry of the source's lists.
  std::vector<uint8_t> ranges, graphs, metadata, counter_samples, clocks;
  uint64_t records_seen = 0;  // in the chunks the windows drew on
  uint64_t records_kept = 0;
  std::vector<std::string> warnings;  // what decoding the source found wrong
};

Result<TrimPlan> PlanTrim(const builder::CaptureIndex& index, const builder::BuildOptions& options,
                          const builder::ProgressFn& progress);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_TRIM_PLAN_H_
