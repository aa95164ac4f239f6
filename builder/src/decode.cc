#include "gpucap/builder/decode.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "gpucap/builder/record_walk.h"
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
  backward_spans += o.backward_spans;
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
    : capture_(capture), shapes_(capture), strings_(capture.strings) {}

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
  if ((families & kNoKernelArgs) != 0) out->kernels.DropArgs();
  // The stored bytes are read once per window at most: let the kernel drop
  // their pages from this process now (the mapping is private and read-only;
  // they fault back in from the file if read again), so resident memory
  // follows the window being built, not the part of the capture read so far.
  static const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(chunk.stored.data()) + kPage - 1) & ~(kPage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(chunk.stored.data()) + chunk.stored.size()) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

namespace {

// Writes the rows of one chunk's records into the tables, one family each.
class RowDecoder {
 public:
  RowDecoder(ActivityTables* out, DecodeStats* stats, const StringResolver& strings, uint32_t sequence)
      : out_(*out), stats_(*stats), strings_(strings), sequence_(sequence), kernels_(&out->kernels),
        apis_(&out->apis), memcpys_(&out->memcpys), memsets_(&out->memsets), externals_(&out->externals) {}

  // The recorder counted records per kind: size the tables once, if the
  // counts are ones the bytes can hold (records of their kinds' sizes, all
  // together); a chunk claiming more is sized as it is read.
  void Expect(const format::ChunkInfo& info, size_t raw_size, uint32_t families, RecordWalk* walk) {
    uint64_t claimed_bytes = 0;
    for (const format::KindCount& k : info.kind_counts) {
      uint32_t stride = std::max<uint32_t>(walk->ShapeOf(k.kind).stride, 8);
      if (k.count > raw_size / stride) return;
      claimed_bytes += k.count * stride;
    }
    if (claimed_bytes > raw_size) return;
    for (const format::KindCount& k : info.kind_counts) {
      if ((FamilyOf(k.kind) & families) == 0) continue;
      size_t n = static_cast<size_t>(k.count);
      switch (FamilyOf(k.kind)) {
        case kKernels: kernels_.Expect(n); break;
        case kApis: apis_.Expect(n); break;
        case kMemcpys: memcpys_.Expect(n); break;
        case kMemsets: memsets_.Expect(n); break;
        case kExternals: externals_.Expect(n); break;
        default: break;
      }
    }
  }

  [[gnu::always_inline]] void Record(uint32_t kind, uint32_t family, const Reader& r) {
    switch (family) {
      case kKernels: Kernel(r); break;
      case kMemcpys: Memcpy(r, kind == static_cast<uint32_t>(ActivityKind::kMemcpy2)); break;
      case kMemsets: Memset(r); break;
      case kApis: Api(r, kind == static_cast<uint32_t>(ActivityKind::kDriver)); break;
      case kExternals: External(r); break;
      case kOverheads: Overhead(r); break;
      case kSyncs: Sync(r); break;
      case kCudaEvents: CudaEvent(r); break;
      case kMarkers: Marker(r); break;
      case kEnvironment: Environment(r); break;
      case kGraphTraces: GraphTrace(r); break;
      default: break;
    }
  }

  void Finish() {
    kernels_.Finish();
    apis_.Finish();
    memcpys_.Finish();
    memsets_.Finish();
    externals_.Finish();
  }

 private:
  void Kernel(const Reader& r);
  void Memcpy(const Reader& r, bool peer);
  void Memset(const Reader& r);
  void Api(const Reader& r, bool driver);
  void External(const Reader& r);
  void Overhead(const Reader& r);
  void Sync(const Reader& r);
  void CudaEvent(const Reader& r);
  void Marker(const Reader& r);
  void Environment(const Reader& r);
  void GraphTrace(const Reader& r);

  ActivityTables& out_;
  DecodeStats& stats_;
  const StringResolver& strings_;
  uint32_t sequence_;
  RowWriter<KernelTable> kernels_;
  RowWriter<ApiTable> apis_;
  RowWriter<MemcpyTable> memcpys_;
  RowWriter<MemsetTable> memsets_;
  RowWriter<ExternalCorrelationTable> externals_;
  struct NameSlot {
    uint64_t pointer = 0;
    StringResolver::Resolution resolution;
    bool valid = false;
  };
  std::array<NameSlot, 64> names_{};
};

void RowDecoder::Kernel(const Reader& r) {
  KernelTable& t = out_.kernels;
  size_t i = kernels_.Next();
  t.start[i] = r.U(Field::kStart);
  t.end[i] = r.U(Field::kEnd);
  if (t.end[i] != 0 && t.end[i] < t.start[i]) stats_.backward_spans++;
  t.queued[i] = r.U(Field::kQueued);
  t.channel_id[i] = r.U32(Field::kChannelId);
  t.channel_type[i] = static_cast<uint8_t>(r.U(Field::kChannelType));
  t.graph_node_id[i] = r.U(Field::kGraphNodeId);
  uint64_t pointer = r.U(Field::kName);
  // Kernels of a buffer repeat a few names: a small cache in front of
  // the resolver's binary search.
  NameSlot& slot = names_[(pointer * 0x9e3779b97f4a7c15ull) >> 58];
  if (slot.pointer != pointer || !slot.valid) {
    slot = {pointer, strings_.Resolve(pointer, sequence_), true};
  }
  StringResolver::Resolution name = slot.resolution;
  if (name.index == kNoString) stats_.unresolved_names++;
  if (name.late) stats_.late_names++;
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
}

void RowDecoder::Memcpy(const Reader& r, bool peer) {
  MemcpyTable& t = out_.memcpys;
  size_t i = memcpys_.Next();
  uint32_t device = r.U32(Field::kDeviceId), context = r.U32(Field::kContextId);
  t.start[i] = r.U(Field::kStart);
  t.end[i] = r.U(Field::kEnd);
  if (t.end[i] != 0 && t.end[i] < t.start[i]) stats_.backward_spans++;
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
}

void RowDecoder::Memset(const Reader& r) {
  MemsetTable& t = out_.memsets;
  size_t i = memsets_.Next();
  t.start[i] = r.U(Field::kStart);
  t.end[i] = r.U(Field::kEnd);
  if (t.end[i] != 0 && t.end[i] < t.start[i]) stats_.backward_spans++;
  t.bytes[i] = r.U(Field::kBytes);
  t.graph_node_id[i] = r.U(Field::kGraphNodeId);
  t.correlation[i] = r.U32(Field::kCorrelationId);
  t.device[i] = r.U32(Field::kDeviceId);
  t.context[i] = r.U32(Field::kContextId);
  t.stream[i] = r.U32(Field::kStreamId);
  t.graph_id[i] = r.U32(Field::kGraphId);
  t.value[i] = r.U32(Field::kValue);
  t.memory_kind[i] = static_cast<uint16_t>(r.U(Field::kMemoryKind));
}

void RowDecoder::Api(const Reader& r, bool driver) {
  ApiTable& t = out_.apis;
  size_t i = apis_.Next();
  t.start[i] = r.U(Field::kStart);
  t.end[i] = r.U(Field::kEnd);
  if (t.end[i] != 0 && t.end[i] < t.start[i]) stats_.backward_spans++;
  t.cbid[i] = r.U32(Field::kCbid);
  t.pid[i] = r.U32(Field::kProcessId);
  t.tid[i] = r.U32(Field::kThreadId);
  t.correlation[i] = r.U32(Field::kCorrelationId);
  t.return_value[i] = r.U32(Field::kReturnValue);
  t.domain[i] = driver ? ApiDomain::kDriver : ApiDomain::kRuntime;
}

void RowDecoder::External(const Reader& r) {
  ExternalCorrelationTable& t = out_.externals;
  size_t i = externals_.Next();
  t.external_id[i] = r.U(Field::kExternalId);
  t.correlation[i] = r.U32(Field::kCorrelationId);
  t.external_kind[i] = r.U32(Field::kExternalKind);
}

void RowDecoder::Overhead(const Reader& r) {
  OverheadTable& t = out_.overheads;
  uint32_t object_kind = r.U32(Field::kObjectKind);
  bool thread_object = object_kind == 1 || object_kind == 2;  // process, thread
  t.start.push_back(r.U(Field::kStart));
  t.end.push_back(r.U(Field::kEnd));
  t.overhead_kind.push_back(r.U32(Field::kOverheadKind));
  t.object_kind.push_back(object_kind);
  t.object_a.push_back(thread_object ? r.U32(Field::kObjectProcessId) : r.U32(Field::kObjectDeviceId));
  t.object_b.push_back(thread_object ? r.U32(Field::kObjectThreadId) : r.U32(Field::kObjectContextId));
  t.correlation.push_back(r.U32(Field::kCorrelationId));
}

void RowDecoder::Sync(const Reader& r) {
  SyncTable& t = out_.syncs;
  t.start.push_back(r.U(Field::kStart));
  t.end.push_back(r.U(Field::kEnd));
  t.event_sync_id.push_back(r.U(Field::kCudaEventSyncId));
  t.type.push_back(r.U32(Field::kSyncType));
  t.correlation.push_back(r.U32(Field::kCorrelationId));
  t.context.push_back(r.U32(Field::kContextId));
  t.stream.push_back(r.U32(Field::kStreamId));
  t.cuda_event_id.push_back(r.U32(Field::kCudaEventId));
}

void RowDecoder::CudaEvent(const Reader& r) {
  CudaEventTable& t = out_.cuda_events;
  t.device_timestamp.push_back(r.U(Field::kDeviceTimestamp));
  t.event_sync_id.push_back(r.U(Field::kCudaEventSyncId));
  t.correlation.push_back(r.U32(Field::kCorrelationId));
  t.context.push_back(r.U32(Field::kContextId));
  t.stream.push_back(r.U32(Field::kStreamId));
  t.event_id.push_back(r.U32(Field::kCudaEventId));
  t.device.push_back(r.U32(Field::kDeviceId));
}

void RowDecoder::Marker(const Reader& r) {
  MarkerTable& t = out_.markers;
  StringResolver::Resolution name = strings_.Resolve(r.U(Field::kName), sequence_);
  StringResolver::Resolution domain = strings_.Resolve(r.U(Field::kDomain), sequence_);
  t.timestamp.push_back(r.U(Field::kTimestamp));
  t.flags.push_back(r.U32(Field::kFlags));
  t.id.push_back(r.U32(Field::kMarkerId));
  t.object_kind.push_back(r.U32(Field::kObjectKind));
  t.pid.push_back(r.U32(Field::kObjectProcessId));
  t.tid.push_back(r.U32(Field::kObjectThreadId));
  t.name.push_back(name.index);
  t.domain.push_back(domain.index);
}

void RowDecoder::GraphTrace(const Reader& r) {
  GraphTraceTable& t = out_.graph_traces;
  t.start.push_back(r.U(Field::kStart));
  t.end.push_back(r.U(Field::kEnd));
  t.correlation.push_back(r.U32(Field::kCorrelationId));
  t.device.push_back(r.U32(Field::kDeviceId));
  t.context.push_back(r.U32(Field::kContextId));
  t.stream.push_back(r.U32(Field::kStreamId));
  t.graph_id.push_back(r.U32(Field::kGraphId));
  t.end_device.push_back(r.U32(Field::kEndDeviceId));
  t.end_context.push_back(r.U32(Field::kEndContextId));
}

void RowDecoder::Environment(const Reader& r) {
  EnvironmentTable& t = out_.environment;
  t.timestamp.push_back(r.U(Field::kTimestamp));
  t.device.push_back(r.U32(Field::kDeviceId));
  t.kind.push_back(r.U32(Field::kEnvironmentKind));
  t.sm_clock.push_back(r.U32(Field::kSmClock));
  t.memory_clock.push_back(r.U32(Field::kMemoryClock));
  t.temperature.push_back(r.U32(Field::kGpuTemperature));
  t.power.push_back(r.U32(Field::kPower));
  t.power_limit.push_back(r.U32(Field::kPowerLimit));
  t.fan_speed.push_back(r.U32(Field::kFanSpeed));
}

}  // namespace

void Decoder::DecodeRecords(std::span<const uint8_t> raw, const format::ChunkInfo& info,
                            uint32_t sequence, uint32_t families, ActivityTables* out,
                            DecodeStats* stats) const {
  RecordWalk walk(shapes_, info);  // layouts by kind for this chunk; strides can differ between chunks
  RowDecoder rows(out, stats, strings_, sequence);
  rows.Expect(info, raw.size(), families, &walk);
  RecordWalk::Stop stop = walk.Run(raw, [&](const RawRecord& rec) {
    stats->records++;
    if (rec.layout == nullptr) {
      stats->skipped_kinds[rec.kind]++;
      return;
    }
    uint32_t family = FamilyOf(rec.kind);
    if ((family & families) == 0) return;
    rows.Record(rec.kind, family, Reader{rec.bytes, *rec.layout});
  });
  if (stop.unwalkable_bytes > 0) {
    // Nothing says how long this record is (or it runs past the buffer):
    // the rest of the chunk cannot be walked.
    stats->unwalkable_bytes += stop.unwalkable_bytes;
    stats->skipped_kinds[stop.kind]++;
  }
  rows.Finish();
}

std::vector<std::string> Decoder::Describe(const DecodeStats& stats) const {
  std::vector<std::string> lines;
  if (!shapes_.version_warning().empty() && !stats.skipped_kinds.empty()) lines.push_back(shapes_.version_warning());
  for (auto [kind, n] : stats.skipped_kinds) {
    lines.push_back(std::to_string(n) + " " + format::ActivityKindName(kind) +
                    " records skipped: no known layout for them in CUPTI version " +
                    std::to_string(shapes_.cupti_version()));
  }
  if (stats.unwalkable_bytes > 0) {
    lines.push_back(std::to_string(stats.unwalkable_bytes) +
                    " bytes of activity left undecoded after records of unknown size");
  }
  if (stats.unresolved_names > 0) {
    lines.push_back(std::to_string(stats.unresolved_names) +
                    " kernel names unresolved (no string definition for their pointer)");
  }
  if (stats.backward_spans > 0) {
    lines.push_back(std::to_string(stats.backward_spans) +
                    " kernel, copy or memset records end before they start (drawn with no duration)");
  }
  for (const std::string& p : stats.problems) lines.push_back(p);
  return lines;
}

}  // namespace gpucap::builder
