// Launch <-> op matching: which launch record each GPU op of the window has,
// its external id and CUDA events, and the flows between them.
#include "window_join.h"

namespace gpucap::builder::join_internal {
namespace {

// Whether `t` lies in one of `stretches` ([start, end), in time order).
bool InStretch(const std::vector<std::pair<uint64_t, uint64_t>>& stretches, uint64_t t) {
  auto after = std::upper_bound(stretches.begin(), stretches.end(), t,
                                [](uint64_t v, const std::pair<uint64_t, uint64_t>& s) { return v < s.first; });
  return after != stretches.begin() && t < std::prev(after)->second;
}

}  // namespace

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
  r_.apis.reserve(n);
  r_.api_by_correlation.Reset(low, high, n);
  // Calls made while the recorder was paused are recorded only because a
  // pause that will detach CUPTI leaves its activity kinds on until the
  // detach (recorder/src/cupti_session.h: a CUDA graph launched with the
  // kinds off, CUPTI then finalized, faults), or because a call on another
  // thread began before CUPTI stopped: outside what was asked, left out
  // with their ops (docs/semantics.md, "Recorded while paused").
  const std::vector<std::pair<uint64_t, uint64_t>>& paused = idx_.PausedStretches();
  for (uint16_t pi = 0; pi < parts_.size(); ++pi) {
    const ApiTable& t = parts_[pi]->apis;
    for (uint32_t r = 0; r < t.size(); ++r) {
      uint32_t index = static_cast<uint32_t>(r_.apis.size());
      bool known = t.start[r] != 0;
      bool in_window = known && w_.Contains(t.start[r]);
      bool made_paused = known && !paused.empty() && InStretch(paused, t.start[r]);
      if (made_paused && in_window) stats_.calls_while_paused++;
      r_.apis.push_back({pi, r, in_window && !made_paused, known, made_paused});
      // A runtime call and a driver call never share an id; if a damaged
      // capture repeats one, the first record stands.
      if (!r_.api_by_correlation.Insert(t.correlation[r], index)) r_.duplicate_correlations++;
    }
    const ExternalCorrelationTable& e = parts_[pi]->externals;
    for (uint32_t r = 0; r < e.size(); ++r) {
      // Prefer CUSTOM0, the kind frameworks push their op ids under.
      uint32_t existing = r_.external_by_correlation.Find(e.correlation[r]);
      if (existing != FlatMap::kMissing && e.external_kind[r] != kExternalCustom0) continue;
      r_.external_ids.push_back(e.external_id[r]);
      r_.external_rows.emplace_back(pi, r);
      r_.external_by_correlation.Insert(e.correlation[r], static_cast<uint32_t>(r_.external_ids.size() - 1), true);
    }
    const CudaEventTable& ev = parts_[pi]->cuda_events;
    for (uint32_t r = 0; r < ev.size(); ++r) {
      if (ev.event_sync_id[r] == 0) continue;
      r_.events.push_back({pi, r});
      r_.event_by_sync_id.Insert(ev.event_sync_id[r], static_cast<uint32_t>(r_.events.size() - 1), true);
    }
    const KernelTable& k = parts_[pi]->kernels;
    for (uint32_t r = 0; r < k.size(); ++r) {
      r_.context_device.try_emplace(k.context[r], ContextOwner{k.device[r], pi, kKernels, r});
    }
    const MemcpyTable& m = parts_[pi]->memcpys;
    for (uint32_t r = 0; r < m.size(); ++r) {
      r_.context_device.try_emplace(m.context[r], ContextOwner{m.device[r], pi, kMemcpys, r});
    }
  }
}

bool WindowJoin::InRangeWindow(const ApiRef& a) {
  if (w_.range == Window::kNoRange) return true;
  const ApiTable& t = Part(parts_, a.part).apis;
  const Range& range = idx_.ranges().ranges()[w_.range];
  // A range never closed is in no stack: its window holds its own thread's
  // launches to the capture's end.
  if (!range.closed) return t.tid[a.row] == range.os_tid;
  // The step rule with the window's pattern (docs/semantics.md): the
  // thread's own range, or, for a thread with none of the pattern's open,
  // the one open on another thread (autograd's backward in train#N).
  return r_.window_steps->Holds(w_.range, t.tid[a.row], t.start[a.row], &window_stack_scratch_);
}

uint32_t JoinResult::DeviceOfContext(uint32_t context) const {
  auto it = context_device.find(context);
  return it == context_device.end() ? 0 : it->second.device;
}

uint64_t JoinResult::ExternalId(uint32_t correlation) const {
  uint32_t i = external_by_correlation.Find(correlation);
  return i == FlatMap::kMissing ? 0 : external_ids[i];
}

void WindowJoin::CollectOps() {
  auto take = [&](OpKind kind, uint16_t part, uint32_t row, uint64_t start, uint64_t end,
                  uint32_t correlation, uint32_t device, uint32_t stream) {
    // In a window of the program's work an op belongs by its launch (by its
    // start when there is no launch record); in a time window, by its start.
    uint32_t api = r_.api_by_correlation.Find(correlation);
    if (api != FlatMap::kMissing && r_.apis[api].paused) {
      // Launched while paused: left out with its launch (IndexLaunches).
      if (start != 0 && w_.Contains(start)) stats_.ops_while_paused++;
      return;
    }
    if (api == FlatMap::kMissing && kind != OpKind::kSync && correlation != 0 &&
        correlation < idx_.FirstLaunchCorrelation()) {
      // A flight-recorder dump's op launched before its span: its launch
      // went with the ring's oldest frames, so it is an op cut in half at
      // the span's start. Left out (and counted once, in the window that
      // holds its start) rather than drawn without its launch and flow.
      if (start != 0 && w_.Contains(start)) stats_.ops_before_span++;
      return;
    }
    bool by_launch = w_.ops_by_launch && kind != OpKind::kSync && api != FlatMap::kMissing &&
                     r_.apis[api].start_known;
    bool mine = by_launch ? r_.apis[api].in_window && InRangeWindow(r_.apis[api]) : w_.Contains(start);
    if (start == 0) {
      // CUPTI had no timestamp for it. Nothing places it in time, so it is
      // counted once, in the window that holds its launch.
      if (api != FlatMap::kMissing && r_.apis[api].in_window) {
        stats_.ops_without_timestamps++;
        if (use_ != nullptr) use_->Use(part, kind == OpKind::kKernel ? kKernels : kind == OpKind::kMemcpy ? kMemcpys
                                                 : kind == OpKind::kMemset ? kMemsets : kSyncs, row);
      }
      return;
    }
    if (!mine) return;
    if (end < start) stats_.ops_without_end++;
    Op op;
    op.start = start;
    op.end = std::max(end, start);
    op.row = row;
    op.correlation = correlation;
    op.device = device;
    op.stream = stream;
    op.part = part;
    op.kind = kind;
    r_.ops.push_back(op);
  };
  // Reserved to the rows there are rather than grown by doubling: a window
  // of millions of ops would hold up to twice their 56 bytes each.
  size_t rows = 0;
  for (const ActivityTables* p : parts_) {
    rows += p->kernels.size() + p->memcpys.size() + p->memsets.size() + p->syncs.size() + p->graph_traces.size();
  }
  r_.ops.reserve(rows);
  for (uint16_t pi = 0; pi < parts_.size(); ++pi) {
    const ActivityTables& p = *parts_[pi];
    for (uint32_t r = 0; r < p.kernels.size(); ++r) {
      take(OpKind::kKernel, pi, r, p.kernels.start[r], p.kernels.end[r], p.kernels.correlation[r],
           p.kernels.device[r], p.kernels.stream[r]);
    }
    for (uint32_t r = 0; r < p.memcpys.size(); ++r) {
      take(OpKind::kMemcpy, pi, r, p.memcpys.start[r], p.memcpys.end[r], p.memcpys.correlation[r],
           p.memcpys.device[r], p.memcpys.stream[r]);
    }
    for (uint32_t r = 0; r < p.memsets.size(); ++r) {
      take(OpKind::kMemset, pi, r, p.memsets.start[r], p.memsets.end[r], p.memsets.correlation[r],
           p.memsets.device[r], p.memsets.stream[r]);
    }
    for (uint32_t r = 0; r < p.syncs.size(); ++r) {
      take(OpKind::kSync, pi, r, p.syncs.start[r], p.syncs.end[r], p.syncs.correlation[r],
           r_.DeviceOfContext(p.syncs.context[r]), p.syncs.stream[r]);
    }
    const GraphTraceTable& g = p.graph_traces;
    for (uint32_t r = 0; r < g.size(); ++r) {
      take(OpKind::kGraph, pi, r, g.start[r], g.end[r], g.correlation[r], g.device[r], g.stream[r]);
    }
  }
  stats_.gpu_ops = r_.ops.size();
}

void WindowJoin::JoinOps() {
  for (Op& op : r_.ops) {
    op.api = r_.api_by_correlation.Find(op.correlation);
    if (op.api == FlatMap::kMissing) {
      op.api = kNone;
      if (op.kind != OpKind::kSync) stats_.ops_without_launch++;
    } else {
      const ApiRef& a = r_.apis[op.api];
      const ApiTable& t = Part(parts_, a.part).apis;
      op.launch_stack = r_.stacks.At(t.tid[a.row], t.start[a.row]);
      if (!a.in_window) stats_.launches_in_other_windows++;
    }
    if (uint64_t node = r_.GraphNodeOf(op, kernels_)) {
      stats_.graph_ops++;
      op.origin = idx_.graphs().Origin(node);
      if (op.origin == nullptr) {
        stats_.graph_ops_without_node++;
      } else {
        op.capture_stack = r_.stacks.At(op.origin->os_tid, op.origin->created_ns);
      }
    }
    if (op.launch_stack != 0 || op.capture_stack != 0) stats_.annotated_ops++;
  }
}

void WindowJoin::LinkFlows() {
  // Dependency arrows first: with them drawn, only a replay's roots keep
  // their launch flow (graph_dependencies.cc).
  std::vector<bool> has_predecessor;
  LinkDependencies(&has_predecessor);
  r_.op_flows_in.Build(r_.ops.size());
  r_.op_flows_out.Build(r_.ops.size());
  // Launch -> op: only when both are drawn in this window (launch_flows.h).
  uint64_t launch_flows = r_.launch_flows.Build(r_.ops, r_.apis, std::move(has_predecessor));
  stats_.flows = launch_flows + r_.op_flows_out.size();
}

}  // namespace gpucap::builder::join_internal
