#include "synthetic_capture.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "gpucap/format/activity_kind.h"
#include "gpucap/format/sink.h"

namespace gpucap::builder::testing {

using format::ActivityKind;
using format::Field;
using format::WriteField;

format::SessionInfo DefaultSession() {
  format::SessionInfo s;
  s.tool_version = "gpucap-synthetic";
  s.host = "h200-test";
  s.pid = 4242;
  s.process_name = "python3";
  s.command_line = {"python3", "train.py"};
  s.start_realtime_ns = 1'790'857'026'000'000'000;
  s.start_cupti_ns = 1'790'857'026'000'000'000;
  s.cupti_runtime_version = 130001;
  s.cupti_header_version = 130001;
  s.cuda_driver_version = 13000;
  s.cuda_runtime_version = 13000;
  return s;
}

format::DeviceInfo H200(uint32_t id) {
  format::DeviceInfo d;
  d.id = id;
  d.name = "NVIDIA H200";
  d.total_global_mem = 150109880320ull;
  d.compute_major = 9;
  d.compute_minor = 0;
  d.max_threads_per_block = 1024;
  d.max_threads_per_multiprocessor = 2048;
  d.regs_per_block = 65536;
  d.regs_per_multiprocessor = 65536;
  d.warp_size = 32;
  d.shared_mem_per_block = 49152;
  d.shared_mem_per_multiprocessor = 233472;
  d.shared_mem_per_block_optin = 232448;
  d.num_sms = 132;
  return d;
}

Result<std::unique_ptr<SyntheticCapture>> SyntheticCapture::Create(
    const std::string& path, const format::SessionInfo& session,
    const std::vector<format::DeviceInfo>& devices, const SyntheticOptions& options) {
  format::WriterOptions o;
  o.queue_capacity = 4096;
  o.created_realtime_ns = session.start_realtime_ns;
  if (options.reproducible) {
    o.batch_max_age_ms = UINT32_MAX;
    o.own_queue_high_water = false;
  }
  auto writer = [&]() -> Result<std::unique_ptr<format::CaptureWriter>> {
    if (options.ring_bytes != 0) {
      format::DumpSinkFactory dump = [path](uint64_t n) -> Result<std::unique_ptr<format::Sink>> {
        if (n != 1) return Status::InvalidArgument("a synthetic ring is dumped once");
        return format::OpenFileSink(path);
      };
      return format::CaptureWriter::StartRing(std::move(dump), {options.ring_bytes, 0}, o);
    }
    auto sink = format::OpenFileSink(path);
    if (!sink.ok()) return sink.status();
    return format::CaptureWriter::Start(std::move(sink).value(), o);
  }();
  if (!writer.ok()) return writer.status();
  std::unique_ptr<SyntheticCapture> c(new SyntheticCapture());
  c->writer_ = std::move(writer).value();
  c->ring_ = options.ring_bytes != 0;
  c->layouts_ = format::LayoutForVersion(130001);
  c->writer_->Submit(session);
  for (const format::DeviceInfo& d : devices) c->writer_->Submit(d);
  return c;
}

SyntheticCapture::~SyntheticCapture() = default;

uint8_t* SyntheticCapture::Append(uint32_t kind) {
  const format::RecordLayout* l = layouts_->Find(kind);
  uint32_t size = l->size;
  if (std::none_of(info_.record_sizes.begin(), info_.record_sizes.end(),
                   [&](const format::KindSize& k) { return k.kind == kind; })) {
    info_.record_sizes.push_back({kind, size});
  }
  auto count = std::find_if(info_.kind_counts.begin(), info_.kind_counts.end(),
                            [&](const format::KindCount& k) { return k.kind == kind; });
  if (count == info_.kind_counts.end()) {
    info_.kind_counts.push_back({kind, 1});
  } else {
    count->count++;
  }
  if ((used_ + size) / 8 > chunk_.size()) chunk_.resize(std::max<size_t>((used_ + size) / 8, chunk_.size() * 2));
  uint8_t* rec = reinterpret_cast<uint8_t*>(chunk_.data()) + used_;
  std::memset(rec, 0, size);
  std::memcpy(rec, &kind, 4);
  used_ += size;
  records_++;
  return rec;
}

void SyntheticCapture::See(uint64_t start, uint64_t end) {
  if (start != 0) {
    if (info_.min_start_ns == 0 || start < info_.min_start_ns) info_.min_start_ns = start;
    info_.max_start_ns = std::max(info_.max_start_ns, start);
  }
  info_.max_end_ns = std::max(info_.max_end_ns, end);
}

#define GPUCAP_SET(field, value) WriteField(rec, l.at(Field::field), static_cast<uint64_t>(value))

void SyntheticCapture::Kernel(const KernelRecord& r) {
  uint32_t kind = static_cast<uint32_t>(ActivityKind::kConcurrentKernel);
  uint8_t* rec = Append(kind);
  const format::RecordLayout& l = *layouts_->Find(kind);
  GPUCAP_SET(kStart, r.start);
  GPUCAP_SET(kEnd, r.end);
  GPUCAP_SET(kCompleted, r.end);
  GPUCAP_SET(kQueued, r.queued);
  GPUCAP_SET(kCorrelationId, r.correlation);
  GPUCAP_SET(kDeviceId, r.device);
  GPUCAP_SET(kContextId, r.context);
  GPUCAP_SET(kStreamId, r.stream);
  GPUCAP_SET(kName, r.name_pointer);
  GPUCAP_SET(kGridX, static_cast<uint32_t>(r.grid_x));
  GPUCAP_SET(kGridY, static_cast<uint32_t>(r.grid_y));
  GPUCAP_SET(kGridZ, static_cast<uint32_t>(r.grid_z));
  GPUCAP_SET(kBlockX, static_cast<uint32_t>(r.block_x));
  GPUCAP_SET(kBlockY, static_cast<uint32_t>(r.block_y));
  GPUCAP_SET(kBlockZ, static_cast<uint32_t>(r.block_z));
  GPUCAP_SET(kRegistersPerThread, r.registers_per_thread);
  GPUCAP_SET(kStaticSharedMemory, static_cast<uint32_t>(r.static_shared_memory));
  GPUCAP_SET(kDynamicSharedMemory, static_cast<uint32_t>(r.dynamic_shared_memory));
  GPUCAP_SET(kGraphNodeId, r.graph_node_id);
  GPUCAP_SET(kGraphId, r.graph_id);
  See(r.start, r.end);
}

void SyntheticCapture::Api(const ApiRecord& r) {
  uint32_t kind = static_cast<uint32_t>(r.driver ? ActivityKind::kDriver : ActivityKind::kRuntime);
  uint8_t* rec = Append(kind);
  const format::RecordLayout& l = *layouts_->Find(kind);
  GPUCAP_SET(kCbid, r.cbid);
  GPUCAP_SET(kStart, r.start);
  GPUCAP_SET(kEnd, r.end);
  GPUCAP_SET(kProcessId, r.pid);
  GPUCAP_SET(kThreadId, r.tid);
  GPUCAP_SET(kCorrelationId, r.correlation);
  See(r.start, r.end);
}

void SyntheticCapture::Memcpy(const MemcpyRecord& r) {
  uint32_t kind = static_cast<uint32_t>(r.peer ? ActivityKind::kMemcpy2 : ActivityKind::kMemcpy);
  uint8_t* rec = Append(kind);
  const format::RecordLayout& l = *layouts_->Find(kind);
  GPUCAP_SET(kCopyKind, r.copy_kind);
  GPUCAP_SET(kSrcKind, r.src_kind);
  GPUCAP_SET(kDstKind, r.dst_kind);
  GPUCAP_SET(kBytes, r.bytes);
  GPUCAP_SET(kStart, r.start);
  GPUCAP_SET(kEnd, r.end);
  GPUCAP_SET(kDeviceId, r.device);
  GPUCAP_SET(kContextId, r.context);
  GPUCAP_SET(kStreamId, r.stream);
  GPUCAP_SET(kCorrelationId, r.correlation);
  GPUCAP_SET(kGraphNodeId, r.graph_node_id);
  if (r.peer) {
    GPUCAP_SET(kSrcDeviceId, r.src_device);
    GPUCAP_SET(kDstDeviceId, r.dst_device);
  }
  See(r.start, r.end);
}

void SyntheticCapture::Memset(const MemsetRecord& r) {
  uint32_t kind = static_cast<uint32_t>(ActivityKind::kMemset);
  uint8_t* rec = Append(kind);
  const format::RecordLayout& l = *layouts_->Find(kind);
  GPUCAP_SET(kValue, r.value);
  GPUCAP_SET(kBytes, r.bytes);
  GPUCAP_SET(kStart, r.start);
  GPUCAP_SET(kEnd, r.end);
  GPUCAP_SET(kDeviceId, r.device);
  GPUCAP_SET(kContextId, r.context);
  GPUCAP_SET(kStreamId, r.stream);
  GPUCAP_SET(kCorrelationId, r.correlation);
  GPUCAP_SET(kMemoryKind, r.memory_kind);
  See(r.start, r.end);
}

void SyntheticCapture::GraphTrace(const GraphTraceRecord& r) {
  uint32_t kind = static_cast<uint32_t>(ActivityKind::kGraphTrace);
  uint8_t* rec = Append(kind);
  const format::RecordLayout& l = *layouts_->Find(kind);
  GPUCAP_SET(kCorrelationId, r.correlation);
  GPUCAP_SET(kStart, r.start);
  GPUCAP_SET(kEnd, r.end);
  GPUCAP_SET(kDeviceId, r.device);
  GPUCAP_SET(kGraphId, r.graph_id);
  GPUCAP_SET(kContextId, r.context);
  GPUCAP_SET(kStreamId, r.stream);
  GPUCAP_SET(kEndDeviceId, r.device);
  GPUCAP_SET(kEndContextId, r.context);
  See(r.start, r.end);
}

void SyntheticCapture::Sync(const SyncRecord& r) {
  uint32_t kind = static_cast<uint32_t>(ActivityKind::kSynchronization);
  uint8_t* rec = Append(kind);
  const format::RecordLayout& l = *layouts_->Find(kind);
  GPUCAP_SET(kSyncType, r.type);
  GPUCAP_SET(kStart, r.start);
  GPUCAP_SET(kEnd, r.end);
  GPUCAP_SET(kCorrelationId, r.correlation);
  GPUCAP_SET(kContextId, r.context);
  GPUCAP_SET(kStreamId, r.stream);
  GPUCAP_SET(kCudaEventId, r.cuda_event_id);
  GPUCAP_SET(kCudaEventSyncId, r.event_sync_id);
  See(r.start, r.end);
}

void SyntheticCapture::CudaEvent(const CudaEventRecord& r) {
  uint32_t kind = static_cast<uint32_t>(ActivityKind::kCudaEvent);
  uint8_t* rec = Append(kind);
  const format::RecordLayout& l = *layouts_->Find(kind);
  GPUCAP_SET(kCorrelationId, r.correlation);
  GPUCAP_SET(kContextId, r.context);
  GPUCAP_SET(kStreamId, r.stream);
  GPUCAP_SET(kCudaEventId, r.event_id);
  GPUCAP_SET(kDeviceId, r.device);
  GPUCAP_SET(kDeviceTimestamp, r.device_timestamp);
  GPUCAP_SET(kCudaEventSyncId, r.event_sync_id);
}

void SyntheticCapture::Overhead(const OverheadRecord& r) {
  uint32_t kind = static_cast<uint32_t>(ActivityKind::kOverhead);
  uint8_t* rec = Append(kind);
  const format::RecordLayout& l = *layouts_->Find(kind);
  GPUCAP_SET(kOverheadKind, r.overhead_kind);
  GPUCAP_SET(kObjectKind, r.object_kind);
  GPUCAP_SET(kObjectProcessId, r.pid);
  GPUCAP_SET(kObjectThreadId, r.tid);
  GPUCAP_SET(kStart, r.start);
  GPUCAP_SET(kEnd, r.end);
  See(r.start, r.end);
}

void SyntheticCapture::ExternalCorrelation(uint32_t correlation, uint64_t external_id, uint32_t external_kind) {
  uint32_t kind = static_cast<uint32_t>(ActivityKind::kExternalCorrelation);
  uint8_t* rec = Append(kind);
  const format::RecordLayout& l = *layouts_->Find(kind);
  GPUCAP_SET(kExternalKind, external_kind);
  GPUCAP_SET(kExternalId, external_id);
  GPUCAP_SET(kCorrelationId, correlation);
}

void SyntheticCapture::Marker(uint32_t flags, uint64_t ts, uint32_t id, uint32_t tid, uint64_t name_pointer,
                              uint64_t domain_pointer, uint32_t pid) {
  uint32_t kind = static_cast<uint32_t>(ActivityKind::kMarker);
  uint8_t* rec = Append(kind);
  const format::RecordLayout& l = *layouts_->Find(kind);
  GPUCAP_SET(kFlags, flags);
  GPUCAP_SET(kTimestamp, ts);
  GPUCAP_SET(kMarkerId, id);
  GPUCAP_SET(kObjectKind, 2);  // thread
  GPUCAP_SET(kObjectProcessId, pid);
  GPUCAP_SET(kObjectThreadId, tid);
  GPUCAP_SET(kName, name_pointer);
  GPUCAP_SET(kDomain, domain_pointer);
  See(ts, ts);
}

#undef GPUCAP_SET

void SyntheticCapture::Raw(uint32_t kind, uint32_t size, uint64_t start) {
  if (std::none_of(info_.record_sizes.begin(), info_.record_sizes.end(),
                   [&](const format::KindSize& k) { return k.kind == kind; })) {
    info_.record_sizes.push_back({kind, size});
  }
  info_.kind_counts.push_back({kind, 1});
  if ((used_ + size + 7) / 8 > chunk_.size()) chunk_.resize(std::max<size_t>((used_ + size + 7) / 8, chunk_.size() * 2));
  uint8_t* rec = reinterpret_cast<uint8_t*>(chunk_.data()) + used_;
  std::memset(rec, 0, size);
  std::memcpy(rec, &kind, 4);
  used_ += size;
  records_++;
  See(start, start);
}

Status SyntheticCapture::EndChunk() {
  if (records_ == 0) return Status::Ok();
  // The writer copies (compresses) the bytes before release runs; wait for
  // that so the buffer can be reused, as the recorder's pool does.
  struct Done {
    std::mutex mu;
    std::condition_variable cv;
    bool released = false;
  };
  auto done = std::make_shared<Done>();
  format::ActivityBuffer b;
  b.data = reinterpret_cast<const uint8_t*>(chunk_.data());
  b.size = used_;
  b.info = info_;
  b.info.raw_size = static_cast<uint32_t>(used_);
  b.info.record_count = static_cast<uint32_t>(records_);
  b.release = [done] {
    std::lock_guard<std::mutex> lock(done->mu);
    done->released = true;
    done->cv.notify_all();
  };
  bool accepted = writer_->SubmitActivity(std::move(b));
  {
    std::unique_lock<std::mutex> lock(done->mu);
    done->cv.wait(lock, [&] { return done->released; });
  }
  used_ = 0;
  records_ = 0;
  info_ = format::ChunkInfo();
  if (!accepted) return Status::ResourceExhausted("synthetic capture: the writer dropped a chunk");
  return writer_->error();
}

Status SyntheticCapture::Message(format::SmallMessage m) {
  // The writer drops what its queue cannot hold (a recorder never waits);
  // a maker of test captures can: on a full queue, wait for the writer to
  // drain it and submit again.
  format::SmallMessage again = m;
  if (writer_->Submit(std::move(m))) return Status::Ok();
  writer_->Flush(std::chrono::seconds(30));
  if (writer_->Submit(std::move(again))) return Status::Ok();
  return Status::ResourceExhausted("synthetic capture: the writer dropped a message");
}

Status SyntheticCapture::String(uint64_t pointer, std::string text) {
  return Message(format::StringDef{pointer, std::move(text)});
}

Status SyntheticCapture::Push(uint32_t tid, uint64_t ts, std::string name, uint64_t domain) {
  format::RangeEvent e;
  e.kind = format::RangeKind::kPush;
  e.timestamp_ns = ts;
  e.os_tid = tid;
  e.name = std::move(name);
  e.domain = domain;
  return Message(e);
}

Status SyntheticCapture::Pop(uint32_t tid, uint64_t ts, uint64_t domain) {
  format::RangeEvent e;
  e.kind = format::RangeKind::kPop;
  e.timestamp_ns = ts;
  e.os_tid = tid;
  e.domain = domain;
  return Message(e);
}

Status SyntheticCapture::StartRange(uint64_t id, uint32_t tid, uint64_t ts, std::string name) {
  format::RangeEvent e;
  e.kind = format::RangeKind::kStart;
  e.id = id;
  e.timestamp_ns = ts;
  e.os_tid = tid;
  e.name = std::move(name);
  return Message(e);
}

Status SyntheticCapture::EndRange(uint64_t id, uint32_t tid, uint64_t ts) {
  format::RangeEvent e;
  e.kind = format::RangeKind::kEnd;
  e.id = id;
  e.timestamp_ns = ts;
  e.os_tid = tid;
  return Message(e);
}

Status SyntheticCapture::Close(std::string stop_reason) {
  GPUCAP_RETURN_IF_ERROR(EndChunk());
  format::Trailer t;
  t.clean_shutdown = true;
  t.stop_reason = std::move(stop_reason);
  if (ring_) {
    // The dump is written before the close, which writes no file.
    if (!writer_->RequestDump("test", t)) return Status::IoError("the ring's dump was not taken");
    GPUCAP_RETURN_IF_ERROR(writer_->Close({}, std::chrono::seconds(60)));
    if (writer_->counters().dumps_written != 1) return Status::IoError(writer_->last_dump());
    return Status::Ok();
  }
  return writer_->Close(std::move(t), std::chrono::seconds(60));
}

}  // namespace gpucap::builder::testing
