// The join of one window (join.h), as the files join_*.cc share it: the
// rows it works on and the one class whose phases they define. Each file is
// one concern of the join:
//   join.cc              the phases in order, streaming slices to the sink
//   join_launches.cc     launch <-> op matching, external ids, flows
//   graph_dependencies.cc  dependency arrows inside graph replays
//   join_annotations.cc  annotation stacks: ranges open at launch or capture
//   join_refs.cc         which slices, marks, markers and counters a window draws
//   join_args.cc         a slice's name, category and arguments
//   join_shared_runs.cc  argument runs that repeat from launch to launch
//   join_header.cc       the trace header: process, devices, what was skipped
//   join_use.cc          what the window referenced (join_use.h), when asked
//   join_graph_launches.cc  graph-mode captures: a span per graph launch
//   join_host_nodes.cc   graph host nodes' runs, as the recorder timed them
//   join_event_records.cc  graph event-record nodes' runs, between their neighbours
//   graph_lanes.cc       the one rule for the track a GPU op is drawn on
// Private to the builder.
#ifndef GPUCAP_BUILDER_SRC_WINDOW_JOIN_H_
#define GPUCAP_BUILDER_SRC_WINDOW_JOIN_H_

#include "gpucap/builder/join.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <tuple>
#include <memory>
#include <unordered_map>

#include "gpucap/builder/annotation_stacks.h"
#include "gpucap/builder/join_use.h"
#include "block_store.h"
#include "correlation_map.h"
#include "flat_map.h"
#include "flow_table.h"
#include "rows_again.h"
#include "launch_flows.h"
#include "name_table.h"
#include "slice_order.h"
#include "track_registry.h"
#include "gpucap/builder/trace_keys.h"
#include "gpucap/format/activity_kind.h"
#include "gpucap/format/cupti_layout.h"
#include "names.h"
#include "occupancy.h"

namespace gpucap::builder {
namespace join_internal {

constexpr uint32_t kNone = UINT32_MAX;
constexpr uint32_t kExternalCustom0 = 3;  // CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0

// kGraph: a whole graph launch (GRAPH_TRACE, join_graph_launches.cc).
enum class OpKind : uint8_t { kKernel, kMemcpy, kMemset, kSync, kGraph };

// A window holds millions, read in several passes: 56 bytes. The graph node
// id stays in the op's row (WindowJoin::GraphNodeOf), read only for ops of
// replays.
struct Op {
  uint64_t start, end;
  const GraphNode* origin = nullptr;  // the capture-time node of a replayed op
  uint32_t row;
  uint32_t correlation;
  uint32_t device, stream;
  uint32_t api = kNone;           // index into apis_
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

}  // namespace join_internal

struct JoinWorkspace::Tables {
  using ApiRef = join_internal::ApiRef;
  using Op = join_internal::Op;
  std::vector<ApiRef> apis;
  CorrelationMap api_by_correlation;
  std::vector<Op> ops;
  FlowTable op_flows_in, op_flows_out;  // dependency arrows
  join_internal::LaunchFlows launch_flows;
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

namespace join_internal {

inline const ActivityTables& Part(std::span<const ActivityTables* const> parts, uint16_t p) { return *parts[p]; }

class WindowJoin {
 public:
  // `steps` are the build's step ranges (the step rule of annotation
  // stacks); `window_steps`, for an nvtx window, the ranges its pattern
  // matches, which decide the ops it holds (InRangeWindow).
  WindowJoin(const CaptureIndex& index, const Window& window,
             std::span<const ActivityTables* const> parts, const JoinOptions& options,
             JoinStats* stats, JoinWorkspace::Tables* tables, JoinUse* use, const RowSource& rows,
             const StepRanges& steps, const StepRanges* window_steps)
      : WindowJoin(index, window, parts, options, stats, tables, use, rows,
                   std::make_unique<Built>(index, steps, window_steps, options.torch_view), nullptr) {
    t_.Clear();
  }
  // A describer of `join`'s slices, for a piece of them on another thread:
  // it reads what `join`'s phases built and has caches of its own. Only
  // while `join` lives, after its phases, when nothing is reported to a
  // JoinUse and no rows were given back (Describe then reads only).
  explicit WindowJoin(WindowJoin& join)
      : WindowJoin(join.idx_, join.w_, join.parts_, join.options_, &join.stats_, &join.t_, nullptr, join.rows_,
                   nullptr, &join.built_) {}

  Status Run(const DecodeStats& decode, TraceSink* sink);
  // Turns a ref back into the slice it stands for (args in this join's
  // scratch, valid until the next Describe).
  void Describe(const SliceRef& r, Slice* s);

 private:
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
  // What the phases build and describing only reads. The join that ran the
  // phases owns it; the describers of its pieces (the describing
  // constructor) share it, with caches and scratch of their own.
  struct Built {
    Built(const CaptureIndex& index, const StepRanges& steps, const StepRanges* window_steps, bool torch_view)
        : operators(torch_view ? index.operators() : kNoOperators),
          tracks(index),
          stacks(index.ranges(), steps, operators),
          window_steps(window_steps) {}
    static inline const TorchOperators kNoOperators;
    const TorchOperators& operators;  // JoinOptions::torch_view's: none without it
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
    TrackRegistry tracks;
    // Annotation stacks by docs/semantics.md (never-closed ranges out, the
    // step rule). Describing asks only InnermostAt, which makes no id.
    AnnotationStacks stacks;
    const StepRanges* window_steps;  // nvtx windows: the ranges of the window's pattern
  };

  WindowJoin(const CaptureIndex& index, const Window& window, std::span<const ActivityTables* const> parts,
             const JoinOptions& options, JoinStats* stats, JoinWorkspace::Tables* tables, JoinUse* use,
             const RowSource& rows, std::unique_ptr<Built> own, Built* shared)
      : use_(use), idx_(index), w_(window), parts_(parts), rows_(rows), kernels_(parts, kKernels, rows),
        api_rows_(parts, kApis, rows), options_(options), stats_(*stats), t_(*tables), own_built_(std::move(own)),
        built_(own_built_ != nullptr ? *own_built_ : *shared), apis_(t_.apis),
        api_by_correlation_(t_.api_by_correlation), external_ids_(built_.external_ids),
        external_rows_(built_.external_rows), external_by_correlation_(built_.external_by_correlation),
        event_by_sync_id_(built_.event_by_sync_id), events_(built_.events), row_refs_(built_.row_refs),
        graph_records_(built_.graph_records), context_device_(built_.context_device), ops_(t_.ops),
        op_flows_in_(t_.op_flows_in), op_flows_out_(t_.op_flows_out), launch_flows_(t_.launch_flows),
        spans_(built_.spans), markers_(built_.markers), tracks_(built_.tracks), refs_(t_.refs),
        stacks_(built_.stacks) {}
  // Slices are streamed by runs of one track (join.cc).
  struct Segment {
    uint32_t track;  // renumbered
    size_t begin, end;
  };
  // A window of more slices than this, whose describing only reads (no
  // JoinUse, every row whole), is described and rendered in pieces of this
  // many on the build's threads when the renderer takes pieces (*streamed:
  // whether it did), at most kPiecesInFlight at once (each its slices'
  // text, ~3.5 MB of JSON), by describer-renderer pairs kept from piece to
  // piece.
  static constexpr size_t kSlicesPerPiece = 1 << 14;
  static constexpr size_t kPiecesInFlight = 4;
  Status StreamPieces(const std::vector<Segment>& segments, TraceSink* sink, bool* streamed);
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
  // What the phases referenced, into use_ (join_use.cc); the lookups made
  // while slices are described add theirs as they happen.
  void ReportUse();
  void UseStack(uint32_t stack);
  void UseRangeOfEvent(uint32_t event);  // the range that event opens or closes
  void UseContextOwner(uint32_t context);
  void UseExternal(uint32_t correlation);
  // Describe, per kind of ref with more to it than a name.
  void DescribeOp(const SliceRef& r, Slice& s);
  void DescribeApi(const SliceRef& r, Slice& s);
  void DescribeRange(const SliceRef& r, Slice& s);
  void OperatorArgs(uint32_t range, const TorchOperatorName& op, Slice& s);  // part of DescribeRange
  void CollectiveRangeArgs(uint32_t range);
  void DescribeMarker(const SliceRef& r, Slice& s);
  void DescribeHostNode(const SliceRef& r, Slice& s);
  void DescribeGraphEventRecord(const SliceRef& r, Slice& s);

  uint32_t DeviceOfContext(uint32_t context) const;
  // The graph node (CUPTI's graphNodeId) an op ran as; 0: none.
  uint64_t GraphNodeOf(const Op& op) {
    const ActivityTables& p = Part(parts_, op.part);
    switch (op.kind) {
      case OpKind::kKernel:  // a join column: the part's until it gives them back
        return (kernels_.released() ? kernels_.Of(op.part) : p.kernels).graph_node_id[op.row];
      case OpKind::kMemcpy: return p.memcpys.graph_node_id[op.row];
      case OpKind::kMemset: return p.memsets.graph_node_id[op.row];
      default: return 0;
    }
  }
  // For an nvtx window: whether the launch is the window's range's work
  // (docs/semantics.md); true in other windows.
  bool InRangeWindow(const ApiRef& launch);
  std::pair<uint32_t, std::string_view> KernelName(const Op& op);
  void AddSlice(int64_t ts, int64_t dur, uint32_t track, uint32_t index, RefKind kind, uint8_t depth,
                uint32_t tie);
  int64_t Real(uint64_t cupti_ns) const { return idx_.clock().ToRealtime(cupti_ns); }
  std::span<const uint32_t> StackOf(const Op& op, std::vector<uint32_t>* scratch) const;
  uint64_t ExternalId(uint32_t correlation) const;
  // Kineto's "External id" of a launch and its GPU ops: the id the process
  // pushed for it (EXTERNAL_CORRELATION), else the stand-in of the innermost
  // range open around the launch. 0: none.
  uint64_t LaunchExternalId(uint32_t correlation, uint32_t launch_stack) const {
    if (uint64_t pushed = ExternalId(correlation)) return pushed;
    return StandInExternalId(stacks_.Owner(launch_stack));
  }
  // The same for a call made on `tid` at `t` (its stack then), without
  // making the stack an id.
  uint64_t LaunchExternalIdAt(uint32_t correlation, uint32_t tid, uint64_t t) {
    if (uint64_t pushed = ExternalId(correlation)) return pushed;
    return StandInExternalId(stacks_.OwnerAt(tid, t, &api_stack_scratch_));
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
  // The name a range is shown under in this join's view (JoinOptions::torch_view).
  std::string_view ShownRangeName(uint32_t range) const {
    return built_.operators.ShownName(range, idx_.ranges().ranges()[range].name);
  }
  // Whether this window draws the range (ranges are drawn where they start):
  // a flow between two ranges is drawn when both are.
  bool DrawsRange(uint32_t range) const { return w_.Contains(idx_.ranges().ranges()[range].start_ns); }
  uint64_t RangeExternalId(uint32_t range) const {
    const format::Capture& c = idx_.capture();
    uint64_t origin = c.session ? c.session->start_cupti_ns : idx_.extent().start_ns;
    uint64_t start = idx_.ranges().ranges()[range].start_ns;
    return start >= origin ? start - origin + 1 : 1;
  }
  // The graph nodes a replayed op waits on, when dependencies are drawn.
  const GraphIndex::Dependencies* Dependencies(const Op& op) const {
    if (!options_.graph_dependencies || op.origin == nullptr) return nullptr;
    return &idx_.graphs().RenderedPredecessors(op.origin->id);
  }

  // The one rule for a GPU op's track (graph_lanes.cc, docs/semantics.md):
  // ops, their annotation spans and graph event records all ask it.
  OpTrackKey TrackKeyOf(const Op& op) const;
  OpTrackKey TrackKeyOfNode(const GraphNode* origin, uint32_t device, uint32_t stream) const;
  uint32_t TrackOf(const OpTrackKey& key);
  void CaptureStreamArgs(const Op& op);  // a graph op's capture stream, into args_

  // Slice argument builders, into args_.
  void OpArgs(const Op& op);
  void ApiArgs(const ApiRef& api);
  void AnnotationArgs(const Op& op);
  void LaunchDetailArgs(const KernelTable& k, uint32_t row);  // launch_details.cc
  void StreamDetailArgs(uint32_t context_id, uint32_t stream_id);  // launch_details.cc
  void CollectiveArgs(const Op& op);                           // collective_args.cc
  // A graph launch's span (OpKind::kGraph): its name, and its args.
  std::pair<uint32_t, std::string_view> GraphLaunchName(const Op& op);
  void GraphLaunchArgs(const Op& op);

  JoinUse* use_;  // null: not asked for
  const CaptureIndex& idx_;
  const Window& w_;
  std::span<const ActivityTables* const> parts_;
  const RowSource& rows_;
  // Kernel and API rows as slices are written: the parts', or decoded again.
  RowsAgain<KernelTable> kernels_;
  RowsAgain<ApiTable> api_rows_;
  const JoinOptions& options_;
  JoinStats& stats_;

  JoinWorkspace::Tables& t_;
  std::unique_ptr<Built> own_built_;  // null in a describer
  Built& built_;
  std::vector<ApiRef>& apis_;
  CorrelationMap& api_by_correlation_;
  uint64_t duplicate_correlations_ = 0;  // API records whose correlation id an earlier one has
  std::vector<uint64_t>& external_ids_;
  std::vector<std::pair<uint16_t, uint32_t>>& external_rows_;
  FlatMap& external_by_correlation_;
  FlatMap& event_by_sync_id_;
  std::vector<std::pair<uint16_t, uint32_t>>& events_;
  std::vector<std::pair<uint16_t, uint32_t>>& row_refs_;
  char host_address_[24] = {};                               // DescribeHostNode's "0x..." arg
  std::vector<GraphRecord>& graph_records_;
  std::unordered_map<uint32_t, ContextOwner>& context_device_;

  std::vector<Op>& ops_;
  FlowTable &op_flows_in_, &op_flows_out_;
  LaunchFlows& launch_flows_;
  LaunchFlows::Ends launch_ends_in_, launch_ends_out_;
  std::vector<AnnotationSpan>& spans_;
  std::vector<MarkerRange>& markers_;

  TrackRegistry& tracks_;
  std::vector<Counter> counters_;
  std::vector<SliceRef>& refs_;

  NameTable names_;
  std::vector<uint32_t> kernel_name_ids_;  // capture string -> name id, 0: not yet
  std::map<std::pair<bool, uint32_t>, std::pair<uint32_t, std::string_view>> api_names_;  // (driver, cbid)
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::pair<uint32_t, std::string_view>> memcpy_names_;

  // Per-slice scratch: a fixed array, since pushing a dozen args per op
  // through a vector showed up in profiles.
  struct Args {
    std::array<Arg, 32> items;
    size_t n = 0;
    uint32_t shared_id = 0;  // see Slice::shared_id
    uint8_t shared_first = 0, shared_count = 0;
    void clear() {
      n = 0;
      shared_id = 0;
      shared_count = 0;
    }
    void push_back(const Arg& a) {
      if (n < items.size()) items[n++] = a;
    }
    std::span<const Arg> span() const { return {items.data(), n}; }
  } args_;
  std::vector<uint32_t> stack_scratch_, collective_scratch_;
  std::unordered_map<uint32_t, uint32_t> range_of_event_;  // filled on first UseRangeOfEvent
  AnnotationStacks& stacks_;
  std::vector<uint32_t> api_stack_scratch_;  // LaunchExternalIdAt's
  std::vector<uint32_t> window_stack_scratch_;  // InRangeWindow's
  std::string scratch_string_;
  std::string input_dims_;                  // OperatorArgs' "Input Dims"
  FlowEnd range_flow_in_, range_flow_out_;  // OperatorArgs' forward -> backward flow ends

  // Runs of an op's arguments that repeat from launch to launch: for a
  // kernel, its launch shape's (registers to occupancy) and its annotation
  // stack; for other ops, the stack. Made once per distinct key and copied
  // into the op's args (Slice::shared_id), so the occupancy arithmetic and a
  // renderer's formatting happen once per key, not once per launch.
  struct RunKey {
    uint32_t kind, device;
    int32_t grid[3], block[3];
    uint32_t registers;
    int32_t static_shared, dynamic_shared;
    uint32_t name_stack;  // NameStackId of the annotation stack
    uint32_t unused[2] = {};  // hashed as seven words
    bool operator==(const RunKey&) const = default;
    uint64_t Hash() const {
      uint64_t words[7];
      std::memcpy(words, this, sizeof(words));
      uint64_t h = 0x243f6a8885a308d3ull;
      for (uint64_t w : words) h = (h ^ w) * 0x9e3779b97f4a7c15ull + (h >> 29);
      return h;
    }
  };
  static_assert(sizeof(RunKey) == 56);
  struct SharedRun {
    RunKey key;
    std::array<int64_t, 3> grid, block;
    std::vector<std::string_view> stack_names;  // used only when deeper than shallow_names
    std::array<std::string_view, 8> shallow_names;
    std::array<Arg, 11> args;
    uint8_t n = 0;
    uint32_t id = 0;  // Slice::shared_id; 0: not shared
  };
  const SharedRun& RunFor(const Op& op);
  void MakeRun(const Op& op, const RunKey& key, std::span<const uint32_t> stack, SharedRun* run);
  // Annotation stacks by their names: in a PyTorch trace every op is a range
  // of its own, so stacks of range indices never repeat, while the names
  // they show do, layer after layer. 0: the empty stack; kNone: not made
  // (too many distinct stacks, or a hash collision).
  uint32_t NameStackId(std::span<const uint32_t> stack);
  // The runs and name stacks kept at once. When either fills up both start
  // over, in the memory they had (BlockStore::Rewind; ids keep counting up,
  // so a renderer's cache stays right): the
  // memory they take stays bounded in a window of any size, and a long
  // window still shares what repeats within each step.
  static constexpr size_t kMaxRuns = kSharedIdsLive;
  void ForgetRuns();
  uint32_t run_id_base_ = 0;  // ids given out before the last ForgetRuns
  BlockStore<SharedRun> runs_;  // args point into their runs: stable addresses
  FlatMap run_by_hash_;
  // In front of run_by_hash_, which outgrows the cache when a window holds
  // tens of thousands of runs: the runs seen lately, by hash (high half of
  // the hash, run index + 1).
  std::array<uint64_t, 4096> recent_runs_{};
  SharedRun unshared_run_;
  std::vector<uint32_t> range_name_ids_;  // range index -> names_ id, 0: not yet
  std::vector<uint32_t> name_stack_pool_, name_stack_begin_{0, 0};
  FlatMap name_stack_by_hash_;
};

}  // namespace join_internal



}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_WINDOW_JOIN_H_
