// A long build's progress in trace events, for a line a person reads while
// one large window (or many at once) is built: how many events are written,
// of about how many, and how many windows are done.
#ifndef GPUCAP_BUILDER_BUILD_PROGRESS_H_
#define GPUCAP_BUILDER_BUILD_PROGRESS_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "gpucap/builder/builder.h"

namespace gpucap::builder {

struct BuildProgress {
  uint64_t events = 0;           // written so far: slices, flow ends, counter points
  // An estimate for every window: the activity records of the chunks each
  // window overlaps, times the events per record of the windows done so far
  // (2 before the first: a launch and its op, and the flow between them).
  uint64_t events_expected = 0;
  size_t windows_done = 0;
  size_t windows = 0;
};

// Called about every 65k events and as each window ends, never from two
// threads at once.
using BuildProgressFn = std::function<void(const BuildProgress&)>;

// BuildTraces (builder.h), telling `progress` how far it is.
Result<BuildReport> BuildTraces(const CaptureIndex& index, const BuildOptions& options,
                                const BuildProgressFn& progress);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_BUILD_PROGRESS_H_
