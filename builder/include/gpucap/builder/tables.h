// Decoded CUPTI records as columnar tables, one per record family. A table
// is a struct of equally long vectors (row i is element i of each), so the
// join reads only the columns it needs and a window copies rows cheaply.
// Every timestamp is CUPTI ns, as recorded.
#ifndef GPUCAP_BUILDER_TABLES_H_
#define GPUCAP_BUILDER_TABLES_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace gpucap::builder {

// An index into Capture::strings, or kNoString.
inline constexpr uint32_t kNoString = std::numeric_limits<uint32_t>::max();

#define GPUCAP_COLUMN(type, name) std::vector<type> name;
#define GPUCAP_COLUMN_RESERVE(type, name) name.reserve(n);
#define GPUCAP_COLUMN_COPY(type, name) name.push_back(from.name[row]);
#define GPUCAP_COLUMN_CLEAR(type, name) name.clear();
#define GPUCAP_COLUMN_RESIZE(type, name) name.resize(n);
#define GPUCAP_COLUMN_BYTES(type, name) total += name.capacity() * sizeof(type);
#define GPUCAP_TABLE(Table, COLUMNS, first)                                        \
  COLUMNS(GPUCAP_COLUMN)                                                           \
  size_t size() const { return first.size(); }                                     \
  bool empty() const { return first.empty(); }                                     \
  void reserve(size_t n) { COLUMNS(GPUCAP_COLUMN_RESERVE) }                        \
  void clear() { COLUMNS(GPUCAP_COLUMN_CLEAR) }                                    \
  void resize(size_t n) { COLUMNS(GPUCAP_COLUMN_RESIZE) }                          \
  /* Appends row `row` of `from`. */                                               \
  void CopyRow(const Table& from, size_t row) { COLUMNS(GPUCAP_COLUMN_COPY) }      \
  size_t memory_bytes() const {                                                         \
    size_t total = 0;                                                              \
    COLUMNS(GPUCAP_COLUMN_BYTES)                                                   \
    return total;                                                                  \
  }

// CONCURRENT_KERNEL (and KERNEL). The join columns are what a window's join
// reads before it writes slices; the argument columns only go into a
// kernel's arguments as it is written, so a large window may drop them after
// decoding and decode them again chunk by chunk (DecodeChunk's
// kNoKernelArgs, kernel_rows.h).
#define GPUCAP_KERNEL_JOIN_COLUMNS(X)                                             \
  X(uint64_t, start) X(uint64_t, end) X(uint64_t, graph_node_id)                 \
  X(uint32_t, correlation) X(uint32_t, device) X(uint32_t, context) X(uint32_t, stream)
#define GPUCAP_KERNEL_ARG_COLUMNS(X)                                              \
  X(uint64_t, queued) X(uint64_t, name_pointer) X(uint32_t, name) X(uint32_t, graph_id) \
  X(int32_t, grid_x) X(int32_t, grid_y) X(int32_t, grid_z)                        \
  X(int32_t, block_x) X(int32_t, block_y) X(int32_t, block_z)                     \
  X(int32_t, static_shared_memory) X(int32_t, dynamic_shared_memory)               \
  X(uint16_t, registers_per_thread) X(uint8_t, launch_type)                       \
  X(uint32_t, channel_id) X(uint8_t, channel_type)
#define GPUCAP_KERNEL_COLUMNS(X) GPUCAP_KERNEL_JOIN_COLUMNS(X) GPUCAP_KERNEL_ARG_COLUMNS(X)
#define GPUCAP_COLUMN_DROP(type, name) std::vector<type>().swap(name);
struct KernelTable {
  GPUCAP_TABLE(KernelTable, GPUCAP_KERNEL_COLUMNS, start)
  // Frees the argument columns (64 of a row's 104 bytes); the join columns stay.
  void DropArgs() { GPUCAP_KERNEL_ARG_COLUMNS(GPUCAP_COLUMN_DROP) }
  // Whether the argument columns are there (not dropped).
  bool has_args() const { return queued.size() == start.size(); }
};

// MEMCPY and MEMCPY2 (peer copies: `peer` set, source and destination ids).
#define GPUCAP_MEMCPY_COLUMNS(X)                                                  \
  X(uint64_t, start) X(uint64_t, end) X(uint64_t, bytes) X(uint64_t, graph_node_id) \
  X(uint32_t, correlation) X(uint32_t, device) X(uint32_t, context) X(uint32_t, stream) \
  X(uint32_t, graph_id) X(uint32_t, src_device) X(uint32_t, src_context)           \
  X(uint32_t, dst_device) X(uint32_t, dst_context)                                 \
  X(uint8_t, copy_kind) X(uint8_t, src_kind) X(uint8_t, dst_kind) X(uint8_t, peer)
struct MemcpyTable {
  GPUCAP_TABLE(MemcpyTable, GPUCAP_MEMCPY_COLUMNS, start)
};

#define GPUCAP_MEMSET_COLUMNS(X)                                                  \
  X(uint64_t, start) X(uint64_t, end) X(uint64_t, bytes) X(uint64_t, graph_node_id) \
  X(uint32_t, correlation) X(uint32_t, device) X(uint32_t, context) X(uint32_t, stream) \
  X(uint32_t, graph_id) X(uint32_t, value) X(uint16_t, memory_kind)
struct MemsetTable {
  GPUCAP_TABLE(MemsetTable, GPUCAP_MEMSET_COLUMNS, start)
};

enum class ApiDomain : uint8_t { kRuntime = 0, kDriver = 1 };

// RUNTIME and DRIVER: one API call on a CPU thread (tid is the OS tid).
#define GPUCAP_API_COLUMNS(X)                                                     \
  X(uint64_t, start) X(uint64_t, end) X(uint32_t, cbid) X(uint32_t, pid)           \
  X(uint32_t, tid) X(uint32_t, correlation) X(uint32_t, return_value) X(ApiDomain, domain)
struct ApiTable {
  GPUCAP_TABLE(ApiTable, GPUCAP_API_COLUMNS, start)
};

#define GPUCAP_EXTERNAL_COLUMNS(X) \
  X(uint64_t, external_id) X(uint32_t, correlation) X(uint32_t, external_kind)
struct ExternalCorrelationTable {
  GPUCAP_TABLE(ExternalCorrelationTable, GPUCAP_EXTERNAL_COLUMNS, external_id)
};

// OVERHEAD. object_a/object_b: process and thread id for thread objects,
// device and context id for device objects.
#define GPUCAP_OVERHEAD_COLUMNS(X)                                                \
  X(uint64_t, start) X(uint64_t, end) X(uint32_t, overhead_kind) X(uint32_t, object_kind) \
  X(uint32_t, object_a) X(uint32_t, object_b) X(uint32_t, correlation)
struct OverheadTable {
  GPUCAP_TABLE(OverheadTable, GPUCAP_OVERHEAD_COLUMNS, start)
};

// SYNCHRONIZATION. stream is 0xffffffff for context and device syncs.
#define GPUCAP_SYNC_COLUMNS(X)                                                    \
  X(uint64_t, start) X(uint64_t, end) X(uint64_t, event_sync_id) X(uint32_t, type) \
  X(uint32_t, correlation) X(uint32_t, context) X(uint32_t, stream) X(uint32_t, cuda_event_id)
struct SyncTable {
  GPUCAP_TABLE(SyncTable, GPUCAP_SYNC_COLUMNS, start)
};

// CUDA_EVENT: an event record as the GPU saw it.
#define GPUCAP_CUDA_EVENT_COLUMNS(X)                                              \
  X(uint64_t, device_timestamp) X(uint64_t, event_sync_id) X(uint32_t, correlation) \
  X(uint32_t, context) X(uint32_t, stream) X(uint32_t, event_id) X(uint32_t, device)
struct CudaEventTable {
  GPUCAP_TABLE(CudaEventTable, GPUCAP_CUDA_EVENT_COLUMNS, device_timestamp)
};

// MARKER (NVTX through CUPTI). name/domain are string indices.
#define GPUCAP_MARKER_COLUMNS(X)                                                  \
  X(uint64_t, timestamp) X(uint32_t, flags) X(uint32_t, id) X(uint32_t, object_kind) \
  X(uint32_t, pid) X(uint32_t, tid) X(uint32_t, name) X(uint32_t, domain)
struct MarkerTable {
  GPUCAP_TABLE(MarkerTable, GPUCAP_MARKER_COLUMNS, timestamp)
};

// ENVIRONMENT: one sample of one kind (speed, temperature, power, cooling).
#define GPUCAP_ENVIRONMENT_COLUMNS(X)                                             \
  X(uint64_t, timestamp) X(uint32_t, device) X(uint32_t, kind) X(uint32_t, sm_clock) \
  X(uint32_t, memory_clock) X(uint32_t, temperature) X(uint32_t, power)            \
  X(uint32_t, power_limit) X(uint32_t, fan_speed)
struct EnvironmentTable {
  GPUCAP_TABLE(EnvironmentTable, GPUCAP_ENVIRONMENT_COLUMNS, timestamp)
};

// GRAPH_TRACE (--cuda-graph-trace graph): one row per graph launch, in
// place of its nodes' kernel, copy and set rows. graph_id is the id CUPTI
// gave the graph that ran (the executable graph's, as in the node rows).
#define GPUCAP_GRAPH_TRACE_COLUMNS(X)                                             \
  X(uint64_t, start) X(uint64_t, end) X(uint32_t, correlation) X(uint32_t, device) \
  X(uint32_t, context) X(uint32_t, stream) X(uint32_t, graph_id)                  \
  X(uint32_t, end_device) X(uint32_t, end_context)
struct GraphTraceTable {
  GPUCAP_TABLE(GraphTraceTable, GPUCAP_GRAPH_TRACE_COLUMNS, start)
};

// Every family, as decoded from one or more chunks.
struct ActivityTables {
  KernelTable kernels;
  MemcpyTable memcpys;
  MemsetTable memsets;
  ApiTable apis;
  ExternalCorrelationTable externals;
  OverheadTable overheads;
  SyncTable syncs;
  CudaEventTable cuda_events;
  MarkerTable markers;
  EnvironmentTable environment;
  GraphTraceTable graph_traces;

  size_t rows() const {
    return kernels.size() + memcpys.size() + memsets.size() + apis.size() + externals.size() +
           overheads.size() + syncs.size() + cuda_events.size() + markers.size() +
           environment.size() + graph_traces.size();
  }
  size_t memory_bytes() const {
    return kernels.memory_bytes() + memcpys.memory_bytes() + memsets.memory_bytes() +
           apis.memory_bytes() + externals.memory_bytes() + overheads.memory_bytes() +
           syncs.memory_bytes() + cuda_events.memory_bytes() + markers.memory_bytes() +
           environment.memory_bytes() + graph_traces.memory_bytes();
  }
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_TABLES_H_
