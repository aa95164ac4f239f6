#include "window_rows.h"

#include "gpucap/builder/budgets.h"
#include "gpucap/builder/trace_keys.h"
#include "gpucap/tools/export/kernel_base_name.h"

#include <algorithm>
#include <tuple>

namespace gpucap::tools::sqlite {

using builder::Arg;
using builder::Category;
using builder::FlowKind;
using builder::Slice;
using builder::Track;
using namespace builder::trace_keys;

namespace {

constexpr std::string_view kRuntime = "runtime", kDriver = "driver";
constexpr std::string_view kPushPop = "push_pop", kStartEnd = "start_end", kMark = "mark";

// The arguments the join gives GPU ops (join.cc's OpArgs), read back.
struct OpArgs {
  int64_t device = -1, context = -1, stream = -1, correlation = -1, external = 0;
  int64_t registers = -1, shared_memory = -1, static_shared = -1, dynamic_shared = -1, bytes = -1;
  int64_t src_device = -1, dst_device = -1, wait_stream = -1, wait_event = -1, wait_correlation = -1;
  int64_t queued = 0;
  int64_t graph_node = 0, graph = -1, capture_node = -1, capture_stream = -1;
  std::span<const int64_t> grid, block;
  std::span<const std::string_view> stack;

  explicit OpArgs(std::span<const Arg> args) {
    for (const Arg& a : args) {
      if (a.foreign_key) continue;  // the application's metadata blobs
      std::string_view k = a.key;
      auto num = [&]() { return a.type == Arg::Type::kInt ? a.i() : static_cast<int64_t>(a.u()); };
      // By the key's length first: one compare picks the few keys of that
      // length (a chain of every key cost ~60 instructions an argument). Each
      // case is the length of the keys it compares (static_asserts below).
      switch (k.size()) {
        case kGrid.size():
          if (k == kGrid && a.type == Arg::Type::kInts) grid = a.ints();
          break;
        case kBytes.size():
          if (k == kBytes) bytes = num();
          else if (k == kGraph) graph = num();
          else if (k == kBlock && a.type == Arg::Type::kInts) block = a.ints();
          break;
        case kDevice.size():
          if (k == kDevice) device = num();
          else if (k == kStream) stream = num();
          else if (k == kQueued) queued = num();
          break;
        case kContext.size():
          if (k == kContext) context = num();
          break;
        case kInDevice.size():
          if (k == kInDevice) device = num();
          else if (k == kToDevice) dst_device = num();
          break;
        case kInContext.size():
          if (k == kInContext) context = num();
          break;
        case kFromDevice.size():
          if (k == kFromDevice) src_device = num();
          else if (k == kGraphNode) graph_node = num();
          break;
        case kCorrelation.size():
          if (k == kCorrelation) correlation = num();
          else if (k == kExternalId) external = num();
          break;
        case kCaptureNode.size():
          if (k == kCaptureNode) capture_node = num();
          break;
        case kSharedMemory.size():
          if (k == kSharedMemory) shared_memory = num();
          break;
        case kWaitOnStream.size():
          if (k == kWaitOnStream) wait_stream = num();
          else if (k == kCaptureStream) capture_stream = num();
          break;
        case kAnnotationStack.size():
          if (k == kAnnotationStack && a.type == Arg::Type::kStrings) stack = a.strings();
          break;
        case kRegistersPerThread.size():
          if (k == kRegistersPerThread) registers = num();
          else if (k == kStaticSharedMemory) static_shared = num();
          static_assert(kStaticSharedMemory.size() == kRegistersPerThread.size());
          break;
        case kWaitOnCudaEventId.size():
          if (k == kWaitOnCudaEventId) wait_event = num();
          else if (k == kDynamicSharedMemory) dynamic_shared = num();
          static_assert(kDynamicSharedMemory.size() == kWaitOnCudaEventId.size());
          break;
        case kWaitOnCudaEventRecordCorrId.size():
          if (k == kWaitOnCudaEventRecordCorrId) wait_correlation = num();
          break;
        default: break;
      }
    }
  }
};
// The keys compared under another key's length above.
static_assert(kGraph.size() == kBytes.size() && kBlock.size() == kBytes.size());
static_assert(kStream.size() == kDevice.size() && kQueued.size() == kDevice.size());
static_assert(kToDevice.size() == kInDevice.size() && kGraphNode.size() == kFromDevice.size());
static_assert(kExternalId.size() == kCorrelation.size() && kCaptureStream.size() == kWaitOnStream.size());

void ShapeCells(RowWriter& row, std::span<const int64_t> v) {
  for (size_t i = 0; i < 3; ++i) {
    if (i < v.size()) row.Int(v[i]);
    else row.Null();
  }
}

RowWriter& Maybe(RowWriter& row, int64_t v) { return v >= 0 ? row.Int(v) : row.Null(); }

// "Memcpy HtoD (Pageable -> Device)" -> "HtoD", "Pageable", "Device".
void CopyKinds(std::string_view name, std::string_view* kind, std::string_view* src, std::string_view* dst) {
  *kind = *src = *dst = {};
  if (name.rfind("Memcpy ", 0) != 0) return;
  name.remove_prefix(7);
  size_t space = name.find(' ');
  *kind = name.substr(0, space);
  if (space == std::string_view::npos) return;
  std::string_view rest = name.substr(space + 1);
  size_t arrow = rest.find(" -> ");
  if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')' || arrow == std::string_view::npos) return;
  *src = rest.substr(1, arrow - 1);
  *dst = rest.substr(arrow + 4, rest.size() - arrow - 5);
}

}  // namespace

CaptureRows::KernelNames CaptureRows::NamesOf(std::string_view demangled) {
  if (!mangled_built) {
    mangled_built = true;
    const auto& strings = index.capture().strings;
    for (uint32_t i = 0; i < strings.size(); ++i) {
      std::string_view text = strings[i].def.text;
      if (text.rfind("_Z", 0) != 0) continue;
      mangled_of.emplace(std::string(index.KernelName(i)), i);
    }
  }
  KernelNames n;
  n.name = ids.String(demangled);
  auto it = mangled_of.find(std::string(demangled));
  n.mangled = it != mangled_of.end() ? ids.String(index.capture().strings[it->second].def.text) : n.name;
  n.short_name = ids.String(KernelBaseName(demangled));
  return n;
}

WindowRows::WindowRows(CaptureRows* capture, const builder::Window& window, OrderedBatches* out,
                       size_t batch_bytes)
    : c_(*capture),
      window_(window),
      out_(*out),
      batch_bytes_(batch_bytes > 0 ? batch_bytes : kBatchBytes),
      batch_(out->Fresh(capture->capture)) {}

Status WindowRows::Stopped() const {
  return Status::Internal("export: the window's rows were not written (the export stopped)");
}

void WindowRows::HandOver(bool last) {
  c_.ids.TakePending(&batch_.new_strings, &batch_.new_stacks);
  for (size_t t = 0; t < kTableCount; ++t) before_[t] += batch_.tables[t].rows;
  if (!out_.Put(std::move(batch_))) stopped_ = true;
  if (last) return;
  batch_ = out_.Fresh(c_.capture);
  batch_.continues = true;
}

void WindowRows::MaybeHandOver() {
  if (!stopped_ && waiting_.empty() && batch_.bytes() + c_.ids.pending_bytes() >= batch_bytes_) HandOver(false);
}

Status WindowRows::Begin(const builder::TraceHeader& h) {
  tracks_ = h.tracks;
  processes_ = h.processes;
  stack_of_run_.assign(builder::kSharedIdsLive, StackRun{});
  RowWriter(&batch_, TableId::kWindows)
      .Owner(c_.rank)
      .Int(window_.index)
      .Text(window_.label)
      .Int(h.window_start_ns)
      .Int(h.window_end_ns)
      .Int(window_.ops_by_launch ? 1 : 0);
  for (const auto& [name, value] : h.counts) {
    RowWriter(&batch_, TableId::kWindowCounts).Ref(TableId::kWindows, 0).Text(name).Int(static_cast<int64_t>(value));
  }
  return Status::Ok();
}

int64_t WindowRows::ThreadOf(uint32_t track) const {
  const Track* t = &tracks_[track];
  if (t->kind == Track::Kind::kLane) t = &tracks_[t->lane_of];
  if (t->kind != Track::Kind::kThread) return -1;
  return t->tid;
}

Status WindowRows::AddSlice(const Slice& s) {
  if (stopped_) return Stopped();
  switch (s.category) {
    case Category::kKernel:
    case Category::kGpuMemcpy:
    case Category::kGpuMemset:
    case Category::kCudaSync:
      AddOp(s);
      break;
    case Category::kCudaRuntime:
    case Category::kCudaDriver:
      AddApi(s);
      break;
    case Category::kUserAnnotation:
    case Category::kCpuOp:
    case Category::kCpuInstant:
      AddRange(s);
      break;
    case Category::kGpuUserAnnotation:
    case Category::kOverhead:
    case Category::kCudaEvent:
      AddDeviceSpan(s);
      break;
    case Category::kCudaGraph:
    case Category::kHostNode:
      // Graph-mode launches (--cuda-graph-trace graph) and host-node runs
      // have no table yet: docs/sqlite.md says so.
      break;
  }
  MaybeHandOver();
  return stopped_ ? Stopped() : Status::Ok();
}

void WindowRows::AddOp(const Slice& s) {
  OpArgs a(s.args);
  TableId table = s.category == Category::kKernel      ? TableId::kKernels
                  : s.category == Category::kGpuMemcpy ? TableId::kMemcpys
                  : s.category == Category::kGpuMemset ? TableId::kMemsets
                                                       : TableId::kSyncs;
  RowWriter row(&batch_, table);
  uint32_t name = 0;
  CaptureRows::KernelNames kernel;
  if (table == TableId::kKernels) {
    auto it = s.name_id ? names_of_id_.find(s.name_id) : names_of_id_.end();
    if (it != names_of_id_.end()) {
      kernel = it->second;
    } else {
      kernel = c_.NamesOf(s.name);
      if (s.name_id) names_of_id_.emplace(s.name_id, kernel);
    }
    name = kernel.name;
  } else {
    name = c_.ids.String(s.name);
  }
  int64_t end = s.ts_ns + std::max<int64_t>(s.dur_ns, 0);
  row.Owner(c_.rank).Ref(TableId::kWindows, 0);
  Maybe(row, a.device);
  Maybe(row, a.context);
  Maybe(row, a.stream);
  row.Int(s.ts_ns).Int(end).String(name);
  switch (table) {
    case TableId::kKernels:
      row.String(kernel.mangled).String(kernel.short_name);
      ShapeCells(row, a.grid);
      ShapeCells(row, a.block);
      Maybe(row, a.registers);
      Maybe(row, a.shared_memory);
      Maybe(row, a.static_shared);
      Maybe(row, a.dynamic_shared);
      row.NonZero(static_cast<uint64_t>(std::max<int64_t>(a.queued, 0)));
      break;
    case TableId::kMemcpys: {
      std::string_view kinds[3];
      CopyKinds(s.name, &kinds[0], &kinds[1], &kinds[2]);
      for (std::string_view k : kinds) {
        if (k.empty()) row.Null();
        else row.Text(k);
      }
      Maybe(row, a.bytes);
      Maybe(row, a.src_device);
      Maybe(row, a.dst_device);
      break;
    }
    case TableId::kMemsets:
      Maybe(row, a.bytes);
      break;
    default:  // syncs end here
      Maybe(row, a.wait_stream);
      Maybe(row, a.wait_event);
      Maybe(row, a.wait_correlation);
      Maybe(row, a.correlation);
      return;
  }
  Maybe(row, a.correlation);
  row.NonZero(a.external);
  Maybe(row, a.graph);
  row.NonZero(a.graph_node);
  Maybe(row, a.capture_node);
  // The launching call. The join streams track by track in track order
  // (trace_model.h), and a process's CPU threads sort before its GPUs
  // (TrackRegistry: a CPU process's sort index is its pid, a GPU's 5000000
  // and up), so the call has come already and its row is written at once
  // (each flow has one op: the call is forgotten). Should an op come first
  // (a pid above 5000000 in a hostile capture), its cells wait for the call
  // and keep the batch from being handed over until it comes: holding the
  // few such ops alone would take their rows' ids out of order.
  const uint64_t* flow = nullptr;
  for (const builder::FlowEnd& f : s.flows_in) {
    if (f.kind == FlowKind::kLaunch) {
      flow = &f.id;
      break;
    }
  }
  auto launch = flow != nullptr ? launches_.find(*flow) : launches_.end();
  if (launch != launches_.end()) {
    const Launch& l = launch->second;
    row.Ref(TableId::kApiCalls, l.row);
    Maybe(row, l.tid).Int(l.start).Int(l.end);
    launches_.erase(launch);
  } else {
    if (flow != nullptr) waiting_[*flow] = {table, row.cell()};
    row.Null().Null().Null().Null();
  }
  uint32_t stack = 0;
  StackRun& run = stack_of_run_[s.shared_id % builder::kSharedIdsLive];
  if (s.shared_id != 0 && run.shared_id == s.shared_id) {
    stack = run.stack;
  } else {
    for (std::string_view n : a.stack) stack = c_.ids.Stack(stack, c_.ids.String(n));
    if (s.shared_id != 0) run = {s.shared_id, stack};
  }
  row.Stack(stack);
  Maybe(row, a.capture_stream);
}

void WindowRows::AddApi(const Slice& s) {
  OpArgs a(s.args);
  int64_t cbid = -1;
  for (const Arg& x : s.args) {
    if (x.key == kCbid) cbid = static_cast<int64_t>(x.u());
  }
  int64_t tid = ThreadOf(s.track);
  int64_t end = s.ts_ns + std::max<int64_t>(s.dur_ns, 0);
  RowWriter row(&batch_, TableId::kApiCalls);
  for (const builder::FlowEnd& f : s.flows_out) {
    if (f.kind != FlowKind::kLaunch) continue;
    const Launch launch{WindowRow(TableId::kApiCalls, row.row()), tid, s.ts_ns, end};
    auto op = waiting_.find(f.id);
    if (op == waiting_.end()) {
      launches_[f.id] = launch;
      continue;
    }
    // An op that came first (AddOp): its cells are still in this batch.
    Cell* cells = &batch_.tables[static_cast<size_t>(op->second.table)].cells[op->second.cell];
    cells[0].kind = Cell::Kind::kRef;
    cells[0].ref = TableId::kApiCalls;
    cells[0].i = launch.row;
    if (launch.tid >= 0) {
      cells[1].kind = Cell::Kind::kInt;
      cells[1].i = launch.tid;
    }
    cells[2].kind = cells[3].kind = Cell::Kind::kInt;
    cells[2].i = launch.start;
    cells[3].i = launch.end;
    waiting_.erase(op);
  }
  row.Owner(c_.rank).Ref(TableId::kWindows, 0).Literal(s.category == Category::kCudaDriver ? &kDriver : &kRuntime);
  Maybe(row, tid);
  row.Int(s.ts_ns).Int(end).String(c_.ids.String(s.name));
  Maybe(row, cbid);
  Maybe(row, a.correlation);
  row.NonZero(a.external);
}

void WindowRows::AddRange(const Slice& s) {
  const uint32_t track = tracks_[s.track].kind == Track::Kind::kLane ? tracks_[s.track].lane_of : s.track;
  // The last track's ranges are all here (window_rows.h).
  if (!ranges_.empty() && ranges_.back().track != track) WriteRanges();
  PendingRange& r = ranges_.emplace_back();
  r.ts = s.ts_ns;
  r.dur = s.dur_ns;
  r.payload.i = 0;
  r.name = c_.ids.String(s.name);
  r.domain = 0;
  r.track = track;
  r.category = 0;
  r.tid = r.end_tid = 0;
  r.seq = static_cast<uint32_t>(ranges_.size() - 1);
  r.flags = 0;
  int64_t tid = ThreadOf(s.track), end_tid = -1;
  const bool start_end = !s.instant() && tracks_[track].kind == Track::Kind::kSynthetic;
  if (s.instant()) r.flags |= kInstant;
  if (start_end) r.flags |= kStartEndRange;
  for (const Arg& a : s.args) {
    if (a.foreign_key) continue;
    if (start_end && a.key == kExternalId) {
      std::tie(tid, end_tid) = StartEndThreads(a.u(), s.name);
    }
    else if (a.key == kDomain && a.type == Arg::Type::kString) r.domain = c_.ids.String(a.s());
    else if (a.key == kCategory) r.category = static_cast<uint32_t>(a.u());
    else if (a.key == kPayload) {
      r.flags &= static_cast<uint8_t>(~(kIntPayload | kRealPayload));
      if (a.type == Arg::Type::kDouble) {
        r.flags |= kRealPayload;
        r.payload.d = a.d();
      } else {
        r.flags |= kIntPayload;
        r.payload.i = a.type == Arg::Type::kInt ? a.i() : static_cast<int64_t>(a.u());
      }
    }
  }
  if (tid >= 0) {
    r.flags |= kHasTid;
    r.tid = static_cast<uint32_t>(tid);
  }
  if (end_tid >= 0) {
    r.flags |= kHasEndTid;
    r.end_tid = static_cast<uint32_t>(end_tid);
  }
}

// Depth and parent: the innermost earlier range of the same thread (or
// start/end track) and domain that holds this one whole. Writes the one
// track's ranges held, sorted by (domain, start, longest first, arrival).
void WindowRows::WriteRanges() {
  auto key = [](const PendingRange& r) { return std::tuple(r.track, r.domain); };
  std::sort(ranges_.begin(), ranges_.end(), [&](const PendingRange& a, const PendingRange& b) {
    if (key(a) != key(b)) return key(a) < key(b);
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.dur != b.dur) return a.dur > b.dur;
    return a.seq < b.seq;
  });
  struct Open {
    int64_t end;
    int64_t row;  // in the window's nvtx_ranges
    int depth;
  };
  std::vector<Open> stack;
  for (size_t i = 0; i < ranges_.size(); ++i) {
    const PendingRange& r = ranges_[i];
    if (i > 0 && key(ranges_[i - 1]) != key(r)) stack.clear();
    int64_t start = r.ts, end = start + std::max<int64_t>(r.dur, 0);
    while (!stack.empty() && stack.back().end <= start) {
      stack.pop_back();
    }
    const Open* parent = nullptr;
    for (size_t j = stack.size(); j-- > 0;) {
      if (stack[j].end >= end) {
        parent = &stack[j];
        break;
      }
    }
    int depth = parent ? parent->depth + 1 : 0;
    const bool instant = r.flags & kInstant;
    int64_t row_id;
    {
      RowWriter row(&batch_, TableId::kNvtxRanges);
      row_id = WindowRow(TableId::kNvtxRanges, row.row());
      row.Owner(c_.rank)
          .Ref(TableId::kWindows, 0)
          .Literal(instant ? &kMark : (r.flags & kStartEndRange) ? &kStartEnd : &kPushPop);
      if (r.flags & kHasTid) row.Int(r.tid);
      else row.Null();
      row.String(r.domain).Int(start).Int(end).String(r.name).Int(depth);
      row.Ref(TableId::kNvtxRanges, parent ? parent->row : -1);
      if (r.category) row.Int(r.category);
      else row.Null();
      if (r.flags & kRealPayload) row.Real(r.payload.d);
      else if (r.flags & kIntPayload) row.Int(r.payload.i);
      else row.Null();
      if (r.flags & kHasEndTid) row.Int(r.end_tid);
      else row.Null();
    }
    if (!instant) stack.push_back({end, row_id, depth});
    MaybeHandOver();
    if (stopped_) break;
  }
  ranges_.clear();
}

Status WindowRows::AddCounter(const builder::CounterPoint& p) {
  if (stopped_) return Stopped();
  const Track& t = tracks_[p.track];
  const builder::Process& proc = processes_[t.process];
  {
    // Done (its destructor counts it) before the batch may be handed over.
    RowWriter row(&batch_, TableId::kCounters);
    row.Owner(c_.rank).Ref(TableId::kWindows, 0);
    if (proc.kind == builder::Process::Kind::kGpu) row.Int(proc.pid);
    else row.Null();
    // The track's name carries the unit in parentheses; the name column does not.
    std::string_view name = t.name;
    std::string suffix = " (" + t.unit + ")";
    if (!t.unit.empty() && name.size() > suffix.size() && name.ends_with(suffix)) name.remove_suffix(suffix.size());
    row.String(c_.ids.String(name)).Text(t.unit).Int(p.ts_ns).Real(p.value);
  }
  MaybeHandOver();
  return stopped_ ? Stopped() : Status::Ok();
}

Status WindowRows::End() {
  if (stopped_) return Stopped();
  WriteRanges();
  // An op whose launch never came keeps no launch (each flow's two ends are
  // in the window: trace_model.h; none is expected).
  waiting_.clear();
  HandOver(true);
  return stopped_ ? Stopped() : Status::Ok();
}

}  // namespace gpucap::tools::sqlite
