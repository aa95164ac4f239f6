#include "gpucap/builder/decode.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "gpucap/format/activity_kind.h"

namespace gpucap::builder {

using format::ActivityKind;
using format::Field;
using format::FieldLoc;
using format::ReadSigned;
using format::ReadUnsigned;
using format::RecordLayout;

void DecodeStats::Merge(const DecodeStats& o) {
  records += o.records;
  chunks += o.chunks;
  for (auto [k, n] : o.skipped_kinds) skipped_kinds[k] += n;
  unwalkable_bytes += o.unwalkable_bytes;
  unresolved_names += o.unresolved_names;
  late_names += o.late_names;
  corrupt_chunks += o.corrupt_chunks;
  problems.insert(problems.end(), o.problems.begin(), o.problems.end());
}

uint32_t FamilyOf(uint32_t kind) {
  switch (static_cast<ActivityKind>(kind)) {
    case ActivityKind::kKernel:
    case ActivityKind::kConcurrentKernel: return kKernels;
    case ActivityKind::kMemcpy:
    case ActivityKind::kMemcpy2: return kMemcpys;
    case ActivityKind::kMemset: return kMemsets;
    case ActivityKind::kRuntime:
    case ActivityKind::kDriver: return kApis;
    case ActivityKind::kExternalCorrelation: return kExternals;
    case ActivityKind::kOverhead: return kOverheads;
    case ActivityKind::kSynchronization: return kSyncs;
    case ActivityKind::kCudaEvent: return kCudaEvents;
    case ActivityKind::kMarker: return kMarkers;
    case ActivityKind::kEnvironment: return kEnvironment;
    case ActivityKind::kGraphTrace: return kGraphTraces;
    default: return 0;
  }
}

namespace {

// A layout's locations of the fields one family reads, looked up once per
// chunk rather than once per record.
struct Reader {
  const uint8_t* r;
  const RecordLayout& l;
  [[gnu::always_inline]] uint64_t U(Field f) const { return ReadUnsigned(r, l.at(f)); }
  [[gnu::always_inline]] uint32_t U32(Field f) const { return static_cast<uint32_t>(ReadUnsigned(r, l.at(f))); }
  [[gnu::always_inline]] int32_t I32(Field f) const { return static_cast<int32_t>(ReadSigned(r, l.at(f))); }
};

// Rows written in place into a table grown ahead of them (by the recorder's
// count of the chunk's records, doubling if that falls short) and cut to
// what was written at the end: a push_back per column per record cost more
// than decoding the record.
template <class Table>
class RowWriter {
 public:
  explicit RowWriter(Table* t) : t_(*t), used_(t->size()) {}
  // n more rows are coming (called before any Next).
  void Expect(size_t n) { t_.resize(t_.size() + n); }
  size_t Next() {
    if (used_ == t_.size()) [[unlikely]] t_.resize(std::max<size_t>(64, used_ * 2));
    return used_++;
  }
  void Finish() { t_.resize(used_); }

 private:
  Table& t_;
  size_t used_;
};

}  // namespace

Decoder::Decoder(const format::Capture& capture)
    : capture_(capture), strings_(capture.strings) {
  if (capture.session) {
    version_ = capture.session->cupti_runtime_version;
    if (version_ == 0) version_ = capture.session->cupti_header_version;
    for (const format::KindSize& k : capture.session->record_sizes) session_sizes_[k.kind] = k.size;
  }
  table_ = format::LayoutForVersion(version_);
  if (table_ == nullptr) {
    version_warning_ = "CUPTI version " + std::to_string(version_) +
                       " has no layout table in this gpucap; decoding only the record kinds "
                       "whose size matches a known layout";
  }
}

uint32_t Decoder::StrideFor(uint32_t kind, const format::ChunkInfo& info) const {
  for (const format::KindSize& k : info.record_sizes) {
    if (k.kind == kind) return k.size;
  }
  if (table_ != nullptr) {
    if (const RecordLayout* l = table_->Find(kind)) return l->size;
  }
  auto it = session_sizes_.find(kind);
  return it == session_sizes_.end() ? 0 : it->second;
}

const RecordLayout* Decoder::LayoutFor(uint32_t kind, uint32_t stride) const {
  if (table_ != nullptr) {
    const RecordLayout* l = table_->Find(kind);
    if (l != nullptr && l->size == stride) return l;
  }
  // Unknown version, or a size the version's table does not expect: the
  // bytes are only trusted when some known struct has exactly that size.
  return format::MatchLayoutBySize(kind, stride);
}

Decoder::RecordShape Decoder::ShapeOf(uint32_t kind, const format::ChunkInfo& info) const {
  RecordShape shape;
  shape.stride = StrideFor(kind, info);
  if (shape.stride != 0) shape.layout = LayoutFor(kind, shape.stride);
  return shape;
}

void Decoder::DecodeChunk(size_t index, uint32_t families, ActivityTables* out, DecodeStats* stats,
                          std::vector<uint64_t>* scratch) const {
  const format::ChunkView& chunk = capture_.chunks[index];
  Status s = format::DecompressChunk(*capture_.file, chunk, scratch);
  stats->chunks++;
  if (!s.ok()) {
    stats->corrupt_chunks++;
    stats->problems.push_back(s.message());
    return;
  }
  auto raw = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(scratch->data()),
                                      chunk.info.raw_size);
  DecodeRecords(raw, chunk.info, chunk.sequence, families, out, stats);
  // The stored bytes are read once per window at most: let the kernel drop
  // their pages from this process now (the mapping is private and read-only;
  // they fault back in from the file if read again), so resident memory
  // follows the window being built, not the part of the capture read so far.
  static const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(chunk.stored.data()) + kPage - 1) & ~(kPage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(chunk.stored.data()) + chunk.stored.size()) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void Decoder::DecodeRecords(std::span<const uint8_t> raw, const format::ChunkInfo& info,
                            uint32_t sequence, uint32_t families, ActivityTables* out,
                            DecodeStats* stats) const {
  // Layouts by kind for this chunk; strides can differ between chunks.
  struct Plan {
    uint32_t kind;
    uint32_t stride;
    const RecordLayout* layout;
  };
  std::vector<Plan> plans;
  RowWriter<KernelTable> kernels(&out->kernels);
  RowWriter<ApiTable> apis(&out->apis);
  RowWriter<MemcpyTable> memcpys(&out->memcpys);
  RowWriter<MemsetTable> memsets(&out->memsets);
  RowWriter<ExternalCorrelationTable> externals(&out->externals);
  // The recorder counted records per kind: size the tables once, if the
  // counts are ones the bytes can hold (records of their kinds' sizes, all
  // together); a chunk claiming more is sized as it is read.
  uint64_t claimed_bytes = 0;
  for (const format::KindCount& k : info.kind_counts) {
    uint32_t stride = std::max<uint32_t>(ShapeOf(k.kind, info).stride, 8);
    if (k.count > raw.size() / stride) {
      claimed_bytes = UINT64_MAX;
      break;
    }
    claimed_bytes += k.count * stride;
  }
  for (const format::KindCount& k : info.kind_counts) {
    if (claimed_bytes > raw.size()) break;
    if ((FamilyOf(k.kind) & families) == 0) continue;
    size_t n = static_cast<size_t>(k.count);
    switch (FamilyOf(k.kind)) {
      case kKernels: kernels.Expect(n); break;
      case kApis: apis.Expect(n); break;
      case kMemcpys: memcpys.Expect(n); break;
      case kMemsets: memsets.Expect(n); break;
      case kExternals: externals.Expect(n); break;
      default: break;
    }
  }
  auto plan_for = [&](uint32_t kind) -> const Plan& {
    for (const Plan& p : plans) {
      if (p.kind == kind) return p;
    }
    RecordShape shape = ShapeOf(kind, info);
    plans.push_back({kind, shape.stride, shape.layout});
    return plans.back();
  };

  struct NameSlot {
    uint64_t pointer = 0;
    StringResolver::Resolution resolution;
    bool valid = false;
  };
  std::array<NameSlot, 64> names{};

  size_t off = 0;
  while (off + 8 <= raw.size()) {
    uint32_t kind;
    std::memcpy(&kind, raw.data() + off, 4);
    const Plan& plan = plan_for(kind);
    if (plan.stride < 8 || off + plan.stride > raw.size()) {
      // Nothing says how long this record is (or it runs past the buffer):
      // the rest of the chunk cannot be walked.
      stats->unwalkable_bytes += raw.size() - off;
      stats->skipped_kinds[kind]++;
      break;
    }
    stats->records++;
    const uint8_t* rec = raw.data() + off;
    off += plan.stride;
    if (plan.layout == nullptr) {
      stats->skipped_kinds[kind]++;
      continue;
    }
    uint32_t family = FamilyOf(kind);
    if ((family & families) == 0) continue;
    Reader r{rec, *plan.layout};
    switch (family) {
      case kKernels: {
        KernelTable& t = out->kernels;
        size_t i = kernels.Next();
        t.start[i] = r.U(Field::kStart);
        t.end[i] = r.U(Field::kEnd);
        t.queued[i] = r.U(Field::kQueued);
        t.graph_node_id[i] = r.U(Field::kGraphNodeId);
        uint64_t pointer = r.U(Field::kName);
        // Kernels of a buffer repeat a few names: a small cache in front of
        // the resolver's binary search.
        NameSlot& slot = names[(pointer * 0x9e3779b97f4a7c15ull) >> 58];
        if (slot.pointer != pointer || !slot.valid) {
          slot = {pointer, strings_.Resolve(pointer, sequence), true};
        }
        StringResolver::Resolution name = slot.resolution;
        if (name.index == kNoString) stats->unresolved_names++;
        if (name.late) stats->late_names++;
        t.name_pointer[i] = pointer;
        t.name[i] = name.index;
        t.correlation[i] = r.U32(Field::kCorrelationId);
        t.device[i] = r.U32(Field::kDeviceId);
        t.context[i] = r.U32(Field::kContextId);
        t.stream[i] = r.U32(Field::kStreamId);
        t.graph_id[i] = r.U32(Field::kGraphId);
        t.grid_x[i] = r.I32(Field::kGridX);
        t.grid_y[i] = r.I32(Field::kGridY);
        t.grid_z[i] = r.I32(Field::kGridZ);
        t.block_x[i] = r.I32(Field::kBlockX);
        t.block_y[i] = r.I32(Field::kBlockY);
        t.block_z[i] = r.I32(Field::kBlockZ);
        t.static_shared_memory[i] = r.I32(Field::kStaticSharedMemory);
        t.dynamic_shared_memory[i] = r.I32(Field::kDynamicSharedMemory);
        t.registers_per_thread[i] = static_cast<uint16_t>(r.U(Field::kRegistersPerThread));
        t.launch_type[i] = static_cast<uint8_t>(r.U(Field::kLaunchType));
        break;
      }
      case kMemcpys: {
        MemcpyTable& t = out->memcpys;
        size_t i = memcpys.Next();
        bool peer = kind == static_cast<uint32_t>(ActivityKind::kMemcpy2);
        uint32_t device = r.U32(Field::kDeviceId), context = r.U32(Field::kContextId);
        t.start[i] = r.U(Field::kStart);
        t.end[i] = r.U(Field::kEnd);
        t.bytes[i] = r.U(Field::kBytes);
        t.graph_node_id[i] = r.U(Field::kGraphNodeId);
        t.correlation[i] = r.U32(Field::kCorrelationId);
        t.device[i] = device;
        t.context[i] = context;
        t.stream[i] = r.U32(Field::kStreamId);
        t.graph_id[i] = r.U32(Field::kGraphId);
        t.src_device[i] = peer ? r.U32(Field::kSrcDeviceId) : device;
        t.src_context[i] = peer ? r.U32(Field::kSrcContextId) : context;
        t.dst_device[i] = peer ? r.U32(Field::kDstDeviceId) : device;
        t.dst_context[i] = peer ? r.U32(Field::kDstContextId) : context;
        t.copy_kind[i] = static_cast<uint8_t>(r.U(Field::kCopyKind));
        t.src_kind[i] = static_cast<uint8_t>(r.U(Field::kSrcKind));
        t.dst_kind[i] = static_cast<uint8_t>(r.U(Field::kDstKind));
        t.peer[i] = peer;
        break;
      }
      case kMemsets: {
        MemsetTable& t = out->memsets;
        size_t i = memsets.Next();
        t.start[i] = r.U(Field::kStart);
        t.end[i] = r.U(Field::kEnd);
        t.bytes[i] = r.U(Field::kBytes);
        t.graph_node_id[i] = r.U(Field::kGraphNodeId);
        t.correlation[i] = r.U32(Field::kCorrelationId);
        t.device[i] = r.U32(Field::kDeviceId);
        t.context[i] = r.U32(Field::kContextId);
        t.stream[i] = r.U32(Field::kStreamId);
        t.graph_id[i] = r.U32(Field::kGraphId);
        t.value[i] = r.U32(Field::kValue);
        t.memory_kind[i] = static_cast<uint16_t>(r.U(Field::kMemoryKind));
        break;
      }
      case kApis: {
        ApiTable& t = out->apis;
        size_t i = apis.Next();
        t.start[i] = r.U(Field::kStart);
        t.end[i] = r.U(Field::kEnd);
        t.cbid[i] = r.U32(Field::kCbid);
        t.pid[i] = r.U32(Field::kProcessId);
        t.tid[i] = r.U32(Field::kThreadId);
        t.correlation[i] = r.U32(Field::kCorrelationId);
        t.return_value[i] = r.U32(Field::kReturnValue);
        t.domain[i] = kind == static_cast<uint32_t>(ActivityKind::kDriver) ? ApiDomain::kDriver
                                                                          : ApiDomain::kRuntime;
        break;
      }
      case kExternals: {
        ExternalCorrelationTable& t = out->externals;
        size_t i = externals.Next();
        t.external_id[i] = r.U(Field::kExternalId);
        t.correlation[i] = r.U32(Field::kCorrelationId);
        t.external_kind[i] = r.U32(Field::kExternalKind);
        break;
      }
      case kOverheads: {
        OverheadTable& t = out->overheads;
        uint32_t object_kind = r.U32(Field::kObjectKind);
        bool thread_object = object_kind == 1 || object_kind == 2;  // process, thread
        t.start.push_back(r.U(Field::kStart));
        t.end.push_back(r.U(Field::kEnd));
        t.overhead_kind.push_back(r.U32(Field::kOverheadKind));
        t.object_kind.push_back(object_kind);
        t.object_a.push_back(thread_object ? r.U32(Field::kObjectProcessId) : r.U32(Field::kObjectDeviceId));
        t.object_b.push_back(thread_object ? r.U32(Field::kObjectThreadId) : r.U32(Field::kObjectContextId));
        t.correlation.push_back(r.U32(Field::kCorrelationId));
        break;
      }
      case kSyncs: {
        SyncTable& t = out->syncs;
        t.start.push_back(r.U(Field::kStart));
        t.end.push_back(r.U(Field::kEnd));
        t.event_sync_id.push_back(r.U(Field::kCudaEventSyncId));
        t.type.push_back(r.U32(Field::kSyncType));
        t.correlation.push_back(r.U32(Field::kCorrelationId));
        t.context.push_back(r.U32(Field::kContextId));
        t.stream.push_back(r.U32(Field::kStreamId));
        t.cuda_event_id.push_back(r.U32(Field::kCudaEventId));
        break;
      }
      case kCudaEvents: {
        CudaEventTable& t = out->cuda_events;
        t.device_timestamp.push_back(r.U(Field::kDeviceTimestamp));
        t.event_sync_id.push_back(r.U(Field::kCudaEventSyncId));
        t.correlation.push_back(r.U32(Field::kCorrelationId));
        t.context.push_back(r.U32(Field::kContextId));
        t.stream.push_back(r.U32(Field::kStreamId));
        t.event_id.push_back(r.U32(Field::kCudaEventId));
        t.device.push_back(r.U32(Field::kDeviceId));
        break;
      }
      case kMarkers: {
        MarkerTable& t = out->markers;
        StringResolver::Resolution name = strings_.Resolve(r.U(Field::kName), sequence);
        StringResolver::Resolution domain = strings_.Resolve(r.U(Field::kDomain), sequence);
        t.timestamp.push_back(r.U(Field::kTimestamp));
        t.flags.push_back(r.U32(Field::kFlags));
        t.id.push_back(r.U32(Field::kMarkerId));
        t.object_kind.push_back(r.U32(Field::kObjectKind));
        t.pid.push_back(r.U32(Field::kObjectProcessId));
        t.tid.push_back(r.U32(Field::kObjectThreadId));
        t.name.push_back(name.index);
        t.domain.push_back(domain.index);
        break;
      }
      case kEnvironment: {
        EnvironmentTable& t = out->environment;
        t.timestamp.push_back(r.U(Field::kTimestamp));
        t.device.push_back(r.U32(Field::kDeviceId));
        t.kind.push_back(r.U32(Field::kEnvironmentKind));
        t.sm_clock.push_back(r.U32(Field::kSmClock));
        t.memory_clock.push_back(r.U32(Field::kMemoryClock));
        t.temperature.push_back(r.U32(Field::kGpuTemperature));
        t.power.push_back(r.U32(Field::kPower));
        t.power_limit.push_back(r.U32(Field::kPowerLimit));
        t.fan_speed.push_back(r.U32(Field::kFanSpeed));
        break;
      }
      case kGraphTraces: {
        GraphTraceTable& t = out->graph_traces;
        t.start.push_back(r.U(Field::kStart));
        t.end.push_back(r.U(Field::kEnd));
        t.correlation.push_back(r.U32(Field::kCorrelationId));
        t.device.push_back(r.U32(Field::kDeviceId));
        t.context.push_back(r.U32(Field::kContextId));
        t.stream.push_back(r.U32(Field::kStreamId));
        t.graph_id.push_back(r.U32(Field::kGraphId));
        t.end_device.push_back(r.U32(Field::kEndDeviceId));
        t.end_context.push_back(r.U32(Field::kEndContextId));
        break;
      }
      default:
        break;
    }
  }
  kernels.Finish();
  apis.Finish();
  memcpys.Finish();
  memsets.Finish();
  externals.Finish();
}

std::vector<std::string> Decoder::Describe(const DecodeStats& stats) const {
  std::vector<std::string> lines;
  if (!version_warning_.empty() && !stats.skipped_kinds.empty()) lines.push_back(version_warning_);
  for (auto [kind, n] : stats.skipped_kinds) {
    lines.push_back(std::to_string(n) + " " + format::ActivityKindName(kind) +
                    " records skipped: no known layout for them in CUPTI version " +
                    std::to_string(version_));
  }
  if (stats.unwalkable_bytes > 0) {
    lines.push_back(std::to_string(stats.unwalkable_bytes) +
                    " bytes of activity left undecoded after records of unknown size");
  }
  if (stats.unresolved_names > 0) {
    lines.push_back(std::to_string(stats.unresolved_names) +
                    " kernel names unresolved (no string definition for their pointer)");
  }
  for (const std::string& p : stats.problems) lines.push_back(p);
  return lines;
}

}  // namespace gpucap::builder
