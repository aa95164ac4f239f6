// A slice's name, category and arguments, from the ref that stands for it.
#include "slice_describer.h"

namespace gpucap::builder::join_internal {

std::pair<uint32_t, std::string_view> SliceDescriber::KernelName(const Op& op) {
  const KernelTable& k = kernels_.Of(op.part);
  uint32_t s = k.name[op.row];
  if (s != kNoString) {
    if (kernel_name_ids_.empty()) kernel_name_ids_.assign(r_.index.capture().strings.size(), 0);
    if (kernel_name_ids_[s] == 0) kernel_name_ids_[s] = names_.Intern(r_.index.KernelName(s)).first;
    return {kernel_name_ids_[s], r_.index.KernelName(s)};
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

void SliceDescriber::OpArgs(const Op& op) {
  args_.clear();
  uint64_t external = r_.LaunchExternalId(op.correlation, op.launch_stack);
  if (external != 0 && op.kind != OpKind::kSync) args_.push_back(Arg::Uint(trace_keys::kExternalId, external));
  const ActivityTables& p = Part(r_.parts, op.part);
  auto bandwidth = [&](uint64_t bytes, uint64_t start, uint64_t end) {
    uint64_t dur = end > start ? end - start : 0;
    if (dur == 0) return Arg::String(trace_keys::kMemoryBandwidth, "N/A");
    return Arg::Double(trace_keys::kMemoryBandwidth, static_cast<double>(bytes) / static_cast<double>(dur));
  };
  switch (op.kind) {
    case OpKind::kKernel: {
      const KernelTable& k = kernels_.Of(op.part);
      uint32_t r = op.row;
      args_.push_back(Arg::Uint(trace_keys::kQueued, k.queued[r] / 1000));
      args_.push_back(Arg::Uint(trace_keys::kDevice, k.device[r]));
      args_.push_back(Arg::Uint(trace_keys::kContext, k.context[r]));
      args_.push_back(Arg::Uint(trace_keys::kStream, k.stream[r]));
      args_.push_back(Arg::Uint(trace_keys::kCorrelation, k.correlation[r]));
      LaunchDetailArgs(k, r);
      // Registers to occupancy come with the annotation stack (SharedRuns).
      break;
    }
    case OpKind::kMemcpy: {
      const MemcpyTable& m = p.memcpys;
      uint32_t r = op.row;
      if (m.peer[r]) {
        args_.push_back(Arg::Uint(trace_keys::kFromDevice, m.src_device[r]));
        args_.push_back(Arg::Uint(trace_keys::kInDevice, m.device[r]));
        args_.push_back(Arg::Uint(trace_keys::kToDevice, m.dst_device[r]));
        args_.push_back(Arg::Uint(trace_keys::kFromContext, m.src_context[r]));
        args_.push_back(Arg::Uint(trace_keys::kInContext, m.context[r]));
        args_.push_back(Arg::Uint(trace_keys::kToContext, m.dst_context[r]));
      } else {
        args_.push_back(Arg::Uint(trace_keys::kDevice, m.device[r]));
        args_.push_back(Arg::Uint(trace_keys::kContext, m.context[r]));
      }
      args_.push_back(Arg::Uint(trace_keys::kStream, m.stream[r]));
      args_.push_back(Arg::Uint(trace_keys::kCorrelation, m.correlation[r]));
      args_.push_back(Arg::Uint(trace_keys::kBytes, m.bytes[r]));
      args_.push_back(bandwidth(m.bytes[r], m.start[r], m.end[r]));
      StreamDetailArgs(m.context[r], m.stream[r]);
      break;
    }
    case OpKind::kMemset: {
      const MemsetTable& m = p.memsets;
      uint32_t r = op.row;
      args_.push_back(Arg::Uint(trace_keys::kDevice, m.device[r]));
      args_.push_back(Arg::Uint(trace_keys::kContext, m.context[r]));
      args_.push_back(Arg::Uint(trace_keys::kStream, m.stream[r]));
      args_.push_back(Arg::Uint(trace_keys::kCorrelation, m.correlation[r]));
      args_.push_back(Arg::Uint(trace_keys::kBytes, m.bytes[r]));
      args_.push_back(bandwidth(m.bytes[r], m.start[r], m.end[r]));
      StreamDetailArgs(m.context[r], m.stream[r]);
      break;
    }
    case OpKind::kSync: {
      const SyncTable& s = p.syncs;
      uint32_t r = op.row;
      args_.push_back(Arg::String(trace_keys::kCudaSyncKind, SyncTypeName(s.type[r])));
      if (s.type[r] == 1 || s.type[r] == 2) {  // event sync, stream wait event
        int64_t wait_stream = -1, wait_correlation = -1;
        uint32_t e = s.event_sync_id[r] != 0 ? r_.event_by_sync_id.Find(s.event_sync_id[r]) : FlatMap::kMissing;
        if (e != FlatMap::kMissing) {
          if (use_ != nullptr) use_->Use(r_.events[e].first, kCudaEvents, r_.events[e].second);
          const CudaEventTable& ev = Part(r_.parts, r_.events[e].first).cuda_events;
          wait_stream = ev.stream[r_.events[e].second];
          wait_correlation = ev.correlation[r_.events[e].second];
        }
        args_.push_back(Arg::Int(trace_keys::kWaitOnStream, wait_stream));
        args_.push_back(Arg::Uint(trace_keys::kWaitOnCudaEventId, s.cuda_event_id[r]));
        args_.push_back(Arg::Int(trace_keys::kWaitOnCudaEventRecordCorrId, wait_correlation));
      }
      args_.push_back(Arg::Int(trace_keys::kStream, static_cast<int32_t>(s.stream[r])));
      args_.push_back(Arg::Uint(trace_keys::kCorrelation, s.correlation[r]));
      args_.push_back(Arg::Uint(trace_keys::kDevice, op.device));
      args_.push_back(Arg::Uint(trace_keys::kContext, s.context[r]));
      return;
    }
    case OpKind::kGraph:
      GraphLaunchArgs(op);
      break;
  }
  AnnotationArgs(op);
  if (op.kind == OpKind::kKernel) CollectiveArgs(op);
}

void SliceDescriber::ApiArgs(const ApiRef& a) {
  args_.clear();
  const ApiTable& t = api_rows_.Of(a.part);
  uint64_t external =
      r_.LaunchExternalIdAt(t.correlation[a.row], t.tid[a.row], t.start[a.row], &api_stack_scratch_);
  if (external != 0) args_.push_back(Arg::Uint(trace_keys::kExternalId, external));
  args_.push_back(Arg::Uint(trace_keys::kCbid, t.cbid[a.row]));
  args_.push_back(Arg::Uint(trace_keys::kCorrelation, t.correlation[a.row]));
}

void SliceDescriber::DescribeOp(const SliceRef& r, Slice& s) {
  const Op& op = r_.ops[r.index];
  std::pair<uint32_t, std::string_view> name;
  const ActivityTables& p = Part(r_.parts, op.part);
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
    case OpKind::kGraph:
      name = GraphLaunchName(op);
      s.category = Category::kCudaGraph;
      break;
  }
  s.name_id = name.first;
  s.name = name.second;
  OpArgs(op);
  s.flows_in = r_.launch_flows.In(r_.ops, r.index, r_.op_flows_in.Of(r.index), &launch_ends_in_);
  s.flows_out = r_.op_flows_out.Of(r.index);
}

void SliceDescriber::DescribeApi(const SliceRef& r, Slice& s) {
  const ApiRef& a = r_.apis[r.index];
  const ApiTable& t = api_rows_.Of(a.part);
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
  s.flows_out = r_.launch_flows.Out(r_.ops, r.index, &launch_ends_out_);
}

void SliceDescriber::DescribeRange(const SliceRef& r, Slice& s) {
  const std::vector<Range>& ranges = r_.index.ranges().ranges();
  const auto& events = r_.index.capture().ranges;
  const Range& range = ranges[r.index];
  auto name = names_.Intern(r_.ShownRangeName(r.index));
  s.name_id = name.first;
  s.name = name.second;
  const TorchOperatorName* op = r_.operators.Of(r.index);
  s.category = op != nullptr ? Category::kCpuOp : Category::kUserAnnotation;
  args_.clear();
  args_.push_back(Arg::Uint(trace_keys::kExternalId, r_.RangeExternalId(r.index)));
  if (op != nullptr) OperatorArgs(r.index, *op, s);
  CollectiveRangeArgs(r.index);
  const format::RangeEvent& e = events[range.event];
  if (range.domain != 0) {
    std::string_view domain = r_.index.ranges().DomainName(range.domain);
    if (!domain.empty()) args_.push_back(Arg::String(trace_keys::kDomain, domain));
  }
  if (e.category != 0) args_.push_back(Arg::Uint(trace_keys::kCategory, e.category));
  for (const format::MetadataBlob* b : r_.index.Metadata(format::MetadataKey::kRange, r.index)) {
    args_.push_back(Arg::String(b->name, b->data).Foreign());
    if (use_ != nullptr) use_->metadata.push_back(static_cast<uint32_t>(b - r_.index.capture().metadata.data()));
  }
  if (auto* v = std::get_if<uint64_t>(&e.payload)) args_.push_back(Arg::Uint(trace_keys::kPayload, *v));
  if (auto* v = std::get_if<int64_t>(&e.payload)) args_.push_back(Arg::Int(trace_keys::kPayload, *v));
  if (auto* v = std::get_if<double>(&e.payload)) args_.push_back(Arg::Double(trace_keys::kPayload, *v));
  if (!range.closed) args_.push_back(Arg::String(trace_keys::kEnd, "not recorded: the capture ended first"));
}

// Kineto's keys of a cpu_op, and its forward -> backward flow when both ends
// are drawn in this window (ranges are drawn where they start).
void SliceDescriber::OperatorArgs(uint32_t range, const TorchOperatorName& op, Slice& s) {
  const TorchOperators& operators = r_.operators;
  const std::vector<Range>& ranges = r_.index.ranges().ranges();
  uint32_t forward = operators.ForwardOf(range);
  if (op.sequence >= 0) {
    args_.push_back(Arg::Int(trace_keys::kSequenceNumber, op.sequence));
    if (!IsBackwardNodeName(op.name)) {
      args_.push_back(Arg::Uint(trace_keys::kFwdThreadId, 0));
    } else if (forward != TorchOperators::kNone) {
      args_.push_back(Arg::Uint(trace_keys::kFwdThreadId, ranges[forward].os_tid));
    }
  }
  if (!op.sizes.empty()) {
    if (std::optional<std::string> dims = InputDimsJson(op.sizes)) {
      input_dims_ = std::move(*dims);
      args_.push_back(Arg::Json(trace_keys::kInputDims, input_dims_));
    }
  }
  if (forward != TorchOperators::kNone && r_.DrawsRange(forward)) {
    range_flow_in_ = {trace_keys::ForwardBackwardFlowId(r_.RangeExternalId(range)), FlowKind::kForwardBackward};
    s.flows_in = {&range_flow_in_, 1};
  }
  uint32_t backward = operators.BackwardOf(range);
  if (backward != TorchOperators::kNone && r_.DrawsRange(backward)) {
    range_flow_out_ = {trace_keys::ForwardBackwardFlowId(r_.RangeExternalId(backward)), FlowKind::kForwardBackward};
    s.flows_out = {&range_flow_out_, 1};
  }
}

// An NCCL collective's range, in PyTorch's view: the collective's keys, and
// its size as TensorBoard's Distributed view reads it (Input Dims times the
// size of Input type: NCCL's payload gives bytes, so one dimension of
// "unsigned char"). Nothing where NCCL gave no payload.
void SliceDescriber::CollectiveRangeArgs(uint32_t range) {
  if (!r_.options.torch_view) return;
  const Collective* c = r_.index.collectives().AtEvent(r_.index.ranges().ranges()[range].event);
  if (c == nullptr) return;
  static constexpr std::string_view kBytes[] = {"unsigned char"};
  args_.push_back(Arg::String(trace_keys::kCollectiveName, c->name));
  args_.push_back(Arg::Uint(trace_keys::kInMsgSize, c->bytes));
  if (c->group_size > 0) args_.push_back(Arg::Int(trace_keys::kGroupSize, c->group_size));
  input_dims_ = "[[" + std::to_string(c->bytes) + "]]";
  args_.push_back(Arg::Json(trace_keys::kInputDims, input_dims_));
  args_.push_back(Arg::Strings(trace_keys::kInputType, kBytes));
}

void SliceDescriber::DescribeMarker(const SliceRef& r, Slice& s) {
  const MarkerRange& mk = r_.markers[r.index];
  const auto& strings = r_.index.capture().strings;
  std::string_view text = mk.name < strings.size() ? std::string_view(strings[mk.name].def.text) : "NVTX marker";
  auto name = names_.Intern(text);
  s.name_id = name.first;
  s.name = name.second;
  s.category = mk.instant ? Category::kCpuInstant : Category::kUserAnnotation;
  args_.clear();
  if (mk.domain < strings.size()) args_.push_back(Arg::String(trace_keys::kDomain, strings[mk.domain].def.text));
  if (!mk.closed) args_.push_back(Arg::String(trace_keys::kEnd, "not in the decoded chunks"));
}

void SliceDescriber::Describe(const SliceRef& r, Slice* out) {
  const auto& events = r_.index.capture().ranges;
  Slice& s = *out;
  {
    s.track = r.track;
    s.ts_ns = r.ts;
    s.dur_ns = r.dur;
    switch (r.kind) {
      case RefKind::kOp:
        DescribeOp(r, s);
        break;
      case RefKind::kApi:
        DescribeApi(r, s);
        break;
      case RefKind::kAnnotationSpan: {
        uint32_t range = r_.spans[r.index].range;
        auto name = names_.Intern(r_.ShownRangeName(range));
        s.name_id = name.first;
        s.name = name.second;
        s.category = Category::kGpuUserAnnotation;
        args_.clear();
        args_.push_back(Arg::Uint(trace_keys::kExternalId, r_.RangeExternalId(r_.spans[r.index].range)));
        // TensorBoard takes the GPU-side slice of a collective for the
        // collective (the later of two events with one id): it needs the size too.
        CollectiveRangeArgs(range);
        break;
      }
      case RefKind::kRange:
        DescribeRange(r, s);
        break;
      case RefKind::kMark: {
        auto name = names_.Intern(events[r.index].name);
        s.name_id = name.first;
        s.name = name.second;
        s.category = Category::kCpuInstant;
        args_.clear();
        break;
      }
      case RefKind::kMarker:
        DescribeMarker(r, s);
        break;
      case RefKind::kHostNode:
        DescribeHostNode(r, s);
        break;
      case RefKind::kGraphEventRecord:
        DescribeGraphEventRecord(r, s);
        break;
      case RefKind::kOverhead: {
        auto [part, row] = r_.row_refs[r.index];
        const OverheadTable& o = r_.parts[part]->overheads;
        auto name = names_.Intern(OverheadKindName(o.overhead_kind[row]));
        s.name_id = name.first;
        s.name = name.second;
        s.category = Category::kOverhead;
        args_.clear();
        break;
      }
      case RefKind::kCudaEvent: {
        auto [part, row] = r_.row_refs[r.index];
        const CudaEventTable& ev = r_.parts[part]->cuda_events;
        auto name = names_.Intern(trace_keys::kCudaEventName);
        s.name_id = name.first;
        s.name = name.second;
        s.category = Category::kCudaEvent;
        args_.clear();
        args_.push_back(Arg::Uint(trace_keys::kEventId, ev.event_id[row]));
        args_.push_back(Arg::Uint(trace_keys::kStream, ev.stream[row]));
        args_.push_back(Arg::Uint(trace_keys::kCorrelation, ev.correlation[row]));
        args_.push_back(
            Arg::Uint(trace_keys::kDevice, ev.device[row] != 0 ? ev.device[row] : r_.DeviceOfContext(ev.context[row])));
        args_.push_back(Arg::Uint(trace_keys::kContext, ev.context[row]));
        break;
      }
    }
    s.args = args_.span();
    s.shared_id = args_.shared_id;
    s.shared_first = args_.shared_first;
    s.shared_count = args_.shared_count;
  }
}

}  // namespace gpucap::builder::join_internal
