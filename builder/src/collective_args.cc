// A collective's description on each of its kernels (collectives.h), in
// HTA's keys: the innermost NCCL range around the kernel's launch, or, for a
// graph-replayed kernel, around its node's capture (a replay calls no NCCL:
// the payload was given once, when the graph was captured).
//
// Message sizes follow NCCL's payload: AllGather reports what each rank
// sends, so it receives group size times that; ReduceScatter what each rank
// receives, so it sends group size times that; the others send and receive
// the same. Element counts divide by the dtype the kernel's name says; a
// kernel whose name says none gets no dtype and no counts. No process group:
// NCCL's payload names a communicator, not torch's group.
#include "slice_describer.h"

namespace gpucap::builder::join_internal {

void SliceDescriber::CollectiveArgs(const Op& op) {
  const CollectiveIndex& index = r_.index.collectives();
  if (index.empty() || (op.launch_stack == 0 && op.capture_stack == 0)) return;
  std::span<const uint32_t> stack = r_.StackOf(op, &collective_scratch_);
  const std::vector<Range>& ranges = r_.index.ranges().ranges();
  const Collective* c = nullptr;
  for (size_t i = stack.size(); i-- > 0 && c == nullptr;) c = index.AtEvent(ranges[stack[i]].event);
  if (c == nullptr) return;
  uint64_t in = c->bytes, out = c->bytes;
  if (c->group_size > 0 && c->name == "all_gather") out = in * c->group_size;
  if (c->group_size > 0 && c->name == "reduce_scatter") in = out * c->group_size;
  args_.push_back(Arg::String(trace_keys::kCollectiveName, c->name));
  KernelDtype dtype = DtypeFromKernelName(KernelName(op).second);
  if (dtype.size != 0) {
    args_.push_back(Arg::Uint(trace_keys::kInMsgNelems, in / dtype.size));
    args_.push_back(Arg::Uint(trace_keys::kOutMsgNelems, out / dtype.size));
  }
  args_.push_back(Arg::Uint(trace_keys::kInMsgSize, in));
  args_.push_back(Arg::Uint(trace_keys::kOutMsgSize, out));
  if (dtype.size != 0) args_.push_back(Arg::String(trace_keys::kDtype, dtype.name));
  if (c->group_size > 0) args_.push_back(Arg::Int(trace_keys::kGroupSize, c->group_size));
  // Group size comes from another range than the kernel's: a cut capture
  // must keep it too.
  if (use_ != nullptr && c->group_size_event != UINT32_MAX) UseRangeOfEvent(c->group_size_event);
}

}  // namespace gpucap::builder::join_internal
