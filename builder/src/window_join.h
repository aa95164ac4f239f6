// WindowJoin: the join of one window (join.h's JoinWindow), phase by phase, into a
// JoinResult (join_result.h); then the window's trace, its slices described
// from the result (slice_describer.h) and streamed to the sink
// (piece_stream.h). The phases are the only writers of the result: once
// they are done, describing only reads it.
//
// Each file is one concern of the join:
//   join.cc                 the phases in order, then the header and the slices
//   join_launches.cc        launch <-> op matching, external ids, flows
//   graph_dependencies.cc   dependency arrows inside graph replays
//   join_annotations.cc     annotation stacks: ranges open at launch or capture
//   join_refs.cc            which slices, marks, markers and counters a window draws
//   join_header.cc          the trace header: process, devices, what was skipped
//   join_report_use.cc      what the window referenced (join_use.h), when asked
//   join_host_nodes.cc      graph host nodes' runs, as the recorder timed them
//   join_event_records.cc   graph event-record nodes' runs, between their neighbours
//   graph_lanes.cc          the one rule for the track a GPU op is drawn on
// Private to the builder.
#ifndef GPUCAP_BUILDER_SRC_WINDOW_JOIN_H_
#define GPUCAP_BUILDER_SRC_WINDOW_JOIN_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "gpucap/builder/decode.h"
#include "gpucap/builder/join_options.h"
#include "gpucap/builder/join_use.h"
#include "gpucap/builder/row_source.h"
#include "gpucap/builder/trace_keys.h"
#include "gpucap/builder/trace_model.h"
#include "gpucap/format/activity_kind.h"
#include "join_result.h"
#include "names.h"
#include "rows_again.h"

namespace gpucap::builder::join_internal {

class WindowJoin {
 public:
  // `steps` are the build's step ranges (the step rule of annotation
  // stacks); `window_steps`, for an nvtx window, the ranges its pattern
  // matches, which decide the ops it holds (InRangeWindow).
  WindowJoin(const CaptureIndex& index, const Window& window, std::span<const ActivityTables* const> parts,
             const JoinOptions& options, JoinStats* stats, JoinTables* tables, JoinUse* use,
             const RowSource& rows, const StepRanges& steps, const StepRanges* window_steps)
      : use_(use), idx_(index), w_(window), parts_(parts), rows_(rows), window_rows_(parts, rows),
        kernels_(window_rows_.kernels), api_rows_(window_rows_.apis), options_(options), stats_(*stats),
        t_(*tables), r_(index, window, parts, options, tables, steps, window_steps) {
    t_.Clear();
  }

  // Runs the phases, then writes the window's trace into `sink`, Begin to End.
  Status Run(const DecodeStats& decode, TraceSink* sink);

 private:
  // Phases, in order.
  void IndexLaunches();
  void CollectOps();
  void JoinOps();
  void LinkFlows();
  void LinkDependencies(std::vector<bool>* has_predecessor);  // part of LinkFlows
  void CollectAnnotationSpans();
  void CollectRefs();
  size_t SliceBound() const;  // at least as many as the slices CollectRefs and CollectMarkers add
  void CollectDeviceRefs();  // part of CollectRefs
  void CollectMarkers();
  void CollectHostNodes();  // part of CollectRefs
  void CollectGraphEventRecords();  // part of CollectRefs, after CollectHostNodes
  TraceHeader MakeHeader(const DecodeStats& decode);
  // What the phases referenced, into use_ (join_report_use.cc); the
  // lookups made while slices are described add theirs as they happen
  // (SliceDescriber).
  void ReportUse();
  void UseStack(uint32_t stack);
  void UseContextOwner(uint32_t context);
  void UseExternal(uint32_t correlation);

  // For an nvtx window: whether the launch is the window's range's work
  // (docs/semantics.md); true in other windows.
  bool InRangeWindow(const ApiRef& launch);
  void AddSlice(int64_t ts, int64_t dur, uint32_t track, uint32_t index, RefKind kind, uint8_t depth,
                uint32_t tie);
  // The track of a GPU op's key (JoinResult::TrackKeyOf), made on first use.
  uint32_t TrackOf(const OpTrackKey& key);

  JoinUse* use_;  // null: not asked for
  const CaptureIndex& idx_;
  const Window& w_;
  std::span<const ActivityTables* const> parts_;
  const RowSource& rows_;
  // Kernel and API rows: the parts', until a window too large to hold them
  // gives them back (rows_again.h), then decoded again.
  WindowRows window_rows_;
  RowsAgain<KernelTable>& kernels_;
  RowsAgain<ApiTable>& api_rows_;
  const JoinOptions& options_;
  JoinStats& stats_;
  JoinTables& t_;
  JoinResult r_;  // what the phases match
  std::vector<uint32_t> window_stack_scratch_;  // InRangeWindow's
};

}  // namespace gpucap::builder::join_internal

#endif  // GPUCAP_BUILDER_SRC_WINDOW_JOIN_H_
