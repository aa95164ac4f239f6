// CUDA graph topology from CUPTI's resource callbacks. Kernels replayed from
// a graph carry the id of the node instantiate cloned, and no correlation to
// the code that built the graph; these events let the builder walk a
// replayed kernel back to the node created at capture time, on a known
// thread, inside known ranges.
#ifndef GPUCAP_RECORDER_GRAPH_EVENTS_H_
#define GPUCAP_RECORDER_GRAPH_EVENTS_H_

#include <cstdint>
#include <optional>

#include "gpucap/format/model.h"

namespace gpucap::recorder {

// The event for a resource callback, or nothing for callbacks that are not
// about graphs. `resource_data` is CUPTI's CUpti_ResourceData.
std::optional<format::GraphEvent> GraphEventFor(uint32_t cbid, const void* resource_data,
                                                uint64_t timestamp_ns, uint32_t os_tid);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_GRAPH_EVENTS_H_
