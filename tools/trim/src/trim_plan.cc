#include "gpucap/tools/trim/trim_plan.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "gpucap/format/activity_kind.h"
#include "record_walk.h"

namespace gpucap::tools {
namespace {

using builder::Window;
using format::ActivityKind;
using format::Field;

// Takes the join's output and drops it: the plan needs only what the build
// decided, which the window report carries.
class DiscardSink : public builder::TraceSink {
 public:
  Status Begin(const builder::TraceHeader&) override { return Status::Ok(); }
  Status AddSlice(const builder::Slice&) override { return Status::Ok(); }
  Status AddCounter(const builder::CounterPoint&) override { return Status::Ok(); }
  Status End() override { return Status::Ok(); }
};

// One record of a window's chunks, with the fields the decisions read.
struct Rec {
  uint32_t part;    // position of its chunk among the window's chunks
  uint32_t index;   // in its chunk's walk
  uint32_t family;  // 0: a kind the decoder skips (no layout) or ignores
  bool layout;
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0, tid = 0, context = 0, device = 0;
  uint64_t node = 0;     // graph node id; external id for externals
  uint64_t sync_id = 0;  // cudaEventSyncId
  uint32_t flags = 0, marker_id = 0;
};

// Graph events that belong together: a graph, its nodes, their clones, the
// graphs cloned from it and the execs made of them. A kept op keeps its
// whole component, so origins, clone chains and dependencies stay whole.
class GraphComponents {
 public:
  explicit GraphComponents(const std::vector<format::GraphEvent>& events) {
    for (const format::GraphEvent& e : events) {
      using K = format::GraphEventKind;
      switch (e.kind) {
        case K::kGraphCloned: Union(G(e.graph_id), G(e.original_graph_id)); break;
        case K::kNodeCreated: Union(N(e.node_id), G(e.graph_id)); break;
        case K::kNodeCloned:
          Union(N(e.node_id), N(e.original_node_id));
          if (e.graph_id != 0) Union(N(e.node_id), G(e.graph_id));
          break;
        case K::kDependencyAdded:
        case K::kDependencyRemoved: Union(N(e.node_id), N(e.peer_node_id)); break;
        case K::kExecCreated:
        case K::kExecDestroyed:
        case K::kExecUpdated:
          if (e.graph_id != 0) Union(E(e.exec_id), G(e.graph_id));
          break;
        default: break;
      }
    }
  }
  uint64_t NodeRoot(uint64_t node) { return Find(N(node)); }
  uint64_t EventRoot(const format::GraphEvent& e) {
    using K = format::GraphEventKind;
    switch (e.kind) {
      case K::kGraphCreated:
      case K::kGraphCloned:
      case K::kGraphDestroyed: return Find(G(e.graph_id));
      case K::kExecCreated:
      case K::kExecDestroyed:
      case K::kExecUpdated: return e.graph_id != 0 ? Find(G(e.graph_id)) : Find(E(e.exec_id));
      default: return Find(N(e.node_id));
    }
  }

 private:
  static uint64_t N(uint64_t node) { return node & ~(3ull << 62); }
  static uint64_t G(uint64_t graph) { return (1ull << 63) | graph; }
  static uint64_t E(uint64_t exec) { return (1ull << 62) | exec; }
  uint64_t Find(uint64_t x) {
    auto it = parent_.find(x);
    if (it == parent_.end()) return x;
    uint64_t root = Find(it->second);
    it->second = root;
    return root;
  }
  void Union(uint64_t a, uint64_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[a] = b;
  }
  std::unordered_map<uint64_t, uint64_t> parent_;
};

class Planner {
 public:
  Planner(const builder::CaptureIndex& index, TrimPlan* plan) : idx_(index), plan_(*plan) {}

  Status AddWindow(const Window& w, const std::vector<std::pair<size_t, uint32_t>>& used);
  void Finish();

 private:
  void Load(const std::vector<std::pair<size_t, uint32_t>>& used);
  void Keep(const Rec& r) {
    uint8_t& flag = plan_.records[chunks_[r.part]][r.index];
    if (!flag) plan_.records_kept++;
    flag = 1;
  }
  bool Kept(const Rec& r) const { return plan_.records.at(chunks_[r.part])[r.index] != 0; }

  const builder::CaptureIndex& idx_;
  TrimPlan& plan_;
  std::map<size_t, std::vector<uint64_t>> raw_;  // decompressed chunks of the current window
  std::vector<size_t> chunks_;                   // the window's chunks, in order
  std::vector<Rec> recs_;

  // Across windows.
  std::unordered_map<uint32_t, std::vector<uint64_t>> points_;  // tid -> times whose range stacks matter
  std::unordered_set<uint64_t> nodes_;                          // graph nodes of kept ops
  std::unordered_set<uint32_t> correlations_;                   // of kept ops and calls
  std::unordered_set<uint64_t> external_ids_;
  uint64_t rendered_until_ = 0;  // the latest end of anything a window renders
};

void Planner::Load(const std::vector<std::pair<size_t, uint32_t>>& used) {
  const format::Capture& c = idx_.capture();
  std::map<size_t, std::vector<uint64_t>> raw;
  chunks_.clear();
  recs_.clear();
  for (const auto& [chunk, read_families] : used) {
    // A plain copy: clang 14 cannot capture a structured binding in a lambda.
    const uint32_t families = read_families;
    uint32_t part = static_cast<uint32_t>(chunks_.size());
    chunks_.push_back(chunk);
    auto cached = raw_.find(chunk);
    std::vector<uint64_t>& bytes = raw[chunk];
    if (cached != raw_.end()) {
      bytes = std::move(cached->second);
    } else if (!format::DecompressChunk(*c.file, c.chunks[chunk], &bytes).ok()) {
      // The build skipped it as corrupt (and said so); so does the plan.
      bytes.clear();
    }
    const format::ChunkInfo& info = c.chunks[chunk].info;
    auto span = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()),
                                         bytes.empty() ? 0 : info.raw_size);
    std::vector<uint8_t>& flags = plan_.records[chunk];
    size_t walked = 0;
    WalkRecords(idx_.decoder(), span, info, [&](const RawRecord& r) {
      walked++;
      uint32_t family = r.layout ? builder::FamilyOf(r.kind) : 0;
      if (r.layout && (family & families) == 0) return;  // the build did not read it
      Rec x{part, r.index, family, r.layout != nullptr};
      switch (family) {
        case builder::kKernels:
        case builder::kMemcpys:
        case builder::kMemsets:
        case builder::kGraphTraces:  // a whole graph launch: an op like the others
          x.start = r.U(Field::kStart);
          x.end = r.U(Field::kEnd);
          x.correlation = r.U32(Field::kCorrelationId);
          x.context = r.U32(Field::kContextId);
          x.device = r.U32(Field::kDeviceId);
          x.node = r.U(Field::kGraphNodeId);
          break;
        case builder::kSyncs:
          x.start = r.U(Field::kStart);
          x.end = r.U(Field::kEnd);
          x.correlation = r.U32(Field::kCorrelationId);
          x.context = r.U32(Field::kContextId);
          x.sync_id = r.U(Field::kCudaEventSyncId);
          break;
        case builder::kApis:
          x.start = r.U(Field::kStart);
          x.end = r.U(Field::kEnd);
          x.correlation = r.U32(Field::kCorrelationId);
          x.tid = r.U32(Field::kThreadId);
          break;
        case builder::kExternals:
          x.correlation = r.U32(Field::kCorrelationId);
          x.node = r.U(Field::kExternalId);
          break;
        case builder::kCudaEvents:
          x.start = x.end = r.U(Field::kDeviceTimestamp);
          x.correlation = r.U32(Field::kCorrelationId);
          x.context = r.U32(Field::kContextId);
          x.device = r.U32(Field::kDeviceId);
          x.sync_id = r.U(Field::kCudaEventSyncId);
          break;
        case builder::kOverheads:
          x.start = r.U(Field::kStart);
          x.end = r.U(Field::kEnd);
          break;
        case builder::kMarkers:
          x.start = x.end = r.U(Field::kTimestamp);
          x.flags = r.U32(Field::kFlags);
          x.marker_id = r.U32(Field::kMarkerId);
          break;
        case builder::kEnvironment:
          x.start = x.end = r.U(Field::kTimestamp);
          break;
        default:
          break;
      }
      recs_.push_back(x);
    });
    // A flag for every record walked, so the writer walks in step.
    if (flags.size() != walked) {
      flags.assign(walked, 0);
      plan_.records_seen += walked;
    }
  }
  raw_ = std::move(raw);
}

Status Planner::AddWindow(const Window& w, const std::vector<std::pair<size_t, uint32_t>>& used) {
  Load(used);
  rendered_until_ = std::max(rendered_until_, w.end_ns);
  auto in = [&](uint64_t t) { return t != 0 && w.Contains(t); };

  // Launch records: the first of each correlation id stands, as in the join.
  struct Launch {
    uint64_t start;
    uint32_t tid;
  };
  std::unordered_map<uint32_t, Launch> launches;
  for (const Rec& r : recs_) {
    if (r.family == builder::kApis) launches.try_emplace(r.correlation, Launch{r.start, r.tid});
  }

  // The ops the window holds: by launch in windows of the program's work,
  // else by start; an op without a timestamp counts in its launch's window.
  std::unordered_set<uint64_t> sync_ids;
  std::unordered_set<uint32_t> contexts, window_correlations;
  for (const Rec& r : recs_) {
    bool sync = r.family == builder::kSyncs;
    if (!sync && r.family != builder::kKernels && r.family != builder::kMemcpys && r.family != builder::kMemsets &&
        r.family != builder::kGraphTraces) {
      continue;
    }
    auto launch = launches.find(r.correlation);
    bool found = launch != launches.end();
    bool launched_in = found && in(launch->second.start);
    bool by_launch = w.ops_by_launch && !sync && found && launch->second.start != 0;
    bool keep = r.start == 0 ? launched_in : (by_launch ? launched_in : w.Contains(r.start));
    if (!keep) continue;
    Keep(r);
    window_correlations.insert(r.correlation);
    if (found && launch->second.start != 0) points_[launch->second.tid].push_back(launch->second.start);
    if (r.node != 0) nodes_.insert(r.node);
    if (sync) {
      if (r.sync_id != 0) sync_ids.insert(r.sync_id);
      contexts.insert(r.context);
    }
    if (r.start != 0) rendered_until_ = std::max(rendered_until_, r.end);
  }

  // CUDA events: drawn in the window, or waited on by a kept sync.
  for (const Rec& r : recs_) {
    if (r.family != builder::kCudaEvents) continue;
    if (in(r.start) || (r.sync_id != 0 && sync_ids.count(r.sync_id))) {
      Keep(r);
      if (r.device == 0) contexts.insert(r.context);
    }
  }
  // A context's device is the first kernel or copy seen on it.
  for (uint32_t ctx : contexts) {
    for (const Rec& r : recs_) {
      if ((r.family == builder::kKernels || r.family == builder::kMemcpys) && r.context == ctx) {
        if (!Kept(r)) {
          Keep(r);
          window_correlations.insert(r.correlation);
        }
        break;
      }
    }
  }

  for (const Rec& r : recs_) {
    switch (r.family) {
      case builder::kApis:
        if (in(r.start) || window_correlations.count(r.correlation)) {
          Keep(r);
          correlations_.insert(r.correlation);
        }
        break;
      case builder::kOverheads:
      case builder::kEnvironment:
        if (in(r.start)) Keep(r);
        break;
      case 0:
        // Kinds the decoder has no layout for: kept, so the trimmed build
        // reports the same skipped records.
        if (!r.layout) Keep(r);
        break;
      default:
        break;
    }
  }
  for (uint32_t c : window_correlations) correlations_.insert(c);
  for (const Rec& r : recs_) {
    if (r.family == builder::kExternals && correlations_.count(r.correlation)) {
      Keep(r);
      external_ids_.insert(r.node);
    }
  }

  // CUPTI's NVTX markers, paired as the join pairs them: the starts and
  // instants in the window, and the ends that close those starts.
  constexpr uint32_t kInstant = 1u << 0, kStart = 1u << 1, kEnd = 1u << 2;
  std::vector<const Rec*> markers;
  for (const Rec& r : recs_) {
    if (r.family == builder::kMarkers) markers.push_back(&r);
  }
  std::stable_sort(markers.begin(), markers.end(), [](const Rec* a, const Rec* b) {
    return std::tie(a->start, a->part, a->index) < std::tie(b->start, b->part, b->index);
  });
  std::unordered_map<uint32_t, const Rec*> open;
  for (const Rec* m : markers) {
    if (m->flags & kEnd) {
      auto it = open.find(m->marker_id);
      if (it == open.end()) continue;
      if (w.Contains(it->second->start)) {
        Keep(*m);
        rendered_until_ = std::max(rendered_until_, m->start);
      }
      open.erase(it);
    } else if (m->flags & (kStart | kInstant)) {
      if (w.Contains(m->start)) Keep(*m);
      if (!(m->flags & kInstant)) open[m->marker_id] = m;
    }
  }

  // Capture-time stacks of graph ops: where their node was created.
  for (uint64_t node : nodes_) {
    if (const builder::GraphNode* origin = idx_.graphs().Origin(node)) {
      points_[origin->os_tid].push_back(origin->created_ns);
    }
  }
  return Status::Ok();
}

void Planner::Finish() {
  const format::Capture& c = idx_.capture();
  const std::vector<Window>& windows = plan_.windows;
  auto in_any = [&](uint64_t t) {
    return std::any_of(windows.begin(), windows.end(), [&](const Window& w) { return w.Contains(t); });
  };
  for (auto& [tid, times] : points_) std::sort(times.begin(), times.end());

  // Ranges, paired as the builder's RangeIndex pairs them; a pair is kept
  // whole (so nesting stays as it was) when it starts in a window or is
  // open at a time some kept op's annotations are read at.
  plan_.ranges.assign(c.ranges.size(), 0);
  std::vector<uint32_t> order(c.ranges.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return c.ranges[a].timestamp_ns < c.ranges[b].timestamp_ns; });
  struct Pair {
    uint32_t open;
    int64_t close = -1;
  };
  std::vector<Pair> pairs;
  std::map<std::pair<uint32_t, uint64_t>, std::vector<size_t>> stacks;
  std::unordered_map<uint64_t, size_t> started;
  using format::RangeKind;
  for (uint32_t i : order) {
    const format::RangeEvent& e = c.ranges[i];
    switch (e.kind) {
      case RangeKind::kPush:
        stacks[{e.os_tid, e.domain}].push_back(pairs.size());
        pairs.push_back({i});
        break;
      case RangeKind::kStart:
        started[e.id] = pairs.size();
        pairs.push_back({i});
        break;
      case RangeKind::kPop: {
        auto& s = stacks[{e.os_tid, e.domain}];
        if (!s.empty()) {
          pairs[s.back()].close = i;
          s.pop_back();
        }
        break;
      }
      case RangeKind::kEnd: {
        auto it = started.find(e.id);
        if (it != started.end()) {
          pairs[it->second].close = i;
          started.erase(it);
        }
        break;
      }
      case RangeKind::kMark:
        if (in_any(e.timestamp_ns)) plan_.ranges[i] = 1;
        break;
      case RangeKind::kNameThread:
      case RangeKind::kNameDomain:
      case RangeKind::kNameCategory:
      case RangeKind::kPayloadSchema:  // payloads kept anywhere are read with these
      case RangeKind::kPayloadEnum:
        plan_.ranges[i] = 1;
        break;
    }
  }
  uint64_t capture_end = idx_.extent().end_ns;
  for (const Pair& p : pairs) {
    const format::RangeEvent& o = c.ranges[p.open];
    uint64_t start = o.timestamp_ns;
    uint64_t end = p.close >= 0 ? c.ranges[p.close].timestamp_ns : std::max(capture_end, start);
    bool keep = in_any(start);
    if (keep) rendered_until_ = std::max(rendered_until_, end);
    auto it = points_.find(o.os_tid);
    if (!keep && it != points_.end()) {
      auto first = std::lower_bound(it->second.begin(), it->second.end(), start);
      keep = first != it->second.end() && *first <= end;
    }
    if (!keep) continue;
    plan_.ranges[p.open] = 1;
    if (p.close >= 0) plan_.ranges[p.close] = 1;
  }

  GraphComponents components(c.graphs);
  std::unordered_set<uint64_t> roots;
  for (uint64_t node : nodes_) roots.insert(components.NodeRoot(node));
  plan_.graphs.assign(c.graphs.size(), 0);
  for (size_t i = 0; i < c.graphs.size(); ++i) plan_.graphs[i] = roots.count(components.EventRoot(c.graphs[i])) != 0;

  plan_.metadata.assign(c.metadata.size(), 0);
  for (size_t i = 0; i < c.metadata.size(); ++i) {
    const format::MetadataBlob& b = c.metadata[i];
    using K = format::MetadataKey;
    bool keep = false;
    switch (b.key_kind) {
      case K::kGlobal:
      case K::kRange: keep = true; break;
      case K::kCorrelationId: keep = correlations_.count(static_cast<uint32_t>(b.key)) != 0; break;
      case K::kExternalId: keep = external_ids_.count(b.key) != 0; break;
      case K::kGraphNode: keep = roots.count(components.NodeRoot(b.key)) != 0; break;
    }
    plan_.metadata[i] = keep;
  }

  plan_.counter_samples.assign(c.counter_samples.size(), 0);
  for (size_t i = 0; i < c.counter_samples.size(); ++i) plan_.counter_samples[i] = in_any(c.counter_samples[i].timestamp_ns);

  // Clock samples: those around every time the windows convert, so the
  // interpolation between neighbours gives the same nanoseconds.
  plan_.clocks.assign(c.clocks.size(), 0);
  uint64_t lo = UINT64_MAX;
  for (const Window& w : windows) lo = std::min(lo, w.start_ns);
  uint64_t hi = rendered_until_;
  std::vector<size_t> by_time(c.clocks.size());
  std::iota(by_time.begin(), by_time.end(), 0);
  std::stable_sort(by_time.begin(), by_time.end(), [&](size_t a, size_t b) { return c.clocks[a].cupti_ns < c.clocks[b].cupti_ns; });
  auto keep_around = [&](uint64_t from, uint64_t to) {
    size_t first = 0, last = by_time.empty() ? 0 : by_time.size() - 1;
    for (size_t i = 0; i < by_time.size(); ++i) {
      if (c.clocks[by_time[i]].cupti_ns <= from) first = i;
    }
    for (size_t i = by_time.size(); i-- > 0;) {
      if (c.clocks[by_time[i]].cupti_ns >= to) last = i;
    }
    for (size_t i = first; i <= last && i < by_time.size(); ++i) plan_.clocks[by_time[i]] = 1;
  };
  if (lo != UINT64_MAX) keep_around(lo, std::max(lo, hi));
}

}  // namespace

Result<TrimPlan> PlanTrim(const builder::CaptureIndex& index, const builder::BuildOptions& options, const builder::ProgressFn& progress) {
  TrimPlan plan;
  builder::Builder builder(index, options);
  auto windows = builder.Windows();
  if (!windows.ok()) return windows.status();
  if (windows->empty()) {
    return Status::NotFound(index.path() + ": --window '" + options.window + "' matches nothing in the capture");
  }
  plan.windows = *windows;
  Planner planner(index, &plan);
  DiscardSink discard;
  for (size_t i = 0; i < windows->size(); ++i) {
    const Window& w = (*windows)[i];
    if (progress) progress(w.label.empty() ? "window" : "window " + w.label, i + 1, windows->size());
    builder::WindowReport report;
    GPUCAP_RETURN_IF_ERROR(builder.BuildWindow(w, &discard, &report));
    GPUCAP_RETURN_IF_ERROR(planner.AddWindow(w, report.chunks));
  }
  planner.Finish();
  plan.warnings = index.decoder().Describe(builder.decode_stats());
  return plan;
}

}  // namespace gpucap::tools
