// What a capture trimmed to some windows must keep so that each window
// builds from it as it builds from the whole capture. The plan builds each
// window (into a sink that drops the slices) and keeps exactly what the
// join reports it referenced (gpucap/builder/join_use.h): the records
// behind the rows it used, found again through the builder's record walk;
// the ranges, each with both of its events as the builder paired them; the
// marks, metadata and counter samples it wrote; the graph events of the
// nodes it traced back (whole components, graph_components.h); and the clock
// samples around the times it converted. Definitions (devices, threads,
// window marks, range names and payload schemas, metadata of the capture
// and of ranges) and records the decoder has no layout for are kept whole.
// The plan holds no rule of the join's.
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
