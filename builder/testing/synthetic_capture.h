// Writes captures shaped like the recorder's, with CUPTI records laid out by
// gpucap's own layout tables, so tests and benchmarks exercise the builder
// without CUDA. Records go into the open chunk in call order; EndChunk hands
// the chunk to the real CaptureWriter. Small messages are written in call
// order relative to chunks (a string definition before the chunk using it).
#ifndef GPUCAP_BUILDER_TESTING_SYNTHETIC_CAPTURE_H_
#define GPUCAP_BUILDER_TESTING_SYNTHETIC_CAPTURE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpucap/format/capture_writer.h"
#include "gpucap/format/cupti_layout.h"
#include "gpucap/format/model.h"
#include "gpucap/status.h"

namespace gpucap::builder::testing {

struct KernelRecord {
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0;
  uint32_t device = 0, context = 1, stream = 7;
  uint64_t name_pointer = 0;
  int32_t grid_x = 1, grid_y = 1, grid_z = 1;
  int32_t block_x = 128, block_y = 1, block_z = 1;
  uint16_t registers_per_thread = 32;
  int32_t static_shared_memory = 0, dynamic_shared_memory = 0;
  uint64_t graph_node_id = 0;
  uint32_t graph_id = 0;
  uint64_t queued = 0;
};

struct ApiRecord {
  bool driver = false;
  uint32_t cbid = 211;  // cudaLaunchKernel
  uint64_t start = 0, end = 0;
  uint32_t pid = 4242, tid = 4242;
  uint32_t correlation = 0;
};

struct MemcpyRecord {
  bool peer = false;  // MEMCPY2
  uint8_t copy_kind = 8, src_kind = 3, dst_kind = 3;  // DtoD, Device -> Device
  uint64_t bytes = 0, start = 0, end = 0;
  uint32_t device = 0, context = 1, stream = 7, correlation = 0;
  uint32_t src_device = 0, dst_device = 0;
  uint64_t graph_node_id = 0;
};

struct MemsetRecord {
  uint64_t bytes = 0, start = 0, end = 0;
  uint32_t device = 0, context = 1, stream = 7, correlation = 0, value = 0;
  uint16_t memory_kind = 3;
};

struct SyncRecord {
  uint32_t type = 3;  // stream sync
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0, context = 1, stream = 7, cuda_event_id = 0;
  uint64_t event_sync_id = 0;
};

struct CudaEventRecord {
  uint32_t correlation = 0, context = 1, stream = 7, event_id = 0, device = 0;
  uint64_t device_timestamp = 0, event_sync_id = 0;
};

struct OverheadRecord {
  uint32_t overhead_kind = 1u << 16;  // buffer flush
  uint32_t object_kind = 2;           // thread
  uint32_t pid = 4242, tid = 4242;
  uint64_t start = 0, end = 0;
};

// GRAPH_TRACE (--cuda-graph-trace graph): one graph launch as a whole.
struct GraphTraceRecord {
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0;
  uint32_t device = 0, context = 1, stream = 7, graph_id = 0;
};

// A session and device like the H200 runs'.
format::SessionInfo DefaultSession();
format::DeviceInfo H200(uint32_t id);

struct SyntheticOptions {
  // The same calls give the same bytes: small-message batches are cut by
  // size and by order only, never by their age on the clock, and the
  // trailer leaves out the writer's queue depth (thread timing). Holds while
  // fewer than the writer's queue of messages (4,096) come between chunks.
  bool reproducible = false;
  // Nonzero: record as the flight recorder does, into a ring bounding its
  // span frames to this many bytes (frame_ring.h); Close writes the ring's
  // dump (trigger "test") to the path instead of a whole capture.
  uint64_t ring_bytes = 0;
};

class SyntheticCapture {
 public:
  // Starts the file with `session` and `devices`.
  static Result<std::unique_ptr<SyntheticCapture>> Create(const std::string& path,
                                                          const format::SessionInfo& session,
                                                          const std::vector<format::DeviceInfo>& devices,
                                                          const SyntheticOptions& options = {});
  ~SyntheticCapture();

  void Kernel(const KernelRecord& r);
  void Api(const ApiRecord& r);
  void Memcpy(const MemcpyRecord& r);
  void Memset(const MemsetRecord& r);
  void Sync(const SyncRecord& r);
  void CudaEvent(const CudaEventRecord& r);
  void Overhead(const OverheadRecord& r);
  void GraphTrace(const GraphTraceRecord& r);
  void ExternalCorrelation(uint32_t correlation, uint64_t external_id, uint32_t kind = 3);
  // A MARKER record; flags as CUpti_ActivityFlag (1: instant, 2: start, 4: end).
  void Marker(uint32_t flags, uint64_t ts, uint32_t id, uint32_t tid, uint64_t name_pointer,
              uint64_t domain_pointer = 0, uint32_t pid = 4242);
  // Any record: `size` bytes with `kind` in front, e.g. a kind gpucap does
  // not decode. `start` counts toward the chunk's time span when nonzero.
  void Raw(uint32_t kind, uint32_t size, uint64_t start = 0);
  // Records since the last EndChunk, in call order.
  size_t pending_records() const { return records_; }
  // Writes the open chunk (if any records) as one activity buffer.
  Status EndChunk();

  Status Message(format::SmallMessage m);
  Status String(uint64_t pointer, std::string text);
  Status Push(uint32_t tid, uint64_t ts, std::string name, uint64_t domain = 0);
  Status Pop(uint32_t tid, uint64_t ts, uint64_t domain = 0);
  Status StartRange(uint64_t id, uint32_t tid, uint64_t ts, std::string name);
  Status EndRange(uint64_t id, uint32_t tid, uint64_t ts);

  // Ends the open chunk and closes the file cleanly, the trailer saying why
  // the recording stopped.
  Status Close(std::string stop_reason = {});

 private:
  SyntheticCapture() = default;
  uint8_t* Append(uint32_t kind);
  void See(uint64_t start, uint64_t end);

  std::unique_ptr<format::CaptureWriter> writer_;
  bool ring_ = false;
  const format::LayoutTable* layouts_ = nullptr;
  std::vector<uint64_t> chunk_;  // 8-byte aligned, like CUPTI's buffers
  size_t used_ = 0;
  size_t records_ = 0;
  format::ChunkInfo info_;
};

}  // namespace gpucap::builder::testing

#endif  // GPUCAP_BUILDER_TESTING_SYNTHETIC_CAPTURE_H_
