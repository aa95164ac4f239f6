// The rows one window's join matches and keeps (join_result.h): GPU ops,
// API calls, NVTX markers, annotation spans, graph event records, counters.
// Plain values, small because a window holds millions of some; their own
// header so that the parts of the join that only handle them (launch
// flows) need nothing above them.
// Private to the builder.
#ifndef GPUCAP_BUILDER_SRC_JOIN_ROWS_H_
#define GPUCAP_BUILDER_SRC_JOIN_ROWS_H_

#include <cstdint>

#include "gpucap/builder/graph.h"

namespace gpucap::builder::join_internal {

constexpr uint32_t kNone = UINT32_MAX;
constexpr uint32_t kExternalCustom0 = 3;  // CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0

// kGraph: a whole graph launch (GRAPH_TRACE, join_graph_launches.cc).
enum class OpKind : uint8_t { kKernel, kMemcpy, kMemset, kSync, kGraph };

// A window holds millions, read in several passes: 56 bytes. The graph node
// id stays in the op's row (JoinResult::GraphNodeOf), read only for ops of
// replays.
struct Op {
  uint64_t start, end;
  const GraphNode* origin = nullptr;  // the capture-time node of a replayed op
  uint32_t row;
  uint32_t correlation;
  uint32_t device, stream;
  uint32_t api = kNone;           // index into JoinResult::apis
  uint32_t launch_stack = 0;      // AnnotationStacks ids
  uint32_t capture_stack = 0;
  uint16_t part;
  OpKind kind;
};
static_assert(sizeof(Op) == 56);

// NVTX as CUPTI reports it (MARKER records): instants, and start/end pairs
// matched by id.
struct MarkerRange {
  uint64_t start, end;  // end == start for instants
  uint32_t pid, tid;
  uint32_t name, domain;  // capture strings
  bool instant;
  bool closed;
  uint16_t part = 0, end_part = 0;  // the records, for JoinUse
  uint32_t row = 0, end_row = 0;
};

struct ApiRef {
  uint16_t part;
  uint32_t row;
  bool in_window;
  bool start_known;  // CUPTI gave the call a timestamp
  bool paused = false;  // made while the recorder was paused: left out with its ops
};

// A gpu_user_annotation span: one range's ops on one stream (per graph
// replay for ranges that enclosed the capture, since those repeat).
struct AnnotationSpan {
  uint32_t range;
  uint32_t device, stream;
  uint32_t replay;  // launch correlation for capture-time ranges, else 0
  uint64_t start, end;
  uint8_t depth;
  bool capture_lane = false;  // stream is a capture stream (OpTrackKey)
};

// Where a GPU op is drawn (graph_lanes.cc): CUPTI's stream, or the lane of
// the stream its graph node was captured on.
struct OpTrackKey {
  uint32_t device, stream;
  bool capture_lane;
};

// An untimed event record of a graph replay (join_event_records.cc).
struct GraphRecord {
  uint16_t part;
  uint32_t row;
  uint64_t node;  // the event-record node, 0: not known
};

// A context's device: the first kernel or copy seen on it.
struct ContextOwner {
  uint32_t device;
  uint16_t part;
  uint32_t family, row;
};

struct Counter {
  uint32_t track;
  int64_t ts;
  double value;
};

}  // namespace gpucap::builder::join_internal

#endif  // GPUCAP_BUILDER_SRC_JOIN_ROWS_H_
