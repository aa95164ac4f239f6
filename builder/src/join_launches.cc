// Launch <-> op matching: which launch record each GPU op of the window has,
// its external id and CUDA events, and the flows between them.
#include "window_join.h"

namespace gpucap::builder::join_internal {

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
      if (!api_by_correlation_.Insert(t.correlation[r], index)) duplicate_correlations_++;
    }
    const ExternalCorrelationTable& e = parts_[pi]->externals;
    for (uint32_t r = 0; r < e.size(); ++r) {
      // Prefer CUSTOM0, the kind frameworks push their op ids under.
      uint32_t existing = external_by_correlation_.Find(e.correlation[r]);
      if (existing != FlatMap::kMissing && e.external_kind[r] != kExternalCustom0) continue;
      external_ids_.push_back(e.external_id[r]);
      external_rows_.emplace_back(pi, r);
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
    for (uint32_t r = 0; r < k.size(); ++r) {
      context_device_.try_emplace(k.context[r], ContextOwner{k.device[r], pi, kKernels, r});
    }
    const MemcpyTable& m = parts_[pi]->memcpys;
    for (uint32_t r = 0; r < m.size(); ++r) {
      context_device_.try_emplace(m.context[r], ContextOwner{m.device[r], pi, kMemcpys, r});
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
  return built_.window_steps->Holds(w_.range, t.tid[a.row], t.start[a.row], &window_stack_scratch_);
}

uint32_t WindowJoin::DeviceOfContext(uint32_t context) const {
  auto it = context_device_.find(context);
  return it == context_device_.end() ? 0 : it->second.device;
}

uint64_t WindowJoin::ExternalId(uint32_t correlation) const {
  uint32_t i = external_by_correlation_.Find(correlation);
  return i == FlatMap::kMissing ? 0 : external_ids_[i];
}

void WindowJoin::CollectOps() {
  auto take = [&](OpKind kind, uint16_t part, uint32_t row, uint64_t start, uint64_t end,
                  uint32_t correlation, uint32_t device, uint32_t stream) {
    // In a window of the program's work an op belongs by its launch (by its
    // start when there is no launch record); in a time window, by its start.
    uint32_t api = api_by_correlation_.Find(correlation);
    bool by_launch = w_.ops_by_launch && kind != OpKind::kSync && api != FlatMap::kMissing &&
                     apis_[api].start_known;
    bool mine = by_launch ? apis_[api].in_window && InRangeWindow(apis_[api]) : w_.Contains(start);
    if (start == 0) {
      // CUPTI had no timestamp for it. Nothing places it in time, so it is
      // counted once, in the window that holds its launch.
      if (api != FlatMap::kMissing && apis_[api].in_window) {
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
    ops_.push_back(op);
  };
  // Reserved to the rows there are rather than grown by doubling: a window
  // of millions of ops would hold up to twice their 56 bytes each.
  size_t rows = 0;
  for (const ActivityTables* p : parts_) {
    rows += p->kernels.size() + p->memcpys.size() + p->memsets.size() + p->syncs.size() + p->graph_traces.size();
  }
  ops_.reserve(rows);
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
           DeviceOfContext(p.syncs.context[r]), p.syncs.stream[r]);
    }
    const GraphTraceTable& g = p.graph_traces;
    for (uint32_t r = 0; r < g.size(); ++r) {
      take(OpKind::kGraph, pi, r, g.start[r], g.end[r], g.correlation[r], g.device[r], g.stream[r]);
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
    if (uint64_t node = GraphNodeOf(op)) {
      stats_.graph_ops++;
      op.origin = idx_.graphs().Origin(node);
      if (op.origin == nullptr) {
        stats_.graph_ops_without_node++;
      } else {
        op.capture_stack = stacks_.At(op.origin->os_tid, op.origin->created_ns);
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
  op_flows_in_.Build(ops_.size());
  op_flows_out_.Build(ops_.size());
  // Launch -> op: only when both are drawn in this window (launch_flows.h).
  uint64_t launch_flows = launch_flows_.Build(ops_, apis_, std::move(has_predecessor));
  stats_.flows = launch_flows + op_flows_out_.size();
}

}  // namespace gpucap::builder::join_internal
