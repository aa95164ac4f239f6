// Puts a window's slices in the order renderers stream them: by track, and
// on each track by start time with the enclosing slice first. Slices that
// would partially overlap another on their track (which importers draw wrong
// or drop) move to sibling lanes.
#ifndef GPUCAP_BUILDER_SRC_SLICE_ORDER_H_
#define GPUCAP_BUILDER_SRC_SLICE_ORDER_H_

#include <cstdint>
#include <vector>

#include "track_registry.h"

namespace gpucap::builder {

// What a slice is made from; the join turns a ref back into a Slice.
enum class RefKind : uint8_t {
  kAnnotationSpan,  // first: encloses the ops it spans at equal times
  kRange,
  kApi,
  kOp,
  kOverhead,
  kCudaEvent,
  kMark,
  kMarker,    // a CUPTI MARKER record (NVTX seen by CUPTI)
  kHostNode,  // a graph host node's run (join_host_nodes.cc)
  kGraphEventRecord,  // an event-record node's run (join_event_records.cc)
};

// A slice before it is rendered: where and when, and what to render it from.
struct SliceRef {
  int64_t ts;
  int64_t dur;
  uint32_t track;
  uint32_t index;
  RefKind kind;
  uint8_t depth;
  uint32_t tie;
};

// Sorts `refs` by track and time, then moves each slice that would partially
// overlap its track's earlier slices to the first sibling lane where it
// nests, making lanes as needed. Returns the number of lanes made. `scratch`
// is working memory (4 bytes a slice), kept by the caller to be reused.
uint64_t SortAndPackSlices(std::vector<SliceRef>* refs, TrackRegistry* tracks,
                           std::vector<uint32_t>* scratch);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_SLICE_ORDER_H_
