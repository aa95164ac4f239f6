// What a window referenced (join_use.h): the rows behind its ops and API
// calls and the rows those looked up (launches, external ids, the op that
// names a context's device), the ranges of every annotation stack it read,
// the graph nodes it traced back, and the times it converted. The slices
// that are rows of their own (overheads, CUDA events, environment, markers,
// ranges, marks, counters) and the lookups made while describing slices
// (CUDA events waited on, metadata) report where they happen.
#include "slice_describer.h"
#include "window_join.h"

namespace gpucap::builder::join_internal {

namespace {

uint32_t FamilyOfOp(OpKind kind) {
  switch (kind) {
    case OpKind::kKernel: return kKernels;
    case OpKind::kMemcpy: return kMemcpys;
    case OpKind::kMemset: return kMemsets;
    case OpKind::kSync: return kSyncs;
    case OpKind::kGraph: return kGraphTraces;
  }
  return 0;
}

}  // namespace

void WindowJoin::UseStack(uint32_t stack) {
  for (uint32_t range : r_.stacks.Stack(stack)) use_->ranges.push_back(range);
}

void SliceDescriber::UseRangeOfEvent(uint32_t event) {
  const std::vector<Range>& ranges = r_.index.ranges().ranges();
  if (range_of_event_.empty()) {
    for (uint32_t r = 0; r < ranges.size(); ++r) {
      range_of_event_.emplace(ranges[r].event, r);
      if (ranges[r].end_event != UINT32_MAX) range_of_event_.emplace(ranges[r].end_event, r);
    }
  }
  auto it = range_of_event_.find(event);
  if (it != range_of_event_.end()) use_->ranges.push_back(it->second);
}

void WindowJoin::UseContextOwner(uint32_t context) {
  auto it = r_.context_device.find(context);
  if (it != r_.context_device.end()) use_->Use(it->second.part, it->second.family, it->second.row);
}

void WindowJoin::UseExternal(uint32_t correlation) {
  uint32_t i = r_.external_by_correlation.Find(correlation);
  if (i != FlatMap::kMissing) use_->Use(r_.external_rows[i].first, kExternals, r_.external_rows[i].second);
}

void WindowJoin::ReportUse() {
  use_->Time(w_.start_ns);
  use_->Time(w_.end_ns);
  for (const Op& op : r_.ops) {
    use_->Use(op.part, FamilyOfOp(op.kind), op.row);
    use_->Time(op.end);
    UseExternal(op.correlation);
    if (op.api != kNone) use_->Use(r_.apis[op.api].part, kApis, r_.apis[op.api].row);
    UseStack(op.launch_stack);
    UseStack(op.capture_stack);
    if (uint64_t node = r_.GraphNodeOf(op, kernels_)) use_->graph_nodes.push_back(node);
    if (op.kind == OpKind::kSync) UseContextOwner(Part(parts_, op.part).syncs.context[op.row]);
  }
  for (const ApiRef& a : r_.apis) {
    if (!a.in_window) continue;
    const ApiTable& t = Part(parts_, a.part).apis;
    use_->Use(a.part, kApis, a.row);
    use_->Time(t.end[a.row]);
    UseExternal(t.correlation[a.row]);
    UseStack(r_.stacks.At(t.tid[a.row], t.start[a.row]));
  }
}

}  // namespace gpucap::builder::join_internal
