// JoinResult: what one window's join matched, and the lookups into it.
//
// The join (WindowJoin, window_join.h) fills it, phase by phase: the window's
// API calls indexed by correlation id, its GPU ops joined to their launches,
// the dependency and launch flows between them, the annotation spans, CUPTI
// markers, graph event records, the tracks, and one ref per slice to draw.
// Describers (slice_describer.h) then only read it, turning each ref into the
// slice it stands for, on as many threads as describe pieces of the window
// (piece_stream.h): nothing here changes once the join's phases are done.
//
// The largest tables (launches, ops, flows, refs) live in the JoinWorkspace
// and are kept from one window to the next (join.h says why); the result
// refers to them. The rest is the window's own.
// Private to the builder.
#ifndef GPUCAP_BUILDER_SRC_JOIN_RESULT_H_
#define GPUCAP_BUILDER_SRC_JOIN_RESULT_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpucap/builder/annotation_stacks.h"
#include "gpucap/builder/capture_index.h"
#include "gpucap/builder/join_options.h"
#include "correlation_map.h"
#include "flat_map.h"
#include "flow_table.h"
#include "join_rows.h"
#include "launch_flows.h"
#include "rows_again.h"
#include "slice_order.h"
#include "track_registry.h"

namespace gpucap::builder::join_internal {

// The tables a JoinWorkspace keeps from window to window.
struct JoinTables {
  std::vector<ApiRef> apis;
  CorrelationMap api_by_correlation;
  std::vector<Op> ops;
  FlowTable op_flows_in, op_flows_out;  // dependency arrows
  LaunchFlows launch_flows;
  std::vector<SliceRef> refs;
  std::vector<uint32_t> refs_scratch;

  void Clear() {
    apis.clear();
    ops.clear();
    op_flows_in.Clear();
    op_flows_out.Clear();
    refs.clear();
  }
};

inline const ActivityTables& Part(std::span<const ActivityTables* const> parts, uint16_t p) { return *parts[p]; }

struct JoinResult {
  // `steps` are the build's step ranges (the step rule of annotation
  // stacks); `window_steps`, for an nvtx window, the ranges its pattern
  // matches, which decide the ops it holds (WindowJoin::InRangeWindow).
  JoinResult(const CaptureIndex& index, const Window& window, std::span<const ActivityTables* const> parts,
             const JoinOptions& options, JoinTables* tables, const StepRanges& steps,
             const StepRanges* window_steps)
      : index(index), window(window), parts(parts), options(options),
        operators(options.torch_view ? index.operators() : kNoOperators), apis(tables->apis),
        api_by_correlation(tables->api_by_correlation), ops(tables->ops), op_flows_in(tables->op_flows_in),
        op_flows_out(tables->op_flows_out), launch_flows(tables->launch_flows), refs(tables->refs), tracks(index),
        stacks(index.ranges(), steps, operators), window_steps(window_steps) {}
  JoinResult(const JoinResult&) = delete;
  JoinResult& operator=(const JoinResult&) = delete;

  // What was joined: the window, from which rows, how.
  const CaptureIndex& index;
  const Window& window;
  std::span<const ActivityTables* const> parts;
  const JoinOptions& options;
  static inline const TorchOperators kNoOperators;
  const TorchOperators& operators;  // JoinOptions::torch_view's: none without it

  // The workspace's tables (JoinTables).
  std::vector<ApiRef>& apis;
  CorrelationMap& api_by_correlation;
  std::vector<Op>& ops;
  FlowTable &op_flows_in, &op_flows_out;
  LaunchFlows& launch_flows;
  std::vector<SliceRef>& refs;  // one per slice, sorted by track and time once the phases are done

  // The window's own.
  uint64_t duplicate_correlations = 0;  // API records whose correlation id an earlier one has
  std::vector<uint64_t> external_ids;
  std::vector<std::pair<uint16_t, uint32_t>> external_rows;  // (part, row) of external_ids
  FlatMap external_by_correlation;
  FlatMap event_by_sync_id;  // cudaEventSyncId -> index into events
  std::vector<std::pair<uint16_t, uint32_t>> events;    // (part, row)
  std::vector<std::pair<uint16_t, uint32_t>> row_refs;  // overhead / CUDA event slices
  std::vector<GraphRecord> graph_records;  // untimed event records of replays
  std::unordered_map<uint32_t, ContextOwner> context_device;
  std::vector<AnnotationSpan> spans;
  std::vector<MarkerRange> markers;
  std::vector<Counter> counters;
  TrackRegistry tracks;
  // Annotation stacks by docs/semantics.md (never-closed ranges out, the
  // step rule). Describing asks only what makes no id (InnermostAt, OwnerAt,
  // MergedStack of ids made by the phases).
  AnnotationStacks stacks;
  const StepRanges* window_steps;  // nvtx windows: the ranges of the window's pattern

  // Lookups, for the phases and the describers alike.
  int64_t Real(uint64_t cupti_ns) const { return index.clock().ToRealtime(cupti_ns); }
  uint32_t DeviceOfContext(uint32_t context) const;  // join_launches.cc
  // The id the process pushed for a launch (EXTERNAL_CORRELATION); 0: none.
  uint64_t ExternalId(uint32_t correlation) const;  // join_launches.cc
  // Kineto's "External id" of a launch and its GPU ops: the id the process
  // pushed for it (EXTERNAL_CORRELATION), else the stand-in of the innermost
  // range open around the launch. 0: none.
  uint64_t LaunchExternalId(uint32_t correlation, uint32_t launch_stack) const {
    if (uint64_t pushed = ExternalId(correlation)) return pushed;
    return StandInExternalId(stacks.Owner(launch_stack));
  }
  // The same for a call made on `tid` at `t` (its stack then), without
  // making the stack an id (`scratch`: the caller's).
  uint64_t LaunchExternalIdAt(uint32_t correlation, uint32_t tid, uint64_t t, std::vector<uint32_t>* scratch) const {
    if (uint64_t pushed = ExternalId(correlation)) return pushed;
    return StandInExternalId(stacks.OwnerAt(tid, t, scratch));
  }
  uint64_t StandInExternalId(uint32_t innermost) const {
    return innermost == RangeIndex::kNone ? 0 : RangeExternalId(innermost);
  }
  // The stand-in "External id" of an NVTX range (docs/cli.md, "Kineto's
  // arguments"). Kineto gives an op an id and the launches inside it that id;
  // a process that pushed none gets its ranges in that role. The id is the
  // range's start in ns since the recording started, plus 1: unique but for
  // ranges opened in the same nanosecond, the same in every window and in a
  // trimmed copy (a range's number is not), and exact as a JSON double.
  uint64_t RangeExternalId(uint32_t range) const {
    const format::Capture& c = index.capture();
    uint64_t origin = c.session ? c.session->start_cupti_ns : index.extent().start_ns;
    uint64_t start = index.ranges().ranges()[range].start_ns;
    return start >= origin ? start - origin + 1 : 1;
  }
  // The name a range is shown under in this join's view (JoinOptions::torch_view).
  std::string_view ShownRangeName(uint32_t range) const {
    return operators.ShownName(range, index.ranges().ranges()[range].name);
  }
  // Whether this window draws the range (ranges are drawn where they start):
  // a flow between two ranges is drawn when both are.
  bool DrawsRange(uint32_t range) const { return window.Contains(index.ranges().ranges()[range].start_ns); }
  // The ranges open around an op: at its launch, then at its node's capture
  // (join_annotations.cc), into `scratch`.
  std::span<const uint32_t> StackOf(const Op& op, std::vector<uint32_t>* scratch) const;
  // The graph nodes a replayed op waits on, when dependencies are drawn.
  const GraphIndex::Dependencies* Dependencies(const Op& op) const {
    if (!options.graph_dependencies || op.origin == nullptr) return nullptr;
    return &index.graphs().RenderedPredecessors(op.origin->id);
  }
  // The graph node (CUPTI's graphNodeId) an op ran as; 0: none. A kernel's
  // is a join column, the part's until the rows are given back: then read
  // from `kernels`, had again.
  uint64_t GraphNodeOf(const Op& op, RowsAgain<KernelTable>& kernels) const {
    const ActivityTables& p = Part(parts, op.part);
    switch (op.kind) {
      case OpKind::kKernel: return (kernels.released() ? kernels.Of(op.part) : p.kernels).graph_node_id[op.row];
      case OpKind::kMemcpy: return p.memcpys.graph_node_id[op.row];
      case OpKind::kMemset: return p.memsets.graph_node_id[op.row];
      default: return 0;
    }
  }
  // The one rule for a GPU op's track (graph_lanes.cc, docs/semantics.md):
  // ops, their annotation spans and graph event records all ask it.
  OpTrackKey TrackKeyOf(const Op& op) const;
  OpTrackKey TrackKeyOfNode(const GraphNode* origin, uint32_t device, uint32_t stream) const;
};

}  // namespace gpucap::builder::join_internal

#endif  // GPUCAP_BUILDER_SRC_JOIN_RESULT_H_
