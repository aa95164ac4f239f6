#include "gpucap/builder/join.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <tuple>
#include <memory>
#include <unordered_map>

#include "gpucap/builder/annotation_stacks.h"
#include "block_store.h"
#include "correlation_map.h"
#include "flat_map.h"
#include "flow_table.h"
#include "name_table.h"
#include "slice_order.h"
#include "track_registry.h"
#include "gpucap/format/cupti_layout.h"
#include "names.h"
#include "occupancy.h"

namespace gpucap::builder {

std::vector<std::pair<std::string, uint64_t>> JoinStats::Named() const {
  return {
      {"gpu ops", gpu_ops},
      {"api calls", api_calls},
      {"ranges", ranges},
      {"flows", flows},
      {"gpu ops without launch record", ops_without_launch},
      {"gpu ops launched in another window", launches_in_other_windows},
      {"gpu ops without timestamps", ops_without_timestamps},
      {"gpu ops without end", ops_without_end},
      {"graph ops", graph_ops},
      {"graph ops without capture-time node", graph_ops_without_node},
      {"annotated gpu ops", annotated_ops},
      {"overflow lanes", overflow_lanes},
  };
}

namespace {

constexpr uint32_t kNone = UINT32_MAX;
constexpr uint64_t kDependencyFlowBase = 1ull << 52;
constexpr uint32_t kExternalCustom0 = 3;  // CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0

enum class OpKind : uint8_t { kKernel, kMemcpy, kMemset, kSync };

// One cache line: a window holds hundreds of thousands, read in several
// passes.
struct Op {
  uint64_t start, end;
  uint64_t graph_node;
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
static_assert(sizeof(Op) == 64);

// NVTX as CUPTI reports it (MARKER records): instants, and start/end pairs
// matched by id.
struct MarkerRange {
  uint64_t start, end;  // end == start for instants
  uint32_t pid, tid;
  uint32_t name, domain;  // capture strings
  bool instant;
  bool closed;
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
};

}  // namespace

struct JoinWorkspace::Tables {
  std::vector<ApiRef> apis;
  CorrelationMap api_by_correlation;
  std::vector<Op> ops;
  FlowTable op_flows_in, op_flows_out, api_flows_out;
  std::vector<SliceRef> refs, refs_scratch;
  std::vector<uint32_t> flow_begin, flow_order, flow_at;

  void Clear() {
    apis.clear();
    ops.clear();
    op_flows_in.Clear();
    op_flows_out.Clear();
    api_flows_out.Clear();
    refs.clear();
  }
};

JoinWorkspace::JoinWorkspace() : tables_(std::make_unique<Tables>()) {}
JoinWorkspace::~JoinWorkspace() = default;

namespace {

class WindowJoin {
 public:
  WindowJoin(const CaptureIndex& index, const Window& window,
             std::span<const ActivityTables* const> parts, const JoinOptions& options,
             JoinStats* stats, JoinWorkspace::Tables* tables)
      : idx_(index), w_(window), parts_(parts), options_(options), stats_(*stats), t_(*tables),
        apis_(t_.apis), api_by_correlation_(t_.api_by_correlation), ops_(t_.ops), op_flows_in_(t_.op_flows_in),
        op_flows_out_(t_.op_flows_out), api_flows_out_(t_.api_flows_out), tracks_(index), refs_(t_.refs),
        stacks_(index.ranges(), index.steps()) {
    t_.Clear();
  }

  Status Run(const DecodeStats& decode, TraceSink* sink);

 private:
  // Phases, in order.
  void IndexLaunches();
  void CollectOps();
  void JoinOps();
  void LinkFlows();
  void CollectAnnotationSpans();
  void CollectRefs();
  void CollectMarkers();
  TraceHeader MakeHeader(const DecodeStats& decode);
  // Turns a ref back into the slice it stands for (args in args_).
  void Describe(const SliceRef& r, Slice* s);

  uint32_t DeviceOfContext(uint32_t context) const;
  // For an nvtx window: whether the launch is the window's range's work
  // (docs/semantics.md); true in other windows.
  bool InRangeWindow(const ApiRef& launch);
  std::pair<uint32_t, std::string_view> KernelName(const Op& op);
  void AddSlice(int64_t ts, int64_t dur, uint32_t track, uint32_t index, RefKind kind, uint8_t depth,
                uint32_t tie);
  int64_t Real(uint64_t cupti_ns) const { return idx_.clock().ToRealtime(cupti_ns); }
  std::span<const uint32_t> StackOf(const Op& op, std::vector<uint32_t>* scratch) const;
  uint64_t ExternalId(uint32_t correlation) const;
  // The graph nodes a replayed op waits on, when dependencies are drawn.
  const GraphIndex::Dependencies* Dependencies(const Op& op) const {
    if (!options_.graph_dependencies || op.origin == nullptr) return nullptr;
    return &idx_.graphs().RenderedPredecessors(op.origin->id);
  }

  // Slice argument builders, into args_.
  void OpArgs(const Op& op);
  void ApiArgs(const ApiRef& api);
  void AnnotationArgs(const Op& op);

  const CaptureIndex& idx_;
  const Window& w_;
  std::span<const ActivityTables* const> parts_;
  const JoinOptions& options_;
  JoinStats& stats_;

  JoinWorkspace::Tables& t_;
  std::vector<ApiRef>& apis_;
  CorrelationMap& api_by_correlation_;
  std::vector<uint64_t> external_ids_;
  FlatMap external_by_correlation_;
  FlatMap event_by_sync_id_;  // cudaEventSyncId -> index into events_
  std::vector<std::pair<uint16_t, uint32_t>> events_;      // (part, row)
  std::vector<std::pair<uint16_t, uint32_t>> row_refs_;    // overhead / CUDA event slices
  std::unordered_map<uint32_t, uint32_t> context_device_;

  std::vector<Op>& ops_;
  FlowTable &op_flows_in_, &op_flows_out_, &api_flows_out_;
  std::vector<AnnotationSpan> spans_;
  std::vector<MarkerRange> markers_;

  TrackRegistry tracks_;
  struct Counter {
    uint32_t track;
    int64_t ts;
    double value;
  };
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
  std::vector<uint32_t> stack_scratch_;
  // Annotation stacks by docs/semantics.md (never-closed ranges out, the step rule).
  AnnotationStacks stacks_;
  std::string scratch_string_;

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
    std::array<Arg, 9> args;
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
  // over (ids keep counting up, so a renderer's cache stays right): the
  // memory they take stays bounded in a window of any size, and a long
  // window still shares what repeats within each step.
  static constexpr size_t kMaxRuns = 1 << 16;
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

const ActivityTables& Part(std::span<const ActivityTables* const> parts, uint16_t p) { return *parts[p]; }

// --- Joins ----------------------------------------------------------------

void WindowJoin::IndexLaunches() {
  size_t n = 0;
  uint32_t low = UINT32_MAX, high = 0;
  for (const ActivityTables* p : parts_) {
    n += p->apis.size();
    for (uint32_t c : p->apis.correlation) {
      low = std::min(low, c);
      high = std::max(high, c);
    }
  }
  apis_.reserve(n);
  api_by_correlation_.Reset(low, high, n);
  for (uint16_t pi = 0; pi < parts_.size(); ++pi) {
    const ApiTable& t = parts_[pi]->apis;
    for (uint32_t r = 0; r < t.size(); ++r) {
      uint32_t index = static_cast<uint32_t>(apis_.size());
      apis_.push_back({pi, r, w_.Contains(t.start[r]) && t.start[r] != 0, t.start[r] != 0});
      // A runtime call and a driver call never share an id; if a damaged
      // capture repeats one, the first record stands.
      api_by_correlation_.Insert(t.correlation[r], index);
    }
    const ExternalCorrelationTable& e = parts_[pi]->externals;
    for (uint32_t r = 0; r < e.size(); ++r) {
      // Prefer CUSTOM0, the kind frameworks push their op ids under.
      uint32_t existing = external_by_correlation_.Find(e.correlation[r]);
      if (existing != FlatMap::kMissing && e.external_kind[r] != kExternalCustom0) continue;
      external_ids_.push_back(e.external_id[r]);
      external_by_correlation_.Insert(e.correlation[r], static_cast<uint32_t>(external_ids_.size() - 1),
                                      true);
    }
    const CudaEventTable& ev = parts_[pi]->cuda_events;
    for (uint32_t r = 0; r < ev.size(); ++r) {
      if (ev.event_sync_id[r] == 0) continue;
      events_.push_back({pi, r});
      event_by_sync_id_.Insert(ev.event_sync_id[r], static_cast<uint32_t>(events_.size() - 1), true);
    }
    const KernelTable& k = parts_[pi]->kernels;
    for (uint32_t r = 0; r < k.size(); ++r) context_device_.try_emplace(k.context[r], k.device[r]);
    const MemcpyTable& m = parts_[pi]->memcpys;
    for (uint32_t r = 0; r < m.size(); ++r) context_device_.try_emplace(m.context[r], m.device[r]);
  }
}

uint32_t WindowJoin::DeviceOfContext(uint32_t context) const {
  auto it = context_device_.find(context);
  return it == context_device_.end() ? 0 : it->second;
}

bool WindowJoin::InRangeWindow(const ApiRef& a) {
  if (w_.range == Window::kNoRange) return true;
  const ApiTable& t = Part(parts_, a.part).apis;
  const Range& range = idx_.ranges().ranges()[w_.range];
  // A range never closed is in no stack: its window holds its own thread's
  // launches to the capture's end.
  if (!range.closed) return t.tid[a.row] == range.os_tid;
  return stacks_.Contains(stacks_.At(t.tid[a.row], t.start[a.row]), w_.range);
}

uint64_t WindowJoin::ExternalId(uint32_t correlation) const {
  uint32_t i = external_by_correlation_.Find(correlation);
  return i == FlatMap::kMissing ? 0 : external_ids_[i];
}

void WindowJoin::CollectOps() {
  auto take = [&](OpKind kind, uint16_t part, uint32_t row, uint64_t start, uint64_t end,
                  uint32_t correlation, uint32_t device, uint32_t stream, uint64_t graph_node) {
    // In a window of the program's work an op belongs by its launch (by its
    // start when there is no launch record); in a time window, by its start.
    uint32_t api = api_by_correlation_.Find(correlation);
    bool by_launch = w_.ops_by_launch && kind != OpKind::kSync && api != FlatMap::kMissing &&
                     apis_[api].start_known;
    bool mine = by_launch ? apis_[api].in_window && InRangeWindow(apis_[api]) : w_.Contains(start);
    if (start == 0) {
      // CUPTI had no timestamp for it. Nothing places it in time, so it is
      // counted once, in the window that holds its launch.
      if (api != FlatMap::kMissing && apis_[api].in_window) stats_.ops_without_timestamps++;
      return;
    }
    if (!mine) return;
    if (end < start) stats_.ops_without_end++;
    Op op;
    op.start = start;
    op.end = std::max(end, start);
    op.graph_node = graph_node;
    op.row = row;
    op.correlation = correlation;
    op.device = device;
    op.stream = stream;
    op.part = part;
    op.kind = kind;
    ops_.push_back(op);
  };
  for (uint16_t pi = 0; pi < parts_.size(); ++pi) {
    const ActivityTables& p = *parts_[pi];
    for (uint32_t r = 0; r < p.kernels.size(); ++r) {
      take(OpKind::kKernel, pi, r, p.kernels.start[r], p.kernels.end[r], p.kernels.correlation[r],
           p.kernels.device[r], p.kernels.stream[r], p.kernels.graph_node_id[r]);
    }
    for (uint32_t r = 0; r < p.memcpys.size(); ++r) {
      take(OpKind::kMemcpy, pi, r, p.memcpys.start[r], p.memcpys.end[r], p.memcpys.correlation[r],
           p.memcpys.device[r], p.memcpys.stream[r], p.memcpys.graph_node_id[r]);
    }
    for (uint32_t r = 0; r < p.memsets.size(); ++r) {
      take(OpKind::kMemset, pi, r, p.memsets.start[r], p.memsets.end[r], p.memsets.correlation[r],
           p.memsets.device[r], p.memsets.stream[r], p.memsets.graph_node_id[r]);
    }
    for (uint32_t r = 0; r < p.syncs.size(); ++r) {
      take(OpKind::kSync, pi, r, p.syncs.start[r], p.syncs.end[r], p.syncs.correlation[r],
           DeviceOfContext(p.syncs.context[r]), p.syncs.stream[r], 0);
    }
  }
  stats_.gpu_ops = ops_.size();
}

void WindowJoin::JoinOps() {
  for (Op& op : ops_) {
    op.api = api_by_correlation_.Find(op.correlation);
    if (op.api == FlatMap::kMissing) {
      op.api = kNone;
      if (op.kind != OpKind::kSync) stats_.ops_without_launch++;
    } else {
      const ApiRef& a = apis_[op.api];
      const ApiTable& t = Part(parts_, a.part).apis;
      op.launch_stack = stacks_.At(t.tid[a.row], t.start[a.row]);
      if (!a.in_window) stats_.launches_in_other_windows++;
    }
    if (op.graph_node != 0) {
      stats_.graph_ops++;
      op.origin = idx_.graphs().Origin(op.graph_node);
      if (op.origin == nullptr) {
        stats_.graph_ops_without_node++;
      } else {
        op.capture_stack = stacks_.At(op.origin->os_tid, op.origin->created_ns);
      }
    }
    if (op.launch_stack != 0 || op.capture_stack != 0) stats_.annotated_ops++;
  }
}

std::span<const uint32_t> WindowJoin::StackOf(const Op& op, std::vector<uint32_t>* scratch) const {
  const AnnotationStacks& ranges = stacks_;
  std::span<const uint32_t> stack;
  if (op.capture_stack == 0) {
    stack = ranges.Stack(op.launch_stack);
  } else if (op.launch_stack == 0) {
    stack = ranges.Stack(op.capture_stack);
  } else {
    // Launch-time ranges outside, capture-time ranges inside; a range open at
    // both times (a whole-run range) appears once.
    scratch->assign(ranges.Stack(op.launch_stack).begin(), ranges.Stack(op.launch_stack).end());
    for (uint32_t r : ranges.Stack(op.capture_stack)) {
      if (std::find(scratch->begin(), scratch->end(), r) == scratch->end()) scratch->push_back(r);
    }
    stack = *scratch;
  }
  // The stack does not depend on the window (docs/semantics.md): an op of
  // another thread is in a step's window through the step rule, not by
  // having the window's range put on top of its own.
  return stack;
}

void WindowJoin::LinkFlows() {
  // Launch -> op: only when both are drawn in this window. Ops grouped by
  // launch (a counting sort: launch indices are dense), each group by start.
  std::vector<uint32_t>& begin = t_.flow_begin;
  begin.assign(apis_.size() + 1, 0);
  for (const Op& op : ops_) {
    if (op.api != kNone && apis_[op.api].in_window) begin[op.api + 1]++;
  }
  for (size_t i = 0; i < apis_.size(); ++i) begin[i + 1] += begin[i];
  std::vector<uint32_t>& order = t_.flow_order;
  order.resize(begin.back());
  {
    std::vector<uint32_t>& at = t_.flow_at;
    at.assign(begin.begin(), begin.end() - 1);
    for (uint32_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].api != kNone && apis_[ops_[i].api].in_window) order[at[ops_[i].api]++] = i;
    }
  }
  for (size_t a = 0; a < apis_.size(); ++a) {
    if (begin[a + 1] - begin[a] > 1) {
      std::sort(order.begin() + begin[a], order.begin() + begin[a + 1], [&](uint32_t x, uint32_t y) {
        return ops_[x].start != ops_[y].start ? ops_[x].start < ops_[y].start : x < y;
      });
    }
  }
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    uint32_t api = ops_[order[i]].api;
    for (uint64_t k = 0; j < order.size() && ops_[order[j]].api == api; ++j, ++k) {
      // A launch with several ops (a graph launch) starts one flow per op:
      // importers bind one start to one end.
      FlowEnd f{ops_[order[j]].correlation + (k << 32), FlowKind::kLaunch};
      op_flows_in_.Add(order[j], f);
      api_flows_out_.Add(api, f);
    }
    i = j;
  }
  // Graph dependencies between ops of one replay.
  if (options_.graph_dependencies) {
    std::map<std::pair<uint32_t, uint64_t>, uint32_t> by_node;  // (launch, origin) -> op
    for (uint32_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].origin != nullptr) by_node.emplace(std::pair{ops_[i].correlation, ops_[i].origin->id}, i);
    }
    uint64_t next = kDependencyFlowBase;
    for (uint32_t v = 0; v < ops_.size(); ++v) {
      const GraphIndex::Dependencies* deps = Dependencies(ops_[v]);
      if (deps == nullptr) continue;
      for (uint64_t pred : deps->ops) {
        auto it = by_node.find({ops_[v].correlation, pred});
        if (it == by_node.end()) continue;
        FlowEnd f{next++, FlowKind::kGraphDependency};
        op_flows_out_.Add(it->second, f);
        op_flows_in_.Add(v, f);
      }
    }
  }
  op_flows_in_.Build(ops_.size());
  op_flows_out_.Build(ops_.size());
  api_flows_out_.Build(apis_.size());
  stats_.flows = api_flows_out_.size() + op_flows_out_.size();
}

void WindowJoin::CollectAnnotationSpans() {
  struct Key {
    uint32_t range, device, stream, replay;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = (uint64_t{k.range} << 32 | k.stream) * 0x9e3779b97f4a7c15ull;
      return static_cast<size_t>(h ^ (uint64_t{k.device} << 40 | k.replay) * 0xc2b2ae3d27d4eb4full);
    }
  };
  std::unordered_map<Key, uint32_t, KeyHash> spans;
  // Consecutive ops mostly share stacks and stream; reuse the last lookup.
  struct Last {
    uint32_t launch = kNone, capture = kNone, device = kNone, stream = kNone, replay = kNone;
    std::vector<uint32_t> spans;
  } last;
  const AnnotationStacks& ranges = stacks_;
  for (const Op& op : ops_) {
    if (op.kind == OpKind::kSync || (op.launch_stack == 0 && op.capture_stack == 0)) continue;
    uint32_t replay = op.capture_stack != 0 ? op.correlation : 0;
    if (last.launch != op.launch_stack || last.capture != op.capture_stack || last.device != op.device ||
        last.stream != op.stream || last.replay != replay) {
      last = Last{op.launch_stack, op.capture_stack, op.device, op.stream, replay, {}};
      uint8_t depth = 0;
      auto add = [&](uint32_t range, uint32_t key_replay) {
        auto [it, inserted] = spans.try_emplace(Key{range, op.device, op.stream, key_replay},
                                                static_cast<uint32_t>(spans_.size()));
        if (inserted) {
          spans_.push_back({range, op.device, op.stream, key_replay, op.start, op.end, depth});
        }
        last.spans.push_back(it->second);
        depth++;
      };
      for (uint32_t r : ranges.Stack(op.launch_stack)) add(r, 0);
      auto launch = ranges.Stack(op.launch_stack);
      for (uint32_t r : ranges.Stack(op.capture_stack)) {
        if (std::find(launch.begin(), launch.end(), r) == launch.end()) add(r, replay);
      }
    }
    for (uint32_t s : last.spans) {
      spans_[s].start = std::min(spans_[s].start, op.start);
      spans_[s].end = std::max(spans_[s].end, op.end);
    }
  }
}

void WindowJoin::AddSlice(int64_t ts, int64_t dur, uint32_t track, uint32_t index, RefKind kind,
                          uint8_t depth, uint32_t tie) {
  refs_.push_back(SliceRef{ts, dur, track, index, kind, depth, tie});
}

void WindowJoin::CollectRefs() {
  refs_.reserve(ops_.size() * 2 + spans_.size());
  for (uint32_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    int64_t ts = Real(op.start);
    AddSlice(ts, std::max<int64_t>(Real(op.end) - ts, 0), tracks_.StreamTrack(op.device, op.stream), i,
             RefKind::kOp, 0, op.correlation);
  }
  for (uint32_t i = 0; i < apis_.size(); ++i) {
    const ApiRef& a = apis_[i];
    if (!a.in_window) continue;
    const ApiTable& t = Part(parts_, a.part).apis;
    stats_.api_calls++;
    uint32_t pid = t.pid[a.row] != 0 ? t.pid[a.row] : idx_.pid();
    int64_t ts = Real(t.start[a.row]);
    int64_t dur = t.end[a.row] >= t.start[a.row] ? Real(t.end[a.row]) - ts : 0;
    // A driver call made inside a runtime call nests inside it.
    AddSlice(ts, std::max<int64_t>(dur, 0), tracks_.ThreadTrack(pid, t.tid[a.row]), i, RefKind::kApi,
             t.domain[a.row] == ApiDomain::kDriver ? 1 : 0, t.correlation[a.row]);
  }
  for (uint32_t i = 0; i < spans_.size(); ++i) {
    const AnnotationSpan& s = spans_[i];
    int64_t ts = Real(s.start);
    AddSlice(ts, Real(s.end) - ts, tracks_.StreamTrack(s.device, s.stream), i, RefKind::kAnnotationSpan, s.depth,
             s.range);
  }
  // Ranges starting in the window: push/pop on their thread, start/end (which
  // need not nest) on a track of their own.
  const std::vector<Range>& ranges = idx_.ranges().ranges();
  auto first = std::lower_bound(ranges.begin(), ranges.end(), w_.start_ns,
                                [](const Range& r, uint64_t t) { return r.start_ns < t; });
  uint32_t pid = idx_.pid();
  uint32_t start_end_track = kNone;
  for (auto it = first; it != ranges.end() && it->start_ns < w_.end_ns; ++it) {
    uint32_t i = static_cast<uint32_t>(it - ranges.begin());
    uint32_t track;
    if (it->push_pop) {
      track = tracks_.ThreadTrack(pid, it->os_tid);
    } else {
      if (start_end_track == kNone) {
        start_end_track = tracks_.SyntheticTrack(tracks_.CpuProcess(pid), "NVTX start/end ranges", 0x7ffffff0);
      }
      track = start_end_track;
    }
    int64_t ts = Real(it->start_ns);
    AddSlice(ts, Real(it->end_ns) - ts, track, i, RefKind::kRange, 0, i);
    stats_.ranges++;
  }
  const auto& events = idx_.capture().ranges;
  for (uint32_t e : idx_.ranges().marks()) {
    const format::RangeEvent& m = events[e];
    if (!w_.Contains(m.timestamp_ns)) continue;
    AddSlice(Real(m.timestamp_ns), -1, tracks_.ThreadTrack(pid, m.os_tid), e, RefKind::kMark, 0, e);
  }
  for (uint16_t pi = 0; pi < parts_.size(); ++pi) {
    const OverheadTable& o = parts_[pi]->overheads;
    for (uint32_t r = 0; r < o.size(); ++r) {
      if (!w_.Contains(o.start[r])) continue;
      int64_t ts = Real(o.start[r]);
      row_refs_.push_back({pi, r});
      AddSlice(ts, std::max<int64_t>(Real(o.end[r]) - ts, 0), tracks_.OverheadTrack(),
               static_cast<uint32_t>(row_refs_.size() - 1), RefKind::kOverhead, 0, o.overhead_kind[r]);
    }
    const CudaEventTable& ev = parts_[pi]->cuda_events;
    for (uint32_t r = 0; r < ev.size(); ++r) {
      uint64_t t = ev.device_timestamp[r];
      if (t == 0 || !w_.Contains(t)) continue;
      uint32_t device = ev.device[r] != 0 ? ev.device[r] : DeviceOfContext(ev.context[r]);
      row_refs_.push_back({pi, r});
      AddSlice(Real(t), 0, tracks_.StreamTrack(device, ev.stream[r]), static_cast<uint32_t>(row_refs_.size() - 1),
               RefKind::kCudaEvent, 0, ev.correlation[r]);
    }
    const EnvironmentTable& env = parts_[pi]->environment;
    for (uint32_t r = 0; r < env.size(); ++r) {
      if (!w_.Contains(env.timestamp[r])) continue;
      int64_t ts = Real(env.timestamp[r]);
      uint32_t d = env.device[r];
      switch (env.kind[r]) {
        case 1:
          counters_.push_back({tracks_.CounterTrack(d, "SM clock", "MHz"), ts, double(env.sm_clock[r])});
          counters_.push_back({tracks_.CounterTrack(d, "memory clock", "MHz"), ts, double(env.memory_clock[r])});
          break;
        case 2:
          counters_.push_back({tracks_.CounterTrack(d, "GPU temperature", "C"), ts, double(env.temperature[r])});
          break;
        case 3:
          counters_.push_back({tracks_.CounterTrack(d, "power", "W"), ts, env.power[r] / 1000.0});
          break;
        case 4:
          counters_.push_back({tracks_.CounterTrack(d, "fan speed", "%"), ts, double(env.fan_speed[r])});
          break;
        default:
          break;
      }
    }
  }
  // Counters the recorder sampled itself (NVML: power, clocks).
  std::map<uint32_t, const format::CounterDef*> defs;
  for (const format::CounterDef& d : idx_.capture().counter_defs) defs[d.id] = &d;
  for (const format::CounterSample& s : idx_.capture().counter_samples) {
    if (!w_.Contains(s.timestamp_ns)) continue;
    auto it = defs.find(s.id);
    if (it == defs.end()) continue;
    counters_.push_back({tracks_.CounterTrack(it->second->device_id, it->second->name, it->second->unit),
                         Real(s.timestamp_ns), s.value});
  }
  stats_.counters = counters_.size();
}

void WindowJoin::CollectMarkers() {
  constexpr uint32_t kInstant = 1u << 0, kStart = 1u << 1, kEnd = 1u << 2;  // CUpti_ActivityFlag
  std::map<uint32_t, size_t> open;  // marker id -> markers_ index
  std::vector<std::tuple<uint64_t, uint16_t, uint32_t>> rows;  // by time: starts before their ends
  for (uint16_t pi = 0; pi < parts_.size(); ++pi) {
    const MarkerTable& m = parts_[pi]->markers;
    for (uint32_t r = 0; r < m.size(); ++r) rows.emplace_back(m.timestamp[r], pi, r);
  }
  std::sort(rows.begin(), rows.end());
  for (auto [ts, pi, r] : rows) {
    const MarkerTable& m = parts_[pi]->markers;
    uint32_t pid = m.pid[r] != 0 ? m.pid[r] : idx_.pid();
    if (m.flags[r] & kEnd) {
      auto it = open.find(m.id[r]);
      if (it == open.end()) continue;
      markers_[it->second].end = std::max(ts, markers_[it->second].start);
      markers_[it->second].closed = true;
      open.erase(it);
    } else if (m.flags[r] & (kStart | kInstant)) {
      bool instant = (m.flags[r] & kInstant) != 0;
      markers_.push_back({ts, ts, pid, m.tid[r], m.name[r], m.domain[r], instant, instant});
      if (!instant) open[m.id[r]] = markers_.size() - 1;
    }
  }
  for (uint32_t i = 0; i < markers_.size(); ++i) {
    MarkerRange& mk = markers_[i];
    if (!w_.Contains(mk.start)) continue;
    if (!mk.closed) mk.end = std::max(mk.start, w_.end_ns);  // ends after what was decoded
    int64_t ts = Real(mk.start);
    AddSlice(ts, mk.instant ? -1 : Real(mk.end) - ts, tracks_.ThreadTrack(mk.pid, mk.tid), i, RefKind::kMarker, 0,
             i);
  }
}

// --- Names and arguments ----------------------------------------------------

std::pair<uint32_t, std::string_view> WindowJoin::KernelName(const Op& op) {
  const KernelTable& k = Part(parts_, op.part).kernels;
  uint32_t s = k.name[op.row];
  if (s != kNoString) {
    if (kernel_name_ids_.empty()) kernel_name_ids_.assign(idx_.capture().strings.size(), 0);
    if (kernel_name_ids_[s] == 0) kernel_name_ids_[s] = names_.Intern(idx_.KernelName(s)).first;
    return {kernel_name_ids_[s], idx_.KernelName(s)};
  }
  // The pointer was never defined: the node the kernel was captured as may
  // still know its function.
  if (op.origin != nullptr && !op.origin->function_name.empty()) {
    return names_.Intern(Demangle(op.origin->function_name));
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "kernel at 0x%llx (name unknown)",
                static_cast<unsigned long long>(k.name_pointer[op.row]));
  return names_.Intern(buf);
}

uint32_t WindowJoin::NameStackId(std::span<const uint32_t> stack) {
  if (stack.empty()) return 0;
  const std::vector<Range>& ranges = idx_.ranges().ranges();
  if (range_name_ids_.empty()) range_name_ids_.assign(ranges.size(), 0);
  uint64_t h = 0x13198a2e03707344ull;
  for (uint32_t r : stack) {
    uint32_t& id = range_name_ids_[r];
    if (id == 0) id = names_.Intern(ranges[r].name).first;
    h = (h ^ id) * 0x9e3779b97f4a7c15ull + (h >> 31);
  }
  auto same = [&](uint32_t n) {
    std::span<const uint32_t> kept(name_stack_pool_.data() + name_stack_begin_[n],
                                   name_stack_begin_[n + 1] - name_stack_begin_[n]);
    if (kept.size() != stack.size()) return false;
    for (size_t i = 0; i < kept.size(); ++i) {
      if (kept[i] != range_name_ids_[stack[i]]) return false;
    }
    return true;
  };
  uint32_t found = name_stack_by_hash_.Find(h);
  if (found != FlatMap::kMissing) return same(found) ? found : kNone;
  uint32_t id = static_cast<uint32_t>(name_stack_begin_.size() - 1);
  for (uint32_t r : stack) name_stack_pool_.push_back(range_name_ids_[r]);
  name_stack_begin_.push_back(static_cast<uint32_t>(name_stack_pool_.size()));
  name_stack_by_hash_.Insert(h, id);
  return id;
}

void WindowJoin::ForgetRuns() {
  run_id_base_ += static_cast<uint32_t>(runs_.size());
  runs_.clear();
  run_by_hash_.Reset(0);
  recent_runs_.fill(0);
  name_stack_pool_.clear();
  name_stack_begin_.assign(2, 0);
  name_stack_by_hash_.Reset(0);
}

const WindowJoin::SharedRun& WindowJoin::RunFor(const Op& op) {
  if (runs_.size() >= kMaxRuns || name_stack_begin_.size() > kMaxRuns) ForgetRuns();
  std::span<const uint32_t> stack = StackOf(op, &stack_scratch_);
  RunKey key{};
  key.kind = static_cast<uint32_t>(op.kind);
  key.name_stack = NameStackId(stack);
  if (op.kind == OpKind::kKernel) {
    const KernelTable& k = Part(parts_, op.part).kernels;
    uint32_t r = op.row;
    key.device = k.device[r];
    key.grid[0] = k.grid_x[r], key.grid[1] = k.grid_y[r], key.grid[2] = k.grid_z[r];
    key.block[0] = k.block_x[r], key.block[1] = k.block_y[r], key.block[2] = k.block_z[r];
    key.registers = k.registers_per_thread[r];
    key.static_shared = k.static_shared_memory[r];
    key.dynamic_shared = k.dynamic_shared_memory[r];
  }
  uint32_t found = FlatMap::kMissing;
  uint64_t hash = key.Hash();
  uint64_t& recent = recent_runs_[hash % recent_runs_.size()];
  if (key.name_stack != kNone) {
    if ((recent >> 32) == (hash >> 32) && static_cast<uint32_t>(recent) != 0) {
      const SharedRun& run = runs_[static_cast<uint32_t>(recent) - 1];
      if (run.key == key) return run;
    }
    found = run_by_hash_.Find(hash);
    if (found != FlatMap::kMissing && runs_[found].key == key) {
      recent = (hash >> 32 << 32) | (found + 1);
      return runs_[found];
    }
  }
  if (key.name_stack == kNone || found != FlatMap::kMissing || run_id_base_ + runs_.size() >= UINT32_MAX - 1) {
    // Not to be shared: made afresh each time.
    MakeRun(op, key, stack, &unshared_run_);
    unshared_run_.id = 0;
    return unshared_run_;
  }
  SharedRun& run = runs_.emplace_back();
  run_by_hash_.Insert(hash, static_cast<uint32_t>(runs_.size() - 1));
  recent = (hash >> 32 << 32) | runs_.size();
  MakeRun(op, key, stack, &run);
  run.id = run_id_base_ + static_cast<uint32_t>(runs_.size());
  return run;
}

void WindowJoin::MakeRun(const Op& op, const RunKey& key, std::span<const uint32_t> stack, SharedRun* run) {
  run->key = key;
  run->n = 0;
  run->stack_names.clear();
  auto push = [&](const Arg& a) { run->args[run->n++] = a; };
  if (op.kind == OpKind::kKernel) {
    static const format::DeviceInfo kUnknownDevice;
    const format::DeviceInfo* d = idx_.Device(key.device);
    if (d == nullptr) d = &kUnknownDevice;
    KernelShape shape{key.grid[0], key.grid[1], key.grid[2], key.block[0], key.block[1], key.block[2],
                      static_cast<uint16_t>(key.registers), key.static_shared, key.dynamic_shared};
    run->grid = {key.grid[0], key.grid[1], key.grid[2]};
    run->block = {key.block[0], key.block[1], key.block[2]};
    push(Arg::Uint("registers per thread", key.registers));
    push(Arg::Int("shared memory", int64_t{key.static_shared} + key.dynamic_shared));
    push(Arg::Float6("blocks per SM", BlocksPerSm(*d, shape)));
    push(Arg::Float6("warps per SM", WarpsPerSm(*d, shape)));
    push(Arg::Ints("grid", run->grid));
    push(Arg::Ints("block", run->block));
    push(Arg::Int("est. achieved occupancy %", EstimatedOccupancyPercent(*d, shape)));
  }
  if (!stack.empty()) {
    const std::vector<Range>& ranges = idx_.ranges().ranges();
    std::span<const std::string_view> names;
    if (stack.size() <= run->shallow_names.size()) {
      for (size_t i = 0; i < stack.size(); ++i) run->shallow_names[i] = ranges[stack[i]].name;
      names = std::span<const std::string_view>(run->shallow_names.data(), stack.size());
    } else {
      for (uint32_t r : stack) run->stack_names.push_back(ranges[r].name);
      names = run->stack_names;
    }
    push(Arg::String("annotation", names.back()));
    push(Arg::Strings("annotation stack", names));
  }
}

void WindowJoin::AnnotationArgs(const Op& op) {
  const SharedRun& run = RunFor(op);
  if (run.id != 0 && run.n != 0) {
    args_.shared_id = run.id;
    args_.shared_first = static_cast<uint8_t>(args_.n);
    args_.shared_count = run.n;
  }
  for (uint8_t i = 0; i < run.n; ++i) args_.push_back(run.args[i]);
  if (op.graph_node != 0) {
    args_.push_back(Arg::Uint("graph node", op.graph_node));
    if (op.origin != nullptr) {
      args_.push_back(Arg::Uint("graph", op.origin->graph_id));
      args_.push_back(Arg::Uint("capture node", op.origin->id));
    }
  }
  const GraphIndex::Dependencies* deps = Dependencies(op);
  if (deps != nullptr && !deps->host_functions.empty()) {
    args_.push_back(Arg::Strings("after host functions", deps->host_functions));
  }
  // The application's own descriptions of this op (a collective's size, a
  // layer's shape), keyed the ways the recorder lets it key them.
  auto blobs = [&](format::MetadataKey kind, uint64_t key) {
    for (const format::MetadataBlob* b : idx_.Metadata(kind, key)) args_.push_back(Arg::String(b->name, b->data).Foreign());
  };
  blobs(format::MetadataKey::kCorrelationId, op.correlation);
  std::span<const uint32_t> launch_ranges = stacks_.Stack(op.launch_stack);
  if (!launch_ranges.empty()) blobs(format::MetadataKey::kRange, launch_ranges.back());
  if (uint64_t external = ExternalId(op.correlation)) blobs(format::MetadataKey::kExternalId, external);
  if (op.graph_node != 0) {
    blobs(format::MetadataKey::kGraphNode, op.graph_node);
    if (op.origin != nullptr && op.origin->id != op.graph_node) blobs(format::MetadataKey::kGraphNode, op.origin->id);
  }
}

void WindowJoin::OpArgs(const Op& op) {
  args_.clear();
  uint64_t external = ExternalId(op.correlation);
  if (external != 0 && op.kind != OpKind::kSync) args_.push_back(Arg::Uint("External id", external));
  const ActivityTables& p = Part(parts_, op.part);
  auto bandwidth = [&](uint64_t bytes, uint64_t start, uint64_t end) {
    uint64_t dur = end > start ? end - start : 0;
    if (dur == 0) return Arg::String("memory bandwidth (GB/s)", "N/A");
    return Arg::Double("memory bandwidth (GB/s)", static_cast<double>(bytes) / static_cast<double>(dur));
  };
  switch (op.kind) {
    case OpKind::kKernel: {
      const KernelTable& k = p.kernels;
      uint32_t r = op.row;
      args_.push_back(Arg::Uint("queued", k.queued[r] / 1000));
      args_.push_back(Arg::Uint("device", k.device[r]));
      args_.push_back(Arg::Uint("context", k.context[r]));
      args_.push_back(Arg::Uint("stream", k.stream[r]));
      args_.push_back(Arg::Uint("correlation", k.correlation[r]));
      // Registers to occupancy come with the annotation stack (RunFor).
      break;
    }
    case OpKind::kMemcpy: {
      const MemcpyTable& m = p.memcpys;
      uint32_t r = op.row;
      if (m.peer[r]) {
        args_.push_back(Arg::Uint("fromDevice", m.src_device[r]));
        args_.push_back(Arg::Uint("inDevice", m.device[r]));
        args_.push_back(Arg::Uint("toDevice", m.dst_device[r]));
        args_.push_back(Arg::Uint("fromContext", m.src_context[r]));
        args_.push_back(Arg::Uint("inContext", m.context[r]));
        args_.push_back(Arg::Uint("toContext", m.dst_context[r]));
      } else {
        args_.push_back(Arg::Uint("device", m.device[r]));
        args_.push_back(Arg::Uint("context", m.context[r]));
      }
      args_.push_back(Arg::Uint("stream", m.stream[r]));
      args_.push_back(Arg::Uint("correlation", m.correlation[r]));
      args_.push_back(Arg::Uint("bytes", m.bytes[r]));
      args_.push_back(bandwidth(m.bytes[r], m.start[r], m.end[r]));
      break;
    }
    case OpKind::kMemset: {
      const MemsetTable& m = p.memsets;
      uint32_t r = op.row;
      args_.push_back(Arg::Uint("device", m.device[r]));
      args_.push_back(Arg::Uint("context", m.context[r]));
      args_.push_back(Arg::Uint("stream", m.stream[r]));
      args_.push_back(Arg::Uint("correlation", m.correlation[r]));
      args_.push_back(Arg::Uint("bytes", m.bytes[r]));
      args_.push_back(bandwidth(m.bytes[r], m.start[r], m.end[r]));
      break;
    }
    case OpKind::kSync: {
      const SyncTable& s = p.syncs;
      uint32_t r = op.row;
      args_.push_back(Arg::String("cuda_sync_kind", SyncTypeName(s.type[r])));
      if (s.type[r] == 1 || s.type[r] == 2) {  // event sync, stream wait event
        int64_t wait_stream = -1, wait_correlation = -1;
        uint32_t e = s.event_sync_id[r] != 0 ? event_by_sync_id_.Find(s.event_sync_id[r]) : FlatMap::kMissing;
        if (e != FlatMap::kMissing) {
          const CudaEventTable& ev = Part(parts_, events_[e].first).cuda_events;
          wait_stream = ev.stream[events_[e].second];
          wait_correlation = ev.correlation[events_[e].second];
        }
        args_.push_back(Arg::Int("wait_on_stream", wait_stream));
        args_.push_back(Arg::Uint("wait_on_cuda_event_id", s.cuda_event_id[r]));
        args_.push_back(Arg::Int("wait_on_cuda_event_record_corr_id", wait_correlation));
      }
      args_.push_back(Arg::Int("stream", static_cast<int32_t>(s.stream[r])));
      args_.push_back(Arg::Uint("correlation", s.correlation[r]));
      args_.push_back(Arg::Uint("device", op.device));
      args_.push_back(Arg::Uint("context", s.context[r]));
      return;
    }
  }
  AnnotationArgs(op);
}

void WindowJoin::ApiArgs(const ApiRef& a) {
  args_.clear();
  const ApiTable& t = Part(parts_, a.part).apis;
  uint64_t external = ExternalId(t.correlation[a.row]);
  if (external != 0) args_.push_back(Arg::Uint("External id", external));
  args_.push_back(Arg::Uint("cbid", t.cbid[a.row]));
  args_.push_back(Arg::Uint("correlation", t.correlation[a.row]));
}

// --- Output -----------------------------------------------------------------

TraceHeader WindowJoin::MakeHeader(const DecodeStats& decode) {
  TraceHeader h;
  const format::Capture& c = idx_.capture();
  int64_t start = Real(w_.start_ns);
  // Whole seconds, like Kineto's base: readable, and small relative times
  // keep their nanoseconds as doubles.
  h.base_time_ns = start >= 0 ? start / 1'000'000'000 * 1'000'000'000 : 0;
  h.trace_name = options_.trace_name;
  h.devices = c.devices;
  if (c.session) {
    h.cuda_driver_version = c.session->cuda_driver_version;
    h.cuda_runtime_version = c.session->cuda_runtime_version;
    h.cupti_version = c.session->cupti_runtime_version;
    h.rank = c.session->rank;
    h.local_rank = c.session->local_rank;
    h.world_size = c.session->world_size;
    h.host = c.session->host;
  }
  h.window_index = w_.index;
  h.window_label = w_.label;
  h.window_start_ns = start;
  h.window_end_ns = Real(w_.end_ns);
  h.capture_path = idx_.path();
  // Drops and damage: the recorder's last word on them.
  const format::RecorderStats* rs = nullptr;
  if (c.trailer) rs = &c.trailer->stats;
  else if (!c.stats.empty()) rs = &c.stats.back();
  if (rs != nullptr) {
    h.counts.push_back({"cupti dropped records", rs->cupti_dropped_records});
    h.counts.push_back({"buffers dropped (pool empty)", rs->buffers_dropped_pool_empty});
    h.counts.push_back({"buffers dropped (queue full)", rs->buffers_dropped_queue_full});
    h.counts.push_back({"bytes dropped", rs->bytes_dropped});
    h.counts.push_back({"messages dropped", rs->messages_dropped});
    if (!rs->writer_error.empty()) h.warnings.push_back("recorder writer error: " + rs->writer_error);
  }
  h.counts.push_back({"damaged regions", c.report.damage.size()});
  h.counts.push_back({"bytes lost at the tail", c.report.tail_bytes_lost});
  h.counts.push_back({"frames missing", c.report.sequence_gaps});
  h.counts.push_back({"clean shutdown", c.trailer && c.trailer->clean_shutdown ? 1 : 0});
  uint64_t skipped = 0;
  for (auto [k, n] : decode.skipped_kinds) skipped += n;
  h.counts.push_back({"records skipped (no layout)", skipped});
  h.counts.push_back({"corrupt chunks", decode.corrupt_chunks});
  h.counts.push_back({"unresolved kernel names", decode.unresolved_names});
  for (auto& kv : stats_.Named()) h.counts.push_back(kv);
  for (const std::string& line : c.report.Describe(idx_.path())) h.warnings.push_back(line);
  for (const std::string& line : idx_.decoder().Describe(decode)) h.warnings.push_back(line);
  if (!idx_.clock().calibrated()) {
    h.warnings.push_back("no clock samples: CUPTI timestamps taken as CLOCK_REALTIME");
  }
  return h;
}

Status WindowJoin::Run(const DecodeStats& decode, TraceSink* sink) {
  IndexLaunches();
  CollectOps();
  JoinOps();
  LinkFlows();
  CollectAnnotationSpans();
  CollectRefs();
  CollectMarkers();
  stats_.overflow_lanes += SortAndPackSlices(&refs_, &tracks_, &t_.refs_scratch);

  // Tracks get the numbers of the order the trace lists them in. Slices are
  // grouped by track already (lanes aside): they are streamed by runs of one
  // track, the runs ordered by the track's new number, rather than moved.
  TrackRegistry::Ordered order = tracks_.Order();
  const std::vector<uint32_t>& track_id = order.track_id;
  struct Segment {
    uint32_t track;  // renumbered
    size_t begin, end;
  };
  std::vector<Segment> segments;
  for (size_t i = 0; i < refs_.size();) {
    size_t j = i + 1;
    while (j < refs_.size() && refs_[j].track == refs_[i].track) ++j;
    segments.push_back({track_id[refs_[i].track], i, j});
    i = j;
  }
  // Stable: a lane's segments, spread over its parent's, stay in time order.
  std::stable_sort(segments.begin(), segments.end(),
                   [](const Segment& a, const Segment& b) { return a.track < b.track; });
  // Sorted once, after the tracks have their final numbers.
  for (Counter& c : counters_) c.track = track_id[c.track];
  std::stable_sort(counters_.begin(), counters_.end(), [](const Counter& a, const Counter& b) {
    return a.track != b.track ? a.track < b.track : a.ts < b.ts;
  });
  stats_.slices = refs_.size();

  TraceHeader header = MakeHeader(decode);
  header.processes = std::move(order.processes);
  header.tracks = std::move(order.tracks);
  GPUCAP_RETURN_IF_ERROR(sink->Begin(header));
  for (const Segment& g : segments) {
    for (size_t i = g.begin; i < g.end; ++i) {
      Slice s;
      Describe(refs_[i], &s);
      s.track = g.track;
      GPUCAP_RETURN_IF_ERROR(sink->AddSlice(s));
    }
  }
  for (const Counter& c : counters_) {
    GPUCAP_RETURN_IF_ERROR(sink->AddCounter(CounterPoint{c.track, c.ts, c.value}));
  }
  return sink->End();
}

void WindowJoin::Describe(const SliceRef& r, Slice* out) {
  const std::vector<Range>& ranges = idx_.ranges().ranges();
  const auto& events = idx_.capture().ranges;
  Slice& s = *out;
  {
    s.track = r.track;
    s.ts_ns = r.ts;
    s.dur_ns = r.dur;
    switch (r.kind) {
      case RefKind::kOp: {
        const Op& op = ops_[r.index];
        std::pair<uint32_t, std::string_view> name;
        const ActivityTables& p = Part(parts_, op.part);
        switch (op.kind) {
          case OpKind::kKernel:
            name = KernelName(op);
            s.category = Category::kKernel;
            break;
          case OpKind::kMemcpy: {
            auto k = std::tuple<uint32_t, uint32_t, uint32_t>(p.memcpys.copy_kind[op.row], p.memcpys.src_kind[op.row],
                                                              p.memcpys.dst_kind[op.row]);
            auto it = memcpy_names_.find(k);
            if (it == memcpy_names_.end()) {
              it = memcpy_names_.emplace(k, names_.Intern(MemcpyName(std::get<0>(k), std::get<1>(k), std::get<2>(k)))).first;
            }
            name = it->second;
            s.category = Category::kGpuMemcpy;
            break;
          }
          case OpKind::kMemset:
            name = names_.Intern(MemsetName(p.memsets.memory_kind[op.row]));
            s.category = Category::kGpuMemset;
            break;
          case OpKind::kSync:
            name = names_.Intern(SyncTypeName(p.syncs.type[op.row]));
            s.category = Category::kCudaSync;
            break;
        }
        s.name_id = name.first;
        s.name = name.second;
        OpArgs(op);
        s.flows_in = op_flows_in_.Of(r.index);
        s.flows_out = op_flows_out_.Of(r.index);
        break;
      }
      case RefKind::kApi: {
        const ApiRef& a = apis_[r.index];
        const ApiTable& t = Part(parts_, a.part).apis;
        bool driver = t.domain[a.row] == ApiDomain::kDriver;
        std::string_view api_name = driver ? format::DriverApiName(t.cbid[a.row])
                                           : format::RuntimeApiName(t.cbid[a.row]);
        if (api_name.empty()) {
          scratch_string_ = std::string(driver ? "driver" : "runtime") + " API cbid " + std::to_string(t.cbid[a.row]);
          api_name = scratch_string_;
        }
        // Interning hashes the name; API names are few, so remember their ids.
        std::pair<uint32_t, std::string_view>& cached = api_names_[{driver, t.cbid[a.row]}];
        if (cached.first == 0) cached = names_.Intern(api_name);
        s.name_id = cached.first;
        s.name = cached.second;
        s.category = driver ? Category::kCudaDriver : Category::kCudaRuntime;
        ApiArgs(a);
        s.flows_out = api_flows_out_.Of(r.index);
        break;
      }
      case RefKind::kAnnotationSpan: {
        auto name = names_.Intern(ranges[spans_[r.index].range].name);
        s.name_id = name.first;
        s.name = name.second;
        s.category = Category::kGpuUserAnnotation;
        args_.clear();
        break;
      }
      case RefKind::kRange: {
        const Range& range = ranges[r.index];
        auto name = names_.Intern(range.name);
        s.name_id = name.first;
        s.name = name.second;
        s.category = Category::kUserAnnotation;
        args_.clear();
        const format::RangeEvent& e = events[range.event];
        if (range.domain != 0) {
          std::string_view domain = idx_.ranges().DomainName(range.domain);
          if (!domain.empty()) args_.push_back(Arg::String("domain", domain));
        }
        if (e.category != 0) args_.push_back(Arg::Uint("category", e.category));
        for (const format::MetadataBlob* b : idx_.Metadata(format::MetadataKey::kRange, r.index)) {
          args_.push_back(Arg::String(b->name, b->data).Foreign());
        }
        if (auto* v = std::get_if<uint64_t>(&e.payload)) args_.push_back(Arg::Uint("payload", *v));
        if (auto* v = std::get_if<int64_t>(&e.payload)) args_.push_back(Arg::Int("payload", *v));
        if (auto* v = std::get_if<double>(&e.payload)) args_.push_back(Arg::Double("payload", *v));
        if (!range.closed) args_.push_back(Arg::String("end", "not recorded: the capture ended first"));
        break;
      }
      case RefKind::kMark: {
        auto name = names_.Intern(events[r.index].name);
        s.name_id = name.first;
        s.name = name.second;
        s.category = Category::kCpuInstant;
        args_.clear();
        break;
      }
      case RefKind::kMarker: {
        const MarkerRange& mk = markers_[r.index];
        const auto& strings = idx_.capture().strings;
        std::string_view text = mk.name < strings.size() ? std::string_view(strings[mk.name].def.text) : "NVTX marker";
        auto name = names_.Intern(text);
        s.name_id = name.first;
        s.name = name.second;
        s.category = mk.instant ? Category::kCpuInstant : Category::kUserAnnotation;
        args_.clear();
        if (mk.domain < strings.size()) args_.push_back(Arg::String("domain", strings[mk.domain].def.text));
        if (!mk.closed) args_.push_back(Arg::String("end", "not in the decoded chunks"));
        break;
      }
      case RefKind::kOverhead: {
        auto [part, row] = row_refs_[r.index];
        const OverheadTable& o = parts_[part]->overheads;
        auto name = names_.Intern(OverheadKindName(o.overhead_kind[row]));
        s.name_id = name.first;
        s.name = name.second;
        s.category = Category::kOverhead;
        args_.clear();
        break;
      }
      case RefKind::kCudaEvent: {
        auto [part, row] = row_refs_[r.index];
        const CudaEventTable& ev = parts_[part]->cuda_events;
        auto name = names_.Intern("Event Record");
        s.name_id = name.first;
        s.name = name.second;
        s.category = Category::kCudaEvent;
        args_.clear();
        args_.push_back(Arg::Uint("cuda_event_id", ev.event_id[row]));
        args_.push_back(Arg::Uint("stream", ev.stream[row]));
        args_.push_back(Arg::Uint("correlation", ev.correlation[row]));
        break;
      }
    }
    s.args = args_.span();
    s.shared_id = args_.shared_id;
    s.shared_first = args_.shared_first;
    s.shared_count = args_.shared_count;
  }
}

}  // namespace

Status JoinWindow(const CaptureIndex& index, const Window& window,
                  std::span<const ActivityTables* const> parts, const DecodeStats& decode,
                  const JoinOptions& options, TraceSink* sink, JoinStats* stats,
                  JoinWorkspace* workspace) {
  if (parts.size() > 0xffff) {
    return Status::InvalidArgument("a window spans more than 65535 chunks; use smaller windows");
  }
  WindowJoin join(index, window, parts, options, stats, &workspace->tables());
  return join.Run(decode, sink);
}

Status JoinWindow(const CaptureIndex& index, const Window& window,
                  std::span<const ActivityTables* const> parts, const DecodeStats& decode,
                  const JoinOptions& options, TraceSink* sink, JoinStats* stats) {
  JoinWorkspace workspace;
  return JoinWindow(index, window, parts, decode, options, sink, stats, &workspace);
}

}  // namespace gpucap::builder
