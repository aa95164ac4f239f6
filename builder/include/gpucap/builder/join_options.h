// What a window's join is told and what it tells back: its options (which
// track a graph op is drawn on, which ranges get GPU-side slices, PyTorch's
// view or the ranges as recorded, threads for pieces) and its counts. Their
// own header, below the join (join.h) and everything inside it, so that the
// join's parts can name them without including the join's entry point.
#ifndef GPUCAP_BUILDER_JOIN_OPTIONS_H_
#define GPUCAP_BUILDER_JOIN_OPTIONS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpucap/status.h"

namespace gpucap::builder {

class WorkQueue;  // work_queue.h
class BlockPool;  // output.h

// Which track a graph-replayed op is drawn on (docs/semantics.md, "Tracks
// of graph replays"): a lane named after the stream its node was captured on
// (when the capture says), or CUPTI's stream of the replay.
enum class GraphLanes : uint8_t { kCapture, kCupti };
// "capture" | "cupti" (--graph-lanes).
Result<GraphLanes> ParseGraphLanes(std::string_view name);

// Which ranges get a GPU-side slice (gpu_user_annotation) over the ops
// launched under them (docs/semantics.md, "GPU-side ranges").
enum class GpuRanges : uint8_t {
  kLaunching,  // Kineto's rule: the innermost range that is not an operator
  kAll,        // every range of the op's stack, operators included (nsys-like)
};

// "launching" -> kLaunching, "all" -> kAll.
Result<GpuRanges> ParseGpuRanges(std::string_view name);

struct JoinOptions {
  bool graph_dependencies = false;  // node -> node arrows inside graph replays
  GraphLanes graph_lanes = GraphLanes::kCapture;
  GpuRanges gpu_ranges = GpuRanges::kLaunching;
  // PyTorch's view of the ranges (docs/semantics.md, "Operators"): emit_nvtx
  // ranges of operators as cpu_op events with Kineto's keys and forward ->
  // backward flows, names shown without emit_nvtx's suffixes, and NCCL's
  // collective ranges named as torch.distributed names them
  // ("nccl:all_reduce"). False: every range as recorded, a user annotation
  // (the export, whose NVTX tables follow nsys).
  bool torch_view = true;
  // Every slice's start and end floored to a whole microsecond (Chrome JSON
  // writes microseconds): HTA rounds fractional times itself, start up and
  // end down, which leaves a sub-microsecond event ending before it starts.
  bool whole_microseconds = false;
  std::string trace_name;           // written as the trace's name
  // Which ranges are steps, by whole name (RE2; annotation_stacks.h): a
  // launch on a thread with no step of its own open takes the step open on
  // another thread. Empty: DefaultStepPattern (ProfilerStep#N and the
  // capture's record-time --window-nvtx pattern).
  std::string steps;
  // Threads that describe and render a large window's slices in pieces
  // beside the join's (join.cc); null: the join's thread renders them. The
  // trace is the same bytes either way.
  WorkQueue* queue = nullptr;
  // Where the pieces' bytes are kept until the window's sink takes them:
  // one pool for a whole build, so a window's pieces land in blocks earlier
  // windows used rather than in pages new to the process. Null: a pool of
  // the window's own.
  BlockPool* blocks = nullptr;
};

// What one window's join did, for the trace's metadata and the report.
struct JoinStats {
  uint64_t gpu_ops = 0;
  uint64_t api_calls = 0;
  uint64_t ranges = 0;
  uint64_t slices = 0;                  // handed to the sink
  uint64_t chunks_decoded_again = 0;    // rows given back and had again (RowSource); not in the trace
  uint64_t flows = 0;
  uint64_t counters = 0;
  uint64_t ops_without_launch = 0;      // no runtime/driver record found
  uint64_t ops_before_span = 0;         // a dump's ops launched before its span: left out (listed when any)
  // Calls made while the recorder was paused, and the ops they launched:
  // left out (listed when any; docs/semantics.md, "Recorded while paused").
  uint64_t calls_while_paused = 0;
  uint64_t ops_while_paused = 0;
  uint64_t launches_in_other_windows = 0;
  uint64_t ops_without_timestamps = 0;  // CUPTI wrote 0 (its device buffer ran short)
  uint64_t ops_without_end = 0;         // end before start (cut by a forced flush)
  uint64_t graph_ops = 0;
  uint64_t graph_ops_without_node = 0;  // replayed op whose capture-time node is unknown
  uint64_t annotated_ops = 0;
  uint64_t overflow_lanes = 0;          // tracks added for partially overlapping slices
  uint64_t host_node_runs = 0;          // graph host nodes' timed runs (listed when there are any)
  // Graph ops whose node knows its capture stream, and those drawn on its
  // lane (listed when the window has any: a window's header depends on the
  // window alone, so a trimmed capture builds the same header).
  uint64_t graph_ops_with_capture_stream = 0;
  uint64_t graph_ops_on_capture_lanes = 0;

  std::vector<std::pair<std::string, uint64_t>> Named() const;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_JOIN_OPTIONS_H_
